/* foreground.c: taskrun takes the terminal's foreground back from an interactive command, and gives it again after fg. */
#include "CSpawn.h"
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <unistd.h>

static int set_foreground(int fd, pid_t group) {
  /* taskrun may be in the background: changing the foreground would stop it with SIGTTOU,
     unless this thread blocks the signal for the call. */
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  int rc = tcsetpgrp(fd, group) == 0 ? 0 : errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

int cs_take_terminal(int fd) { return set_foreground(fd, getpgrp()); }

int cs_give_terminal(int fd, pid_t group) {
  if (tcgetpgrp(fd) != getpgrp()) return EPERM;  /* not taskrun's to give (bg after Ctrl-Z) */
  return set_foreground(fd, group);
}
