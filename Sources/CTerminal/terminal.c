/* terminal.c: terminal width, and an async-signal-safe cursor restore on crashes. */
#include "CTerminal.h"
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int ct_columns(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

int ct_rows(int fd) {
  struct winsize ws;
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_row;
}

static const char g_restore[] = "\033[?25h";
static struct sigaction g_previous[32];
static const int g_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };

static void on_crash(int sig, siginfo_t *info, void *context) {
  ssize_t n = write(1, g_restore, sizeof g_restore - 1);
  (void)n;
  struct sigaction *previous = &g_previous[sig];
  if (previous->sa_flags & SA_SIGINFO) {
    if (previous->sa_sigaction) { previous->sa_sigaction(sig, info, context); return; }
  } else if (previous->sa_handler != SIG_DFL && previous->sa_handler != SIG_IGN) {
    previous->sa_handler(sig);
    return;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void ct_show_cursor_on_crash(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_crash;
  action.sa_flags = SA_SIGINFO | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (unsigned i = 0; i < sizeof g_signals / sizeof g_signals[0]; i++)
    sigaction(g_signals[i], &action, &g_previous[g_signals[i]]);
}
