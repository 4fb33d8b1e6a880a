/* editline.c: libedit's readline functions, looked up with dlopen when the REPL starts. */
#include "CEditLine.h"
#include <dlfcn.h>
#include <stddef.h>

/* The part of libedit's <editline/readline.h> used here, as libedit 3.1 defines it. */
typedef struct { const char *line; const char *data; } ce_hist_entry;

static struct {
  char *(*readline)(const char *);
  int (*add_history)(const char *);
  int (*read_history)(const char *);
  int (*write_history)(const char *);
  ce_hist_entry *(*history_get)(int);
  int (*rl_initialize)(void);
  char **(*rl_completion_matches)(const char *, ce_generator *);
  int *history_base, *history_length, *rl_completion_append_character;
  ce_generator **rl_completion_entry_function;
  char **(**rl_attempted_completion_function)(const char *, int, int);
  int (**rl_getc_function)(FILE *);
} g;

static int g_loaded = -1;

int ce_load(void) {
  if (g_loaded >= 0) return g_loaded;
  void *lib = dlopen("libedit.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("libedit.so", RTLD_NOW | RTLD_LOCAL);
  g_loaded = 0;
  if (!lib) return 0;
#define FIND(name) if (!(*(void **)&g.name = dlsym(lib, #name))) return 0
  FIND(readline); FIND(add_history); FIND(read_history); FIND(write_history);
  FIND(history_get); FIND(rl_initialize); FIND(rl_completion_matches);
  FIND(history_base); FIND(history_length); FIND(rl_completion_append_character);
  FIND(rl_completion_entry_function); FIND(rl_attempted_completion_function);
  FIND(rl_getc_function);
#undef FIND
  return g_loaded = 1;
}

static char **attempt(const char *text, int start, int end) {
  (void)start; (void)end;
  *g.rl_completion_append_character = '\0';
  return g.rl_completion_matches(text, *g.rl_completion_entry_function);
}

void ce_initialize(ce_generator *generator, int (*getc)(FILE *)) {
  *g.rl_getc_function = getc;
  g.rl_initialize();
  *g.rl_completion_entry_function = generator;
  *g.rl_attempted_completion_function = attempt;
}

char *ce_readline(const char *prompt) { return g.readline(prompt); }
int ce_add_history(const char *line) { return g.add_history(line); }
int ce_read_history(const char *path) { return g.read_history(path); }
int ce_write_history(const char *path) { return g.write_history(path); }

const char *ce_history_entry(int i) {
  ce_hist_entry *entry = g.history_get(*g.history_base + i);
  return entry ? entry->line : NULL;
}

int ce_history_count(void) { return *g.history_length; }
