/* LuaSources: the Lua half of taskrun, its .lua files compiled into the binary with #embed. */
#ifndef LUASOURCES_H
#define LUASOURCES_H

#include <stddef.h>

/* The text of the embedded file `name` ("prelude.lua", "busted/declare.lua", …) and its
   length, or NULL when there is none. */
const char *tl_lua_source(const char *name, size_t *length);

#endif
