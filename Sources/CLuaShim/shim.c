/* shim.c: trampolines, the interrupt hook and tracebacks; every longjmp happens here. */
#include "CLuaShim.h"
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static tl_dispatch_fn g_dispatch = NULL;
static _Thread_local tl_control *g_current = NULL;  /* one Lua state per thread */
static atomic_int g_interrupt = 0;

void tl_set_dispatch(tl_dispatch_fn fn) { g_dispatch = fn; }

/* Called by Lua; calls Swift, which has returned before anything is raised. */
static int tl_entry(lua_State *L) {
  int index = (int)lua_tointeger(L, lua_upvalueindex(1));
  int r = g_dispatch(L, index);
  if (r >= 0) return r;
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
void tl_interrupt(int on) { atomic_store(&g_interrupt, on); }
int tl_interrupted(void) { return atomic_load(&g_interrupt); }

/* Every 1000 instructions: stop cancelled, interrupted or overdue bodies; time-slice the rest. */
static void tl_hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  tl_control *c = g_current;
  if (c == NULL) {
    if (atomic_load(&g_interrupt)) {  /* top-level code outside any body: stop it too */
      lua_sethook(L, tl_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
      luaL_where(L, 0);
      lua_pushstring(L, "interrupted");
      lua_concat(L, 2);
      lua_error(L);
    }
    return;
  }
  const char *why = NULL;
  if (c->cancelled) { why = "cancelled"; c->raised = 1; }
  else if (!c->shielded && atomic_load(&g_interrupt)) { why = "interrupted"; c->raised = 2; }
  else {
    double now = (c->deadline > 0 || c->slice_end > 0) ? tl_monotonic() : 0;
    if (c->deadline > 0 && now >= c->deadline) { why = "timed out"; c->raised = 3; }
    else if (c->slice_end > 0 && now >= c->slice_end && L == c->thread && lua_isyieldable(L)) {
      c->slice_end = 0;
      lua_yield(L, 0);            /* in a hook this returns; the VM yields afterwards */
      return;
    }
  }
  if (why) {
    /* re-arm on every line so that a pcall around the loop cannot swallow it (as Redis does) */
    lua_sethook(L, tl_hook, LUA_MASKCOUNT | LUA_MASKLINE, 1);
    luaL_where(L, 0);
    lua_pushstring(L, why);
    lua_concat(L, 2);
    lua_error(L);
  }
}

void tl_install_hook(lua_State *L) { lua_sethook(L, tl_hook, LUA_MASKCOUNT, 1000); }

int tl_msghandler(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

void tl_traceback(lua_State *L, lua_State *co, const char *msg) {
  luaL_traceback(L, co, msg, 0);
}

int tl_resetthread(lua_State *co, lua_State *from) {
#if LUA_VERSION_RELEASE_NUM >= 50406
  (void)from; return lua_closethread(co, from);
#elif LUA_VERSION_RELEASE_NUM == 50405
  return lua_resetthread(co, from);
#else
  (void)from; return lua_resetthread(co);
#endif
}

void tl_where(lua_State *L, int level) { luaL_where(L, level); }

static int tl_tostring_k(lua_State *L) {
  luaL_tolstring(L, 1, NULL);
  return 1;
}

int tl_safe_tostring(lua_State *L, int idx) {
  idx = lua_absindex(L, idx);
  lua_pushcfunction(L, tl_tostring_k);
  lua_pushvalue(L, idx);
  return lua_pcallk(L, 1, 1, 0, 0, NULL);
}

void tl_line_buffer_stdout(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
