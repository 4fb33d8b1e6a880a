/* terminal.c: terminal size, stdout buffering for frames, and a cursor restore on crashes. */
#define _GNU_SOURCE
#include "CTerminal.h"
#include <errno.h>
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
static FILE *g_terminal = NULL;  /* the real stdout while the frame stream stands in for it */
/* The frame stream, made once and never closed: a thread that read `stdout` just before the
   swap back (the cursor restore on a signal) may still flush it. */
static FILE *g_frames = NULL;

/* Writes all of bytes to fd 1; 0 after an error. */
static int write_all(const char *bytes, size_t count) {
  while (count > 0) {
    ssize_t n = write(STDOUT_FILENO, bytes, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    bytes += n;
    count -= (size_t)n;
  }
  return 1;
}

/* The frame stream's write: "\n" becomes "\r" ESC "D", in writes of up to 64 KiB. */
static ssize_t frame_write(void *cookie, const char *bytes, size_t size) {
  (void)cookie;
  static char out[1 << 16];  /* under the stream's lock: one writer at a time */
  const char *end = bytes + size;
  const char *newline = memchr(bytes, '\n', size);
  /* Finished lines come already ended so (ct_add_finished_line): a run of them goes as it is. */
  if (newline == NULL) return write_all(bytes, size) ? (ssize_t)size : -1;
  size_t n = 0;
  while (bytes < end) {
    size_t run = (size_t)((newline ? newline : end) - bytes);
    if (n + run + 3 > sizeof out) {
      if (n > 0 && !write_all(out, n)) return -1;
      n = 0;
      if (run + 3 > sizeof out) {  /* a very long line: as it is, then its end */
        if (!write_all(bytes, run)) return -1;
        run = 0;
        bytes = newline ? newline : end;
      }
    }
    memcpy(out + n, bytes, run);
    n += run;
    bytes += run;
    if (newline) {
      memcpy(out + n, "\r\033D", 3);
      n += 3;
      bytes++;
      newline = memchr(bytes, '\n', (size_t)(end - bytes));
    }
  }
  if (n > 0 && !write_all(out, n)) return -1;
  return (ssize_t)size;
}

void ct_buffer_stdout(int whole) {
  fflush(stdout);
  if (whole && !g_terminal && isatty(STDOUT_FILENO)) {
    if (!g_frames) {
      cookie_io_functions_t io = { .write = frame_write };
      g_frames = fopencookie(NULL, "w", io);
      if (g_frames && setvbuf(g_frames, g_frame, _IOFBF, sizeof g_frame) != 0) g_frames = NULL;
    }
    if (g_frames) {
      g_terminal = stdout;
      stdout = g_frames;
      return;
    }
  }
  if (!whole && g_terminal) {
    stdout = g_terminal;
    g_terminal = NULL;
  }
  setvbuf(stdout, whole ? g_frame : NULL, whole ? _IOFBF : _IOLBF, whole ? sizeof g_frame : BUFSIZ);
}

void ct_write_stdout(const char *bytes, long count) {
  if (count > 0) fwrite(bytes, 1, (size_t)count, stdout);
}

/* Lines added and not yet written (one writer: the thread that reports). */
static char g_lines[16384];
static size_t g_lines_used = 0;

void ct_write_finished_lines(void) {
  if (g_lines_used > 0) fwrite(g_lines, 1, g_lines_used, stdout);
  g_lines_used = 0;
}

void ct_add_finished_line(const char *label, long labelLength, const char *name, long nameLength,
                          double seconds) {
  if (!(seconds >= 0 && seconds < 1e15) || labelLength + nameLength > 400) {
    ct_write_finished_lines();
    fwrite(label, 1, (size_t)labelLength, stdout);
    fputc(' ', stdout);
    fwrite(name, 1, (size_t)nameLength, stdout);
    printf(" (%.2f s)\n", seconds);
    return;
  }
  /* The seconds first, right to left at the end of a buffer; then the line before them. */
  char digits[32], *end = digits + sizeof digits, *p = end;
  unsigned long long hundredths = (unsigned long long)(seconds * 100 + 0.5);
  *--p = (char)('0' + hundredths % 10);
  *--p = (char)('0' + hundredths / 10 % 10);
  *--p = '.';
  unsigned long long whole = hundredths / 100;
  do { *--p = (char)('0' + whole % 10); whole /= 10; } while (whole > 0);
  if (g_lines_used + 512 > sizeof g_lines) ct_write_finished_lines();
  char *line = g_lines + g_lines_used;
  size_t n = 0;
  memcpy(line + n, label, (size_t)labelLength); n += (size_t)labelLength;
  line[n++] = ' ';
  memcpy(line + n, name, (size_t)nameLength); n += (size_t)nameLength;
  line[n++] = ' '; line[n++] = '(';
  memcpy(line + n, p, (size_t)(end - p)); n += (size_t)(end - p);
  /* Into the frame stream, the line ends as frame_write would end it, which spares it a copy. */
  if (stdout == g_frames) { memcpy(line + n, " s)\r\033D", 6); n += 6; }
  else { memcpy(line + n, " s)\n", 4); n += 4; }
  g_lines_used += n;
}

void ct_flush_stdout_if_free(void) {
  if (ftrylockfile(stdout) != 0) return;
  fflush_unlocked(stdout);
  funlockfile(stdout);
}
