/* wakeup.c: wake the Lua thread out of a blocking read after Ctrl-C (EINTR, no restart). */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

/* A real-time signal of taskrun's own: nothing else sends it, and exec resets its handler. */
#define WAKE_SIGNAL (SIGRTMIN + 2)

static pthread_t g_lua_thread;
static atomic_int g_prepared = 0;

static void on_wake(int sig) { (void)sig; }

int cs_prepare_lua_wakeup(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_wake;
  action.sa_flags = 0;  /* not SA_RESTART: the blocked read returns EINTR */
  sigemptyset(&action.sa_mask);
  if (sigaction(WAKE_SIGNAL, &action, NULL) != 0) return -1;
  g_lua_thread = pthread_self();
  atomic_store(&g_prepared, 1);
  return 0;
}

void cs_wake_lua_thread(void) {
  if (atomic_load(&g_prepared)) pthread_kill(g_lua_thread, WAKE_SIGNAL);
}
