/* xxHash (XXH3, 128 bits), from the system (Debian: libxxhash-dev): the run store's content hashes. */
#include <xxhash.h>
