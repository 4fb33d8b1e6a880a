/* spawn.c: posix_spawn in a new process group, and pidfd_open for one-waiter reaping. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int cs_spawn(char *const argv[], char *const envp[], const char *cwd,
             int out_fd, int err_fd, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t def, empty;
  int rc;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  if (cwd) posix_spawn_file_actions_addchdir_np(&fa, cwd);
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGQUIT);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                  POSIX_SPAWN_SETSIGMASK);
  rc = posix_spawnp(pid, argv[0], &fa, &attr, argv, envp ? envp : environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  return rc;
}

int cs_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

int cs_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  /* the read end is ours and drained until EAGAIN; the child's write end stays blocking */
  return fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) == 0 ? 0 : -1;
}

int cs_exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}
