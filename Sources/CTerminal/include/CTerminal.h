/* CTerminal: what the live view needs from the terminal that Swift cannot do safely. */
#ifndef CTERMINAL_H
#define CTERMINAL_H

/* Columns and rows of the terminal on fd, or 0 if it is not a terminal. */
int ct_columns(int fd);
int ct_rows(int fd);

/* On a crash signal (SEGV, BUS, ILL, FPE, ABRT), show the cursor again on fd 1, then let the
   previous handler (Swift's backtracer) or the default action run. */
void ct_show_cursor_on_crash(void);

/* Standard output whole-buffered (`whole`: the live view writes a frame at a time) or
   line-buffered again, after flushing what it holds. While whole-buffered on a terminal,
   each newline goes out as CR and IND (ESC D): the same movement on every VT100-compatible
   terminal, and the kernel's terminal layer (ONLCR) passes a frame on in one write instead
   of two per line: 10,000 finished lines cost 1.5 ms of system time instead of 6. */
void ct_buffer_stdout(int whole);

/* Writes `count` bytes to standard output (through its buffer, as print does). */
void ct_write_stdout(const char *bytes, long count);

/* Adds "LABEL NAME (0.25 s)" and a newline (CR and IND into the frame stream) to the lines
   that ct_write_finished_lines writes in one write to standard output's buffer (a live
   view's frame of successes; a report's one line), the seconds as printf's "%.2f" would
   print them but at a tenth of its cost. Nothing else may write to standard output in
   between. */
void ct_add_finished_line(const char *label, long labelLength, const char *name, long nameLength,
                          double seconds);
void ct_write_finished_lines(void);

/* Flushes standard output unless another thread is writing to it (from a thread that is
   about to end the process, which must not wait on a stuck writer). */
void ct_flush_stdout_if_free(void);
#endif
