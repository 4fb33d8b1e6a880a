/* libedit's readline interface, for the REPL's line editing and history. */
#include <stdio.h>
#include <editline/readline.h>

/* The remembered entries, oldest first: entry i of n (0-based), or NULL. */
static inline const char *ce_history_entry(int i) {
  HIST_ENTRY *entry = history_get(history_base + i);
  return entry ? entry->line : NULL;
}
static inline int ce_history_count(void) { return history_length; }

/* Completion without a space after the word: `fetch` is followed by `.` or `:`. */
static inline char **ce_attempt(const char *text, int start, int end) {
  (void)start; (void)end;
  rl_completion_append_character = '\0';
  return rl_completion_matches(text, rl_completion_entry_function);
}

/* Swift 6 cannot assign libedit's global hooks directly (shared mutable state). The getc
   hook must be set before rl_initialize (which only then installs it), the completion hooks
   after it (which resets them). */
static inline void ce_initialize(rl_compentry_func_t *generator, int (*getc)(FILE *)) {
  rl_getc_function = getc;
  rl_initialize();
  rl_completion_entry_function = generator;
  rl_attempted_completion_function = ce_attempt;
}
