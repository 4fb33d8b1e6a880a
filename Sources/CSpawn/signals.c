/* signals.c: the signals taskrun handles, blocked from the start and turned into bytes on a pipe. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

/* Not SIGCHLD: commands' exits come from pidfds and their stops are looked for by the process
   runner, so SIGCHLD keeps its default (ignored, never blocked) and wakes no thread, and
   what os.execute or io.popen start inherits no blocked signal. */
static const int g_handled[] = { SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT };
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

int cs_handle_signals(int fd) {
  g_fd = fd;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigfillset(&action.sa_mask);
  for (unsigned i = 0; i < sizeof g_handled / sizeof g_handled[0]; i++)
    if (sigaction(g_handled[i], &action, NULL) != 0) return -1;
  sigset_t set;
  handled_set(&set);
  return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
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

void cs_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
