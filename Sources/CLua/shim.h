/* The Lua 5.4 C API as one header for Swift. */
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
