/* childfile.c: the Lua file handle io.popen returns, over a pipe to a command taskrun started. */
#include "CLuaShim.h"
#include <errno.h>
#include <stdio.h>

/* liolib's luaL_Stream first, so every io function takes it as one of its own files. */
typedef struct {
  luaL_Stream stream;
  int child;
} child_file;

static tl_child_waiter g_waiter;

void tl_set_child_waiter(tl_child_waiter fn) { g_waiter = fn; }

/* The closef of such a file: closes the pipe (the command sees its end), waits for the
   command and returns os.execute's results. */
static int close_child_file(lua_State *L) {
  child_file *p = (child_file *)luaL_checkudata(L, 1, LUA_FILEHANDLE);
  fclose(p->stream.f);
  int status = g_waiter ? g_waiter(L, p->child) : 0;
  errno = 0;
  return luaL_execresult(L, status);
}

int tl_push_child_file(lua_State *L, int fd, const char *mode, int child) {
  FILE *f = fdopen(fd, mode);
  if (f == NULL) return 0;
  child_file *p = (child_file *)lua_newuserdatauv(L, sizeof *p, 0);
  p->stream.f = f;
  p->stream.closef = close_child_file;
  p->child = child;
  luaL_setmetatable(L, LUA_FILEHANDLE);
  return 1;
}
