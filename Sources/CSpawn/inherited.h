/* inherited.h: what spawn.c reads of inherited.c (not part of CSpawn's interface). */
#ifndef CS_INHERITED_H
#define CS_INHERITED_H

#define CS_MAX_INHERITED 256

/* The descriptors a command must not get, as ranges [first, last] above 2: every one
   taskrun was not started with. Empty when they could not be listed. */
struct cs_fd_range { unsigned first, last; };
extern struct cs_fd_range cs_foreign[CS_MAX_INHERITED + 1];
extern int cs_foreign_count;

#endif
