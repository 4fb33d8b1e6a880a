/* CLuaShim: the only code that raises or yields in Lua; Swift returns a status to it. */
#ifndef CLUASHIM_H
#define CLUASHIM_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdint.h>

/* A Lua state whose heap is capped at `limit` bytes (0: no cap) while Lua code runs inside
   tl_protected_resume / tl_protected_call; closed with tl_closestate. */
lua_State *tl_newstate(size_t limit);
void tl_closestate(lua_State *L);
int tl_protected_resume(lua_State *co, lua_State *from, int nargs, int *nres);
int tl_protected_call(lua_State *L, int nargs, int nres);
/* Charges `bytes` the host keeps for the script (an operation's node, a queue, a name) to the
   state's heap, against the same cap: 1 if they fit (charged for the state's life), 0 if the
   cap would be passed (nothing charged; the host function returns TL_RAISE_MEMORY). A
   negative count gives a charge back (the object was not made after all). */
int tl_charge(lua_State *L, ptrdiff_t bytes);
/* The state's heap account (NULL if the state was not made by tl_newstate), and a charge to
   it: what tl_charge does, without finding the account again (operation{} charges each time). */
void *tl_heap_account(lua_State *L);
int tl_charge_heap(void *heap, ptrdiff_t bytes);
/* Whether the `n` bytes at `s` are printable ASCII only (no control character, nothing past
   0x7e): most names are, and need no closer look at what they would draw on a terminal. */
static inline int tl_plain_text(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c > 0x7e) return 0;
  }
  return 1;
}

/* What a Swift host function returns when it does not return a count of results. */
#define TL_RAISE (-1)   /* raise the value on top of the stack (strings get "file:line: ") */
#define TL_RAISE_PLAIN (-2)  /* raise the value on top of the stack as it is */
#define TL_RAISE_MEMORY (-3)  /* raise Lua's own memory error (a charge was refused) */

/* The one Swift entry point: `index` says which host function Lua called. */
typedef int (*tl_dispatch_fn)(lua_State *L, int index);
void tl_set_dispatch(tl_dispatch_fn fn);

/* Push a Lua function that calls the dispatcher with `index`. */
void tl_pushhostfn(lua_State *L, int index);

/* Per-running-body control block read by the count hook. Swift owns it; the hook only reads
   and the hook re-arms itself so that an interruption cannot be swallowed by pcall. */
typedef struct tl_control {
  volatile int cancelled;        /* set by the scheduler: raise "cancelled" at the next check */
  volatile int shielded;         /* ignores the global interrupt (background operations) */
  double deadline;               /* monotonic seconds; 0 = none: raise "timed out" after it */
  int raised;                    /* 1 cancelled, 2 interrupted, 3 timed out: what the hook raised */
  lua_State *thread;             /* the body's own coroutine: the only one time-sliced */
  int stop_line;                 /* where the hook first raised a stop: the user's line, */
  char stop_src[LUA_IDSIZE];     /* and its short_src ("" and 0: not yet, or no Lua frame) */
} tl_control;

/* The interrupt hook costs every Lua instruction a detour while it is set, so it is not set
   while code runs normally: a watchdog thread arms it (lua_sethook is the one call Lua allows
   from another thread) on the running coroutine once its time slice ends, or at once on an
   interrupt. One watchdog per Lua state. */
typedef struct tl_watchdog tl_watchdog;
tl_watchdog *tl_watchdog_new(void);
void tl_watchdog_free(tl_watchdog *w);
/* Before lua_resume: `co` runs now with control block `c`; arm the hook after `slice` s. */
void tl_watchdog_begin(tl_watchdog *w, lua_State *co, tl_control *c, double slice);
/* After lua_resume returned: disarm. */
void tl_watchdog_end(tl_watchdog *w);
/* Push the functions the prelude calls around resuming a user coroutine (so a loop inside
   one can be interrupted too): enter(co), leave(). */
void tl_pushwatchfns(lua_State *L, tl_watchdog *w);
/* The control block of the body about to be resumed (NULL: none). */
void tl_set_current(tl_control *c);
/* Interrupt every unshielded body at its next hook check; arms every watchdog's hook. */
void tl_interrupt(int on);
int tl_interrupted(void);
/* The stop due for the body `c` now, recorded in c->raised as the hook records what it raises:
   1 cancelled, 2 interrupted, 3 timed out; 0 none. A body that ends (returns or raises) while
   one is due ends by it: the hook looks only every 1000 instructions, and a wait cut short by
   the stop (a pipe's read, io.read's EINTR) returns or raises something else first. */
int tl_stop_due(tl_control *c);
/* Which stop is due for `c` (NULL: the top level after it ended), as the hook would raise
   it, without raising: 0 none, 1 cancelled, 2 interrupted, 3 timed out. */
int tl_stop_kind(const tl_control *c);
/* Inside a bounded call whose time is up (a wait in it uses no instructions): the seconds it
   had; else 0. */
double tl_bound_expired(void);
/* Inside a bounded call: what it runs ("a __tostring metamethod", "a callback"); else NULL. */
const char *tl_bound_what(void);
/* Replace debug.sethook with a guard that raises a pending stop (cancelled, interrupted, timed
   out) before it lets user code touch the hooks. */
void tl_guard_sethook(lua_State *L);
/* Replace setmetatable and debug.setmetatable with ones that put a function in the
   metatable's __gc behind a trampoline running it bounded (Lua runs finalizers with hooks
   off, so a looping one could not otherwise be stopped). */
void tl_guard_finalizers(lua_State *L);
double tl_monotonic(void);

/* After a failed lua_resume: push msg + traceback of `co` (its dead stack). */
void tl_traceback(lua_State *L, lua_State *co, const char *msg);
/* Calls the function below `nargs` arguments on a thread of its own, bounded: it stops with an
   error after 10 million instructions in `what` (named so in the message) or on an interrupt,
   and the heap limit applies. Results (or the error) replace function and arguments, as
   lua_pcall's; returns its status. */
int tl_bounded_call(lua_State *L, int nargs, int nres, const char *what);
/* Close a dead or suspended coroutine's pending variables (5.4.x spelling differences),
   bounded as tl_bounded_call is. */
int tl_resetthread(lua_State *co, lua_State *from);

/* The host pointer kept in the main thread's extra space (copied into every new thread). */
static inline void **tl_extraspace(lua_State *L) { return (void **)lua_getextraspace(L); }

/* Macros Swift cannot import. */
static inline int tl_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline int tl_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline void tl_pop(lua_State *L, int n) { lua_settop(L, -(n)-1); }
static inline int tl_pcall(lua_State *L, int nargs, int nres, int msgh) {
  return lua_pcallk(L, nargs, nres, msgh, 0, NULL);
}
static inline void *tl_newuserdata(lua_State *L, size_t size) { return lua_newuserdatauv(L, size, 0); }
static inline void tl_pushlightuserdata(lua_State *L, void *p) { lua_pushlightuserdata(L, p); }
static inline const char *tl_tolstring(lua_State *L, int i, size_t *len) { return lua_tolstring(L, i, len); }
/* A bounded tostring (runs __tostring/__name): pushes the string and returns 0, or pushes the
   error and returns its status. */
int tl_safe_tostring(lua_State *L, int idx);
/* lua_next with a key that came from the table itself cannot raise; wrapped for clarity. */
static inline int tl_next(lua_State *L, int idx) { return lua_next(L, idx); }
/* Open the standard libraries (base, coroutine, table, io, os, string, math, utf8, debug, package). */
static inline void tl_openlibs(lua_State *L) { luaL_openlibs(L); }
/* Generational collection: a graph keeps many long-lived closures and coroutines, which the
   incremental collector sweeps again on every cycle (measured: 100k operations 20% faster). */
static inline void tl_gc_generational(lua_State *L) { lua_gc(L, LUA_GCGEN, 0, 0); }
/* A protected luaL_loadbufferx; returns the status (chunk or message on the stack). */
static inline int tl_load(lua_State *L, const char *buf, size_t len, const char *name, const char *mode) {
  return luaL_loadbufferx(L, buf, len, name, mode);
}
/* Line-buffer C's stdout, which Lua's print and Swift's print share, so lines reach a pipe
   promptly and in order. */
void tl_line_buffer_stdout(void);
/* io.popen's handles (childfile.c): a Lua file (io.type "file"; read, lines, write, close)
   over `fd`, opened with `mode` ("r" or "w"). Closing it (close, io.close, __gc, __close)
   calls the waiter with `child` and returns what os.execute would: true|nil, "exit"|"signal",
   n. The waiter returns a wait(2) status and must not raise. Pushes the handle and returns 1,
   or pushes nothing and returns 0 (errno set) if the descriptor cannot become a FILE. */
typedef int (*tl_child_waiter)(lua_State *L, int child);
void tl_set_child_waiter(tl_child_waiter fn);
int tl_push_child_file(lua_State *L, int fd, const char *mode, int child);
/* Called with the main thread every 1/15 s while a read of such a file waits for its pipe;
   nonzero: a stop is due, the read fails with EINTR. */
typedef int (*tl_pipe_waiting)(lua_State *L);
void tl_set_pipe_waiting(tl_pipe_waiting fn);
#endif
