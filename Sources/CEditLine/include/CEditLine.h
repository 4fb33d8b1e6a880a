/* CEditLine: libedit's readline interface for the REPL, loaded when the REPL first needs it. */
#ifndef CEDITLINE_H
#define CEDITLINE_H
#include <stdio.h>

/* Loads libedit (libedit.so.2) once: 1 if it is there, 0 if not (the REPL then reads plain
   lines). Every other function here needs a 1 first. Not linking it saves every run the
   loading of four libraries (libedit, libtinfo, libbsd, libmd). */
int ce_load(void);

/* Completion: called with state 0, 1, 2, … until it returns NULL; returns strdup'ed words. */
typedef char *ce_generator(const char *text, int state);

/* The getc hook goes in before rl_initialize (which only then installs it), the completion
   hooks after it (which resets them); completion adds no space after the word (`fetch` is
   followed by `.` or `:`). */
void ce_initialize(ce_generator *generator, int (*getc)(FILE *));
char *ce_readline(const char *prompt);
int ce_add_history(const char *line);
int ce_read_history(const char *path);
int ce_write_history(const char *path);
/* The remembered entries, oldest first: entry i of n (0-based), or NULL. */
const char *ce_history_entry(int i);
int ce_history_count(void);
#endif
