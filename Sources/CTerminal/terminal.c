/* terminal.c: terminal size, stdout buffering for frames, and a cursor restore on crashes. */
#include "CTerminal.h"
#include <stdio.h>
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

static char g_frame[1 << 16];

void ct_buffer_stdout(int whole) {
  fflush(stdout);
  setvbuf(stdout, g_frame, whole ? _IOFBF : _IOLBF, sizeof g_frame);
}

void ct_write_stdout(const char *bytes, long count) {
  if (count > 0) fwrite(bytes, 1, (size_t)count, stdout);
}

void ct_write_seconds(double seconds) {
  if (!(seconds >= 0 && seconds < 1e15)) { printf("%.2f", seconds); return; }
  unsigned long long hundredths = (unsigned long long)(seconds * 100 + 0.5);
  char text[32], *end = text + sizeof text, *p = end;
  *--p = (char)('0' + hundredths % 10);
  *--p = (char)('0' + hundredths / 10 % 10);
  *--p = '.';
  unsigned long long whole = hundredths / 100;
  do { *--p = (char)('0' + whole % 10); whole /= 10; } while (whole > 0);
  fwrite(p, 1, (size_t)(end - p), stdout);
}

void ct_flush_stdout_if_free(void) {
  if (ftrylockfile(stdout) != 0) return;
  fflush_unlocked(stdout);
  funlockfile(stdout);
}
