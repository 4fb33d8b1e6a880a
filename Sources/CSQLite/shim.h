/* The SQLite 3 C API, from the system (Debian: libsqlite3-dev): the run store's database. */
#include <sqlite3.h>
