/* foreground.c: taskrun takes the terminal's foreground back from an interactive command, and gives it again after fg. */
#include "CSpawn.h"
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <termios.h>
#include <unistd.h>

/* Changes the foreground of `fd` to `group`, with its modes `modes` first (NULL: left as they
   are). SIGTTOU is blocked for the calls, as shells do: the callers have made sure the
   terminal is taskrun's to change (a background process never calls this). */
static int set_foreground(int fd, pid_t group, const struct termios *modes) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  pthread_sigmask(SIG_BLOCK, &ttou, &old);
  if (modes) (void)tcsetattr(fd, TCSADRAIN, modes);
  int rc = tcsetpgrp(fd, group) == 0 ? 0 : errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

int cs_hand_terminal(int fd, struct cs_terminal *t) {
  t->fd = -1;
  t->has_modes = 0;
  t->has_job_modes = 0;
  if (!isatty(fd)) return ENOTTY;
  pid_t own = getpgrp();
  if (tcgetpgrp(fd) != own) return EPERM;  /* in the background: nothing to hand over */
  t->fd = fd;
  t->previous = own;
  t->has_modes = tcgetattr(fd, &t->modes) == 0;
  return 0;
}

int cs_take_terminal(struct cs_terminal *t, pid_t group, int keep_job_modes) {
  if (t->fd < 0) return EPERM;
  pid_t now = tcgetpgrp(t->fd);
  /* Only from the command's group (group 0: one that failed to start, whose id is unknown):
     if anything else has the foreground, taskrun was put in the background meanwhile (Ctrl-Z
     then bg) and the terminal is its shell's. */
  if (now < 0 || now == t->previous || (group > 0 && now != group)) return EPERM;
  if (keep_job_modes) t->has_job_modes = tcgetattr(t->fd, &t->job_modes) == 0;
  return set_foreground(t->fd, t->previous, t->has_modes ? &t->modes : NULL);
}

int cs_give_terminal(struct cs_terminal *t, pid_t group) {
  if (t->fd < 0 || tcgetpgrp(t->fd) != getpgrp()) return EPERM;  /* not taskrun's to give (bg after Ctrl-Z) */
  return set_foreground(t->fd, group, t->has_job_modes ? &t->job_modes : NULL);
}
