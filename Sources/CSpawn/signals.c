/* signals.c: the signals taskrun handles, blocked from the start and turned into bytes on a pipe. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const int g_handled[] = { SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGCHLD };
static int g_fd = -1;

static void handled_set(sigset_t *set) {
  sigemptyset(set);
  for (unsigned i = 0; i < sizeof g_handled / sizeof g_handled[0]; i++) sigaddset(set, g_handled[i]);
}

void cs_block_signals(void) {
  sigset_t set;
  handled_set(&set);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void on_signal(int sig) {
  int saved = errno;
  unsigned char byte = (unsigned char)sig;
  ssize_t n = write(g_fd, &byte, 1);  /* signals do not queue: the pipe never fills */
  (void)n;
  errno = saved;
}

/* SIGCHLD is not handled on whichever thread the kernel wakes for it (one per command's
   exit): it stays blocked, and the scheduler's thread finds it on a signalfd it polls anyway. */
int cs_handle_signals(int fd) {
  g_fd = fd;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  for (unsigned i = 0; i < sizeof g_handled / sizeof g_handled[0]; i++)
    if (g_handled[i] != SIGCHLD && sigaction(g_handled[i], &action, NULL) != 0) return -1;
  sigset_t set;
  handled_set(&set);
  sigdelset(&set, SIGCHLD);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  return pthread_sigmask(SIG_BLOCK, &set, NULL);  /* also where the preinit did not block it */
}

int cs_child_signals(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int cs_take_child_signals(int fd) {
  struct signalfd_siginfo info[8];  /* a standard signal is pending once at most: one read takes it */
  return read(fd, info, sizeof info) > 0;
}

/* A program named taskrun blocks them before any library is initialized (the executable's
   preinit array runs first; the Swift runtime's and Foundation's initializers take
   milliseconds): a Ctrl-C in its first milliseconds then waits for the handler instead of
   killing it by the default action. Only the dynamic loader's own work comes before. */
static void block_early(int argc, char **argv, char **envp) {
  (void)envp;
  if (argc < 1 || argv[0] == NULL) return;
  const char *slash = strrchr(argv[0], '/');
  if (strcmp(slash ? slash + 1 : argv[0], "taskrun") == 0) cs_block_signals();
}
__attribute__((section(".preinit_array"), used))
static void (*const g_block_early)(int, char **, char **) = block_early;
