/* shim.c: trampolines, the interrupt hook and tracebacks; every longjmp happens here. */
#include "CLuaShim.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static tl_dispatch_fn g_dispatch = NULL;
static _Thread_local tl_control *g_current = NULL;  /* one Lua state per thread */
static atomic_int g_interrupt = 0;

void tl_set_dispatch(tl_dispatch_fn fn) { g_dispatch = fn; }

/* {====== the Lua heap and its limit */

/* The allocator's state: bytes in use (Lua's blocks and the host's charges), the limit (0:
   none), and whether it applies now. It
   applies only while Lua code runs inside a protected resume or call of the host's
   (`tl_protected_*`): an allocation that fails raises "not enough memory" there, inside
   Lua's own error handling. Outside (the host building values, or a Swift host function,
   whose frames Lua must never longjmp through) allocations always succeed. */
typedef struct tl_heap { size_t used, limit; int enforce; } tl_heap;

static void *tl_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  tl_heap *h = ud;
  if (ptr == NULL) osize = 0;
  if (nsize == 0) { free(ptr); h->used -= osize; return NULL; }
  if (h->limit && h->enforce > 0 && nsize > osize && h->used + (nsize - osize) > h->limit) return NULL;
  /* A new block (most of Lua's requests) skips realloc's own test for NULL: mimalloc's
     realloc(NULL, n) costs about 75 instructions, its malloc about 20. */
  void *p = ptr ? realloc(ptr, nsize) : malloc(nsize);
  if (p) h->used = h->used - osize + nsize;
  return p;
}

static int tl_panic(lua_State *L) {
  fprintf(stderr, "taskrun: unprotected Lua error: %s\n", lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
  return 0;  /* abort() follows: the host never calls Lua unprotected where it could fail */
}

lua_State *tl_newstate(size_t limit) {
  tl_heap *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->limit = limit;
  lua_State *L = lua_newstate(tl_alloc, h);
  if (L) lua_atpanic(L, tl_panic);
  return L;
}

static tl_heap *heap_of(lua_State *L) {
  void *ud;
  lua_Alloc f = lua_getallocf(L, &ud);
  return f == tl_alloc ? ud : NULL;
}

void tl_closestate(lua_State *L) {
  tl_heap *h = heap_of(L);
  lua_close(L);
  free(h);
}

int tl_protected_resume(lua_State *co, lua_State *from, int nargs, int *nres) {
  tl_heap *h = heap_of(co);
  int saved = h ? h->enforce : 0;
  if (h) h->enforce = 1;
  int status = lua_resume(co, from, nargs, nres);
  if (h) h->enforce = saved;
  return status;
}

/* The host's objects for the script are charged whenever they are made (from a host function,
   called from Lua code that runs protected): they stay until the state closes. */
int tl_charge(lua_State *L, ptrdiff_t bytes) { return tl_charge_heap(heap_of(L), bytes); }

void *tl_heap_account(lua_State *L) { return heap_of(L); }

int tl_charge_heap(void *heap, ptrdiff_t bytes) {
  tl_heap *h = heap;
  if (!h) return 1;
  if (bytes < 0) { h->used -= (size_t)-bytes; return 1; }  /* given back */
  if (h->limit && ((size_t)bytes > h->limit || h->used > h->limit - (size_t)bytes)) return 0;
  h->used += (size_t)bytes;
  return 1;
}

/* Raises Lua's own memory error (status LUA_ERRMEM, "not enough memory", as pcall reports
   it): an allocation of `limit` bytes cannot fit (the heap holds something) and is refused,
   since the limit applies to the caller. Where it would not, a plain error says the same. */
static int raise_memory(lua_State *L) {
  tl_heap *h = heap_of(L);
  if (h && h->limit && h->enforce > 0) lua_newuserdatauv(L, h->limit, 0);
  lua_pushliteral(L, "not enough memory");
  return lua_error(L);
}

/* tl_protected_call: with the bounded calls below. */

/* }====== */

/* Called by Lua; calls Swift, which has returned before anything is raised. */
static int tl_entry(lua_State *L) {
  int index = (int)lua_tointeger(L, lua_upvalueindex(1));
  tl_heap *h = heap_of(L);
  int saved = h ? h->enforce : 0;
  if (h) h->enforce = 0;  /* Swift frames: no allocation may raise until it returns */
  int r = g_dispatch(L, index);
  if (h) h->enforce = saved;
  if (r >= 0) return r;
  if (r == TL_RAISE_MEMORY) return raise_memory(L);
  if (r == TL_RAISE && lua_type(L, -1) == LUA_TSTRING) {
    luaL_where(L, 1);            /* position of the Lua code that called us */
    lua_insert(L, -2);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

void tl_pushhostfn(lua_State *L, int index) {
  lua_pushinteger(L, index);
  lua_pushcclosure(L, tl_entry, 1);
}

double tl_monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tl_set_current(tl_control *c) { g_current = c; }
int tl_interrupted(void) { return atomic_load(&g_interrupt); }

/* {====== the interrupt hook and its watchdog */

#define TL_MAXINNER 32

struct tl_watchdog {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  lua_State *body;                   /* the coroutine being resumed, or NULL */
  lua_State *inner[TL_MAXINNER];     /* user coroutines it resumed, innermost last */
  int depth;
  double arm_at;                     /* when to arm the hook (monotonic s); 0: never */
  int armed;
  int idle;                          /* the watchdog waits with no deadline: wake it to start */
  int stop;
  struct tl_watchdog *next;          /* in the list of all watchdogs (for interrupts) */
};

static pthread_mutex_t g_watchdogs_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local tl_watchdog *g_watchdog = NULL;  /* the one resuming on this thread */
static tl_watchdog *g_watchdogs = NULL;

static void tl_hook(lua_State *L, lua_Debug *ar);
static void bound_hook(lua_State *L, lua_Debug *ar);
#define TL_BOUND_STEP 1000
static _Thread_local struct { int active; long left, steps; unsigned long exhausted; double until; const char *what; } g_bound;  /* see bounded calls below */

/* With w->lock held: set the hook on the running coroutine and the user coroutines inside it.
   For a time slice every 1000 instructions; to stop (`urgent`) at the very next line too, so
   that not even one more statement runs after a pcall that caught the stop. */
static void arm_hook(tl_watchdog *w, int urgent) {
  if ((w->armed && !urgent) || w->body == NULL) return;
  w->armed = 1;
  int mask = urgent ? LUA_MASKCOUNT | LUA_MASKLINE : LUA_MASKCOUNT, count = urgent ? 1 : 1000;
  lua_sethook(w->body, tl_hook, mask, count);
  for (int i = 0; i < w->depth && i < TL_MAXINNER; i++) lua_sethook(w->inner[i], tl_hook, mask, count);
}
static void arm(tl_watchdog *w) { arm_hook(w, 0); }

static void *watch(void *arg) {
  tl_watchdog *w = arg;
  pthread_mutex_lock(&w->lock);
  while (!w->stop) {
    if (w->body && !w->armed && w->arm_at > 0) {
      double now = tl_monotonic();
      if (now >= w->arm_at) { arm(w); continue; }
      struct timespec until;
      double at = w->arm_at;
      until.tv_sec = (time_t)at;
      until.tv_nsec = (long)((at - (double)until.tv_sec) * 1e9);
      pthread_cond_timedwait(&w->cond, &w->lock, &until);
    } else {
      w->idle = 1;
      pthread_cond_wait(&w->cond, &w->lock);
      w->idle = 0;
    }
  }
  pthread_mutex_unlock(&w->lock);
  return NULL;
}

tl_watchdog *tl_watchdog_new(void) {
  tl_watchdog *w = calloc(1, sizeof *w);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cond, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&w->lock, NULL);
  pthread_create(&w->thread, NULL, watch, w);
  pthread_mutex_lock(&g_watchdogs_lock);
  w->next = g_watchdogs;
  g_watchdogs = w;
  pthread_mutex_unlock(&g_watchdogs_lock);
  return w;
}

void tl_watchdog_free(tl_watchdog *w) {
  pthread_mutex_lock(&g_watchdogs_lock);
  for (tl_watchdog **p = &g_watchdogs; *p; p = &(*p)->next)
    if (*p == w) { *p = w->next; break; }
  pthread_mutex_unlock(&g_watchdogs_lock);
  pthread_mutex_lock(&w->lock);
  w->stop = 1;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
  free(w);
}

void tl_watchdog_begin(tl_watchdog *w, lua_State *co, tl_control *c, double slice) {
  g_watchdog = w;
  pthread_mutex_lock(&w->lock);
  w->body = co;
  w->depth = 0;
  w->armed = 0;
  w->arm_at = tl_monotonic() + slice;
  /* something to stop: arm now. An interrupt (Ctrl-C, os.exit) stops at the next line; a
     cancelled body may still run a few statements of cleanup after catching the error. */
  if (c ? !c->shielded && atomic_load(&g_interrupt) : atomic_load(&g_interrupt)) arm_hook(w, 1);
  else if (c && c->cancelled) arm_hook(w, 0);
  /* A waiting watchdog wakes by itself at its deadline and then sees the new one; only an
     idle one needs a signal. Waking a thread on every resume cost more than the resume. */
  if (w->idle) pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
}

void tl_watchdog_end(tl_watchdog *w) {
  g_watchdog = NULL;
  pthread_mutex_lock(&w->lock);
  if (w->armed) {
    lua_sethook(w->body, NULL, 0, 0);
    for (int i = 0; i < w->depth && i < TL_MAXINNER; i++) lua_sethook(w->inner[i], NULL, 0, 0);
  }
  w->body = NULL;
  w->depth = 0;
  w->armed = 0;
  w->arm_at = 0;
  pthread_mutex_unlock(&w->lock);
}

/* enter(co) and leave(): called by the prelude around resuming a user coroutine. */
static int tl_enter(lua_State *L) {
  tl_watchdog *w = lua_touserdata(L, lua_upvalueindex(1));
  lua_State *co = lua_tothread(L, 1);
  if (co == NULL) return 0;
  pthread_mutex_lock(&w->lock);
  if (w->body && w->depth < TL_MAXINNER) {
    w->inner[w->depth] = co;
    if (w->armed) lua_sethook(co, tl_hook, LUA_MASKCOUNT, 1000);
  }
  if (w->body) w->depth++;
  pthread_mutex_unlock(&w->lock);
  if (g_bound.active) lua_sethook(co, bound_hook, LUA_MASKCOUNT, TL_BOUND_STEP);
  return 0;
}

static int tl_leave(lua_State *L) {
  tl_watchdog *w = lua_touserdata(L, lua_upvalueindex(1));
  pthread_mutex_lock(&w->lock);
  if (w->depth > 0) {
    w->depth--;
    if (w->armed && w->depth < TL_MAXINNER) lua_sethook(w->inner[w->depth], NULL, 0, 0);
  }
  pthread_mutex_unlock(&w->lock);
  return 0;
}

void tl_pushwatchfns(lua_State *L, tl_watchdog *w) {
  lua_pushlightuserdata(L, w);
  lua_pushcclosure(L, tl_enter, 1);
  lua_pushlightuserdata(L, w);
  lua_pushcclosure(L, tl_leave, 1);
}

/* Why the running code must stop now (cancelled, interrupted, timed out), or NULL. */
int tl_stop_kind(const tl_control *c) {
  if (c == NULL) return atomic_load(&g_interrupt) ? 2 : 0;
  if (c->cancelled) return 1;
  if (!c->shielded && atomic_load(&g_interrupt)) return 2;
  if (c->deadline > 0 && tl_monotonic() >= c->deadline) return 3;
  return 0;
}

static const char *stop_reason(tl_control *c) {
  static const char *const why[] = { NULL, "cancelled", "interrupted", "timed out" };
  int kind = tl_stop_kind(c);
  if (kind && c) c->raised = kind;
  return why[kind];
}

int tl_stop_due(tl_control *c) {
  if (c == NULL || c->raised) return c ? c->raised : 0;
  return stop_reason(c) ? c->raised : 0;
}

/* Pushes "file:line: " of the first Lua frame from `level` up that is not the host's own
   Lua (the prelude, "=[taskrun]"), or "": a stop that lands while a primitive returns
   through the prelude names the user's line, not the prelude's. */
static void where_user(lua_State *L, int level) {
  lua_Debug ar;
  for (int i = level; lua_getstack(L, i, &ar); i++) {
    if (!lua_getinfo(L, "Sl", &ar)) break;
    if (ar.currentline > 0 && strcmp(ar.source, "=[taskrun]") != 0) {
      lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
      return;
    }
  }
  lua_pushliteral(L, "");
}

/* Records in `c` the user's line the first stop is raised at (as where_user finds it): the
   stop is raised again at every later line, the runtime's own included, so by the time the
   body has ended its traceback no longer says where it was. */
static void note_stop(tl_control *c, lua_State *L, int level) {
  lua_Debug ar;
  for (int i = level; lua_getstack(L, i, &ar); i++) {
    if (!lua_getinfo(L, "Sl", &ar)) break;
    if (ar.currentline > 0 && strcmp(ar.source, "=[taskrun]") != 0) {
      c->stop_line = ar.currentline;
      memcpy(c->stop_src, ar.short_src, sizeof c->stop_src);
      return;
    }
  }
}

/* Raises `why` at the running line, with the hook re-armed on every line so that a pcall
   around the loop cannot swallow it (as Redis does). */
static int raise_stop(lua_State *L, int level, const char *why) {
  lua_sethook(L, tl_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  /* Raised in a coroutine the body resumed: coroutine.resume and coroutine.close return it
     like pcall, so the body's own next line must raise it again, or the body would return. */
  tl_control *c = g_current;
  if (c && c->thread && c->thread != L) lua_sethook(c->thread, tl_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  if (c && c->stop_line == 0) note_stop(c, L, level);
  where_user(L, level);
  lua_pushstring(L, why);
  lua_concat(L, 2);
  return lua_error(L);
}

/* Once armed, every 1000 instructions: stop cancelled, interrupted or overdue bodies, and
   end the time slice of the rest by yielding to the scheduler. */
static void tl_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  tl_control *c = g_current;
  const char *why = stop_reason(c);
  if (why) { raise_stop(L, 0, why); return; }
  if (c != NULL && L == c->thread && lua_isyieldable(L)) {
    lua_yield(L, 0);            /* in a hook this returns; the VM yields afterwards */
  }
}

/* debug.sethook, guarded: user code that replaces or clears hooks in a loop would take the
   interrupt hook away; each call is a point where a pending stop is raised instead. */
static int tl_guarded_sethook(lua_State *L) {
  const char *why = stop_reason(g_current);
  if (why) return raise_stop(L, 1, why);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 0);
  /* Once the watchdog has armed the interrupt hook, it stays: re-arm over the user's. */
  tl_watchdog *w = g_watchdog;
  if (w) {
    pthread_mutex_lock(&w->lock);
    if (w->armed) { w->armed = 0; arm(w); }
    pthread_mutex_unlock(&w->lock);
  }
  return 0;
}

void tl_guard_sethook(lua_State *L) {
  if (lua_getglobal(L, "debug") == LUA_TTABLE && lua_getfield(L, -1, "sethook") == LUA_TFUNCTION) {
    lua_pushcclosure(L, tl_guarded_sethook, 1);
    lua_setfield(L, -2, "sethook");
    lua_pop(L, 1);
  } else {
    lua_pop(L, 2);
  }
}

void tl_interrupt(int on) {
  atomic_store(&g_interrupt, on);
  if (!on) return;
  pthread_mutex_lock(&g_watchdogs_lock);
  for (tl_watchdog *w = g_watchdogs; w; w = w->next) {
    pthread_mutex_lock(&w->lock);
    arm_hook(w, 1);
    pthread_mutex_unlock(&w->lock);
  }
  pthread_mutex_unlock(&g_watchdogs_lock);
}

/* }====== */

void tl_traceback(lua_State *L, lua_State *co, const char *msg) {
  luaL_traceback(L, co, msg, 0);
}

/* {====== bounded calls: user code the host runs outside a body's resume */

/* Some user code runs where the watchdog does not look: the __tostring of an error object or
   of what print prints, the __close of a failed body's pending variables, the REPL's
   formatting and completion, and callbacks (observers, progress handlers, a condition's
   dependency) called from the scheduler's loop. Each such call runs under this count hook,
   with the heap limit on: it stops with an error after a budget of instructions
   (TL_BOUND_STEPS x TL_BOUND_STEP; callbacks TL_CALLBACK_STEPS x TL_BOUND_STEP), or at once
   on an interrupt, so it can neither hang the scheduler nor grow without end. Nested
   bounded calls share the outer budget. */
#define TL_BOUND_STEPS 10000L       /* 10 million instructions: a few tenths of a second at most */
#define TL_CALLBACK_STEPS 1000000L  /* a billion instructions: seconds */

static void bound_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  if (!g_bound.active) { lua_sethook(L, NULL, 0, 0); return; }  /* hooked by an earlier call */
  int interrupted = atomic_load(&g_interrupt);
  if (!interrupted && --g_bound.left > 0) return;
  if (!interrupted && g_bound.left == 0) g_bound.exhausted++;  /* once a budget: later lines find it below 0 */
  g_bound.left = 0;
  /* raised again at every line, so a pcall inside cannot swallow it */
  lua_sethook(L, bound_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
  luaL_where(L, 0);
  if (interrupted) lua_pushstring(L, "interrupted");
  else lua_pushfstring(L, "stopped after %d million instructions in %s (taskrun bounds the Lua "
                       "code it calls itself)", (int)(g_bound.steps * TL_BOUND_STEP / 1000000), g_bound.what);
  lua_concat(L, 2);
  lua_error(L);
}

/* What a bounded call changes, to put back: the outer budget, what runs, the heap limit, the
   hook. */
typedef struct { int outer, enforce; lua_Hook hook; int mask, count; const char *what; } bound_state;

/* `what` names the code for the message that stops it ("a __tostring metamethod"): a nested
   call shares the outer budget, but is named itself while it runs. It may be a body calling
   print, so the message does not say "outside a body". */
static bound_state bound_begin(lua_State *L, long steps, const char *what) {
  tl_heap *h = heap_of(L);
  bound_state b = { g_bound.active, h ? h->enforce : 0, lua_gethook(L), lua_gethookmask(L), lua_gethookcount(L),
                    g_bound.what };
  g_bound.what = what;
  if (!b.outer) {
    g_bound.active = 1;
    g_bound.left = g_bound.steps = steps;
    /* A wait inside (os.execute, an io.popen read) uses no instructions: it is bounded in
       time instead, 1 s (10 s for a callback). */
    g_bound.until = tl_monotonic() + (steps > TL_BOUND_STEPS ? 10.0 : 1.0);
  }
  if (h) h->enforce = 1;
  lua_sethook(L, bound_hook, LUA_MASKCOUNT, TL_BOUND_STEP);
  return b;
}

static void bound_end(lua_State *L, bound_state b) {
  tl_heap *h = heap_of(L);
  lua_sethook(L, b.hook, b.mask, b.count);
  if (h) h->enforce = b.enforce;
  g_bound.what = b.what;
  if (!b.outer) g_bound.active = 0;
}

double tl_bound_expired(void) {
  if (!g_bound.active || tl_monotonic() < g_bound.until) return 0;
  return g_bound.steps > TL_BOUND_STEPS ? 10.0 : 1.0;
}

const char *tl_bound_what(void) { return g_bound.active ? g_bound.what : NULL; }

int tl_bounded_call(lua_State *L, int nargs, int nres, const char *what) {
  /* a thread of its own: no watchdog arms over the hook */
  lua_State *T = lua_checkstack(L, 2) ? lua_newthread(L) : NULL;
  /* A new thread has room for LUA_MINSTACK values: more arguments than that (the REPL
     showing many results) overflowed its stack into whatever lay after it. */
  if (T == NULL || !lua_checkstack(T, nargs + 1)) {
    lua_pop(L, nargs + 1 + (T != NULL));
    lua_pushliteral(L, "stack overflow (too many values)");
    return LUA_ERRRUN;
  }
  lua_rotate(L, -(nargs + 2), 1);        /* the thread below the function and its arguments */
  lua_xmove(L, T, nargs + 1);
  bound_state b = bound_begin(T, TL_BOUND_STEPS, what);
  int status = lua_pcallk(T, nargs, nres, 0, 0, NULL);
  bound_end(T, b);
  int n = lua_gettop(T);
  lua_checkstack(L, n + 1);
  lua_xmove(T, L, n);                    /* the results, or the error */
  lua_rotate(L, -(n + 1), -1);
  lua_pop(L, 1);                         /* the thread */
  return status;
}

/* A callback: inside a resume the watchdog watches the thread (the body's deadline, cancel
   and interrupts apply); outside one, nothing would, so it is bounded. */
int tl_protected_call(lua_State *L, int nargs, int nres) {
  if (g_watchdog == NULL) {
    bound_state b = bound_begin(L, TL_CALLBACK_STEPS, "a callback");
    int status = lua_pcallk(L, nargs, nres, 0, 0, NULL);
    bound_end(L, b);
    return status;
  }
  tl_heap *h = heap_of(L);
  int saved = h ? h->enforce : 0;
  if (h) h->enforce = 1;
  int status = lua_pcallk(L, nargs, nres, 0, 0, NULL);
  if (h) h->enforce = saved;
  return status;
}

int tl_resetthread(lua_State *co, lua_State *from) {
  bound_state b = bound_begin(co, TL_BOUND_STEPS, "a __close metamethod");  /* pending __close methods run here */
#if LUA_VERSION_RELEASE_NUM >= 50406
  (void)from; int status = lua_closethread(co, from);
#elif LUA_VERSION_RELEASE_NUM == 50405
  int status = lua_resetthread(co, from);
#else
  (void)from; int status = lua_resetthread(co);
#endif
  bound_end(co, b);
  return status;
}

/* {====== finalizers: Lua runs __gc with hooks off, wherever a collection happens */

/* A finalizer set through setmetatable (or debug.setmetatable) is kept as the upvalue of this
   trampoline, which runs it in a bounded call: on a thread of its own, where hooks are on. */
static int tl_gc_trampoline(lua_State *L) {
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  unsigned long exhausted = g_bound.exhausted;
  if (tl_bounded_call(L, lua_gettop(L) - 1, 0, "a __gc finalizer") != LUA_OK) {
    /* Stopped by taskrun, not by the script's own error: always said (Lua's warnings are
       off unless the script turns them on), so a finalizer is never cut short in silence. */
    if (g_bound.exhausted != exhausted && lua_type(L, -1) == LUA_TSTRING) {
      fprintf(stderr, "taskrun: a __gc finalizer was stopped: %s\n", lua_tostring(L, -1));
      fflush(stderr);
    }
    lua_warning(L, "error in __gc (", 1);  /* as Lua reports a finalizer's error: a warning */
    lua_warning(L, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "not a string", 1);
    lua_warning(L, ")", 0);
  }
  return 0;
}

/* Before a metatable is set: a function in its __gc becomes the bounded trampoline. */
static void bound_finalizer(lua_State *L, int mt) {
  if (lua_type(L, mt) != LUA_TTABLE) return;
  lua_pushliteral(L, "__gc");
  if (lua_rawget(L, mt) == LUA_TFUNCTION && lua_tocfunction(L, -1) != tl_gc_trampoline) {
    lua_pushcclosure(L, tl_gc_trampoline, 1);
    lua_pushliteral(L, "__gc");
    lua_insert(L, -2);
    lua_rawset(L, mt);
  } else {
    lua_pop(L, 1);
  }
}

/* setmetatable as lbaselib.c has it, with the finalizer bounded. */
static int tl_setmetatable(lua_State *L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
    return luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  bound_finalizer(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

/* debug.setmetatable as ldblib.c has it, with the finalizer bounded. */
static int tl_debug_setmetatable(lua_State *L) {
  int t = lua_type(L, 2);
  luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
  lua_settop(L, 2);
  bound_finalizer(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

void tl_guard_finalizers(lua_State *L) {
  lua_pushcfunction(L, tl_setmetatable);
  lua_setglobal(L, "setmetatable");
  if (lua_getglobal(L, "debug") == LUA_TTABLE) {
    lua_pushcfunction(L, tl_debug_setmetatable);
    lua_setfield(L, -2, "setmetatable");
  }
  lua_pop(L, 1);
}

/* }====== */

static int tl_tostring_k(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

int tl_safe_tostring(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_checkstack(L, 3);
  lua_pushcfunction(L, tl_tostring_k);
  lua_pushvalue(L, idx);
  return tl_bounded_call(L, 1, 1, "a __tostring metamethod");
}

/* }====== */

void tl_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
