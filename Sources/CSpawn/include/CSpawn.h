/* CSpawn: processes and signals as taskrun needs them, where Glibc's Swift overlay falls short. */
#ifndef CSPAWN_H
#define CSPAWN_H
#include <stddef.h>
#include <sys/types.h>

/* {====== spawn.c */
/* Start `path` (already resolved) with stdin from /dev/null, stdout and stderr to the given
   fds, in a new process group, every signal at its default (those above 31: the ones not at
   their default when the first command was started) and none blocked, and killed
   (PR_SET_PDEATHSIG) if the spawning thread dies. envp NULL = inherit; cwd NULL = inherit.
   Returns 0 or an errno (of exec, chdir, …; the child is then reaped). *pidfd is a
   close-on-exec pidfd of the child (-1 on kernels without one). */
int cs_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
             int out_fd, int err_fd, pid_t *pid, int *pidfd);
/* cs_spawn with stdin from `in_fd` (-1: /dev/null): io.popen(cmd, "w") writes to a pipe. */
int cs_spawn_input(const char *path, char *const argv[], char *const envp[], const char *cwd,
                   int in_fd, int out_fd, int err_fd, pid_t *pid, int *pidfd);
/* Find `name` as execvp does in the colon-separated `path` (NULL: a default) into out:
   0, ENOENT, EACCES (found but not executable) or ENAMETOOLONG. A name with '/' is itself. */
int cs_resolve(const char *name, const char *path, char *out, size_t size);
/* Close-on-exec pipe with a non-blocking read end fds[0]; fds[1] write end. 0 or -1. */
int cs_pipe(int fds[2]);
struct pollfd;
/* poll(2) with a timeout in seconds (ppoll: to the nanosecond, not the millisecond). */
int cs_poll(struct pollfd *fds, unsigned long count, double seconds);
/* Has child `pid` exited? 1 with its code (128 + signal when killed) in *code, and reaped if
   `reap`; otherwise left a zombie: until cs_reap, its pid and process group id cannot be
   reused. 0 if not. */
int cs_exited(pid_t pid, int reap, int *code);
/* Reap an exited child: 0, or -1 if it has not exited. */
int cs_reap(pid_t pid);
/* If child `pid` has stopped since last asked: the signal that stopped it; else 0. */
int cs_stop_signal(pid_t pid);
/* }====== */

/* {====== descendants.c */
/* PR_SET_CHILD_SUBREAPER: orphaned descendants become taskrun's children. 0 or -1. */
int cs_become_subreaper(void);
/* Whether this process has any child at all (one waitid, no /proc). */
int cs_has_children(void);
/* This process's children now (zombies too) and their process groups, at most max; -1 on error. */
int cs_children(pid_t *pids, pid_t *groups, int max);
/* }====== */

/* {====== signals.c */
/* Block SIGINT, SIGTERM, SIGHUP, SIGTSTP and SIGCONT in the calling thread (a program named
   taskrun does it before main). */
void cs_block_signals(void);
/* Handle those signals by writing the signal number as a byte to `fd` (non-blocking), then
   unblock them in the calling thread. 0 or -1. */
int cs_handle_signals(int fd);
/* Names the calling thread (at most 15 bytes), as ps and /proc/PID/task/TID/comm show it. */
void cs_name_thread(const char *name);
/* }====== */

/* {====== wakeup.c */
/* The thread that runs Lua (the calling one) can be woken from a blocking system call
   (a read of the terminal or of a pipe) by cs_wake_lua_thread: a signal whose handler does
   nothing and does not restart the call, which then fails with EINTR. 0 or -1. */
int cs_prepare_lua_wakeup(void);
/* From any thread: wakes the thread cs_prepare_lua_wakeup named (nothing if none). */
void cs_wake_lua_thread(void);
/* }====== */

/* {====== processors.c */
/* Processors this process may run on (its affinity), fewer if a cgroup CPU quota allows
   fewer (rounded up); at least 1. */
long cs_processor_count(void);
/* }====== */
#endif
