/* sources.c: the table of embedded .lua files (clang's #embed reads them at compile time). */
#pragma clang diagnostic ignored "-Wc23-extensions"
#include "LuaSources.h"
#include <string.h>

static const char prelude[] = {
#embed "lua/prelude.lua"
};
static const char sandbox[] = {
#embed "lua/sandbox.lua"
};
static const char dryrun[] = {
#embed "lua/dryrun.lua"
};
static const char format[] = {
#embed "lua/format.lua"
};
static const char busted_declare[] = {
#embed "lua/busted/declare.lua"
};
static const char busted_run[] = {
#embed "lua/busted/run.lua"
};
static const char busted_loaders[] = {
#embed "lua/busted/loaders.lua"
};
static const char busted_base[] = {
#embed "lua/busted/base.lua"
};
static const char busted_gtest[] = {
#embed "lua/busted/gtest.lua"
};
static const char busted_json[] = {
#embed "lua/busted/json.lua"
};
static const char busted_handlers[] = {
#embed "lua/busted/handlers.lua"
};
static const char busted_files[] = {
#embed "lua/busted/files.lua"
};

static const struct { const char *name; const char *text; size_t length; } sources[] = {
  { "prelude.lua", prelude, sizeof prelude },
  { "sandbox.lua", sandbox, sizeof sandbox },
  { "dryrun.lua", dryrun, sizeof dryrun },
  { "format.lua", format, sizeof format },
  { "busted/declare.lua", busted_declare, sizeof busted_declare },
  { "busted/run.lua", busted_run, sizeof busted_run },
  { "busted/loaders.lua", busted_loaders, sizeof busted_loaders },
  { "busted/base.lua", busted_base, sizeof busted_base },
  { "busted/gtest.lua", busted_gtest, sizeof busted_gtest },
  { "busted/json.lua", busted_json, sizeof busted_json },
  { "busted/handlers.lua", busted_handlers, sizeof busted_handlers },
  { "busted/files.lua", busted_files, sizeof busted_files },
};

const char *tl_lua_source(const char *name, size_t *length) {
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
    if (strcmp(sources[i].name, name) == 0) {
      *length = sources[i].length;
      return sources[i].text;
    }
  }
  *length = 0;
  return NULL;
}
