/* foreground.c: taskrun takes the terminal's foreground back after an interactive command. */
#include "CSpawn.h"
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <unistd.h>

int cs_take_terminal(int fd) {
  /* taskrun is in the background now: changing the foreground would stop it with SIGTTOU,
     unless this thread blocks the signal for the call. */
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  int rc = tcsetpgrp(fd, getpgrp()) == 0 ? 0 : errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}
