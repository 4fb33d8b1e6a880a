/* CSpawn: start a command in its own process group, and a pollable handle on its exit. */
#ifndef CSPAWN_H
#define CSPAWN_H
#include <sys/types.h>

/* Spawn argv[0] (searched in PATH when it has no '/') with stdin from /dev/null, stdout and
   stderr to the given fds, in a new process group, with default SIGINT/SIGTERM/SIGPIPE
   dispositions. envp NULL = inherit; cwd NULL = inherit. Returns 0 or an errno. */
int cs_spawn(char *const argv[], char *const envp[], const char *cwd,
             int out_fd, int err_fd, pid_t *pid);

/* pidfd_open(2): a descriptor that becomes readable when the process exits; -1 on error. */
int cs_pidfd_open(pid_t pid);

/* Close-on-exec pipe with a non-blocking read end fds[0]; fds[1] write end. 0 or -1. */
int cs_pipe(int fds[2]);

/* Decode a waitpid status: exit code, or 128 + signal number when killed. */
int cs_exit_code(int status);
#endif
