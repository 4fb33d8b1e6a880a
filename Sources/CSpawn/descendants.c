/* descendants.c: taskrun as a child subreaper, and the children it has at a given moment. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int cs_become_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1); }

/* Reads "pid (comm) state ppid pgrp" from /proc/PID/stat; comm may hold spaces and ')'. */
static int read_stat(const char *pid, int *ppid, int *pgrp, char *state) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%s/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  char *close_paren = strrchr(buf, ')');
  if (!close_paren) return -1;
  return sscanf(close_paren + 1, " %c %d %d", state, ppid, pgrp) == 3 ? 0 : -1;
}

int cs_has_children(void) {
  siginfo_t info;
  /* ECHILD: none at all, running or not; no need to read /proc. */
  return waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WCONTINUED | WNOHANG | WNOWAIT) == 0;
}

int cs_children(pid_t *out, pid_t *groups, int max) {
  DIR *dir = opendir("/proc");
  if (!dir) return -1;
  int me = getpid(), count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL && count < max) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    int ppid, pgrp;
    char state;
    if (read_stat(entry->d_name, &ppid, &pgrp, &state) != 0 || ppid != me) continue;
    out[count] = (pid_t)atoi(entry->d_name);
    groups[count] = (pid_t)pgrp;
    count++;
  }
  closedir(dir);
  return count;
}
