/* childfile.c: the Lua file handle io.popen returns, over a pipe to a command taskrun started. */
#define _GNU_SOURCE
#include "CLuaShim.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

static tl_pipe_waiting g_waiting;

void tl_set_pipe_waiting(tl_pipe_waiting fn) { g_waiting = fn; }

/* The pipe under the FILE, with the main thread the waiting callback is given. */
typedef struct {
  int fd;
  lua_State *main;
} pipe_cookie;

/* A read that waits calls g_waiting every 1/15 s (the live view draws, prints are flushed)
   and whenever a signal interrupts the wait; when it says a stop is due, the read fails with
   EINTR, as a blocked read(2) did at an interrupt's wake-up. Any other signal (SIGINT landing
   on this thread before the watcher has posted it: poll is not restarted as read was) waits on. */
static ssize_t pipe_read(void *c, char *buffer, size_t size) {
  pipe_cookie *p = c;
  for (;;) {
    struct pollfd fd = { p->fd, POLLIN, 0 };
    int ready = poll(&fd, 1, g_waiting ? 66 : -1);
    if (ready < 0 && errno != EINTR) return -1;
    if (ready <= 0) {
      if (g_waiting == NULL || g_waiting(p->main)) { errno = EINTR; return -1; }
      continue;
    }
    return read(p->fd, buffer, size);
  }
}

/* stdio takes a short write as an error: write all of it. */
static ssize_t pipe_write(void *c, const char *buffer, size_t size) {
  pipe_cookie *p = c;
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(p->fd, buffer + done, size - done);
    if (n < 0) return done > 0 ? (ssize_t)done : -1;
    done += (size_t)n;
  }
  return (ssize_t)done;
}

static int pipe_close(void *c) {
  pipe_cookie *p = c;
  int rc = close(p->fd);
  free(p);
  return rc;
}

int tl_push_child_file(lua_State *L, int fd, const char *mode, int child) {
  pipe_cookie *cookie = malloc(sizeof *cookie);
  if (cookie == NULL) return 0;
  cookie->fd = fd;
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  cookie->main = lua_tothread(L, -1);
  lua_pop(L, 1);
  cookie_io_functions_t functions = { pipe_read, pipe_write, NULL, pipe_close };
  FILE *f = fopencookie(cookie, mode, functions);
  if (f == NULL) { free(cookie); return 0; }
  child_file *p = (child_file *)lua_newuserdatauv(L, sizeof *p, 0);
  p->stream.f = f;
  p->stream.closef = close_child_file;
  p->child = child;
  luaL_setmetatable(L, LUA_FILEHANDLE);
  return 1;
}
