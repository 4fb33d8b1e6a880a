/* CTerminal: what the live view needs from the terminal that Swift cannot do safely. */
#ifndef CTERMINAL_H
#define CTERMINAL_H

/* Columns and rows of the terminal on fd, or 0 if it is not a terminal. */
int ct_columns(int fd);
int ct_rows(int fd);

/* On a crash signal (SEGV, BUS, ILL, FPE, ABRT), show the cursor again on fd 1, then let the
   previous handler (Swift's backtracer) or the default action run. */
void ct_show_cursor_on_crash(void);
#endif
