/* inherited.c: the descriptors taskrun was started with, noted before anything of its own is
   open, so that a command gets those (a jobserver's pipe, `3>log`) and none of taskrun's or Lua's. */
#define _GNU_SOURCE
#include "inherited.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cs_fd_range cs_foreign[CS_MAX_INHERITED + 1];
int cs_foreign_count = 0;

struct linux_dirent64 { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; };

/* Lists /proc/self/fd with system calls only (no allocation, nothing initialized yet) and
   notes the ranges above 2 that were not open. Without /proc, or with more descriptors than
   it keeps, nothing is noted: commands then get every descriptor, as before. */
static void note_inherited(void) {
  int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  int open_fds[CS_MAX_INHERITED], count = 0, overflow = 0;
  char buffer[4096] __attribute__((aligned(8)));
  long n;
  while ((n = syscall(SYS_getdents64, dir, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < n; ) {
      struct linux_dirent64 *entry = (struct linux_dirent64 *)(buffer + at);
      at += entry->reclen;
      int fd = 0;
      const char *c = entry->name;
      if (*c < '0' || *c > '9') continue;  /* . and .. */
      while (*c >= '0' && *c <= '9') fd = fd * 10 + (*c++ - '0');
      if (fd < 3 || fd == dir) continue;
      if (count == CS_MAX_INHERITED) { overflow = 1; break; }
      int i = count++;  /* insertion sort: a handful at most */
      while (i > 0 && open_fds[i - 1] > fd) { open_fds[i] = open_fds[i - 1]; i--; }
      open_fds[i] = fd;
    }
  }
  close(dir);
  if (n < 0 || overflow) return;
  unsigned lo = 3;
  for (int i = 0; i < count; i++) {
    if ((unsigned)open_fds[i] > lo) cs_foreign[cs_foreign_count++] = (struct cs_fd_range){ lo, (unsigned)open_fds[i] - 1 };
    lo = (unsigned)open_fds[i] + 1;
  }
  cs_foreign[cs_foreign_count++] = (struct cs_fd_range){ lo, ~0U };
}
__attribute__((section(".preinit_array"), used))
static void (*const g_note_inherited)(void) = note_inherited;
