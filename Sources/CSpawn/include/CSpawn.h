/* CSpawn: processes and signals as taskrun needs them, where Glibc's Swift overlay falls short. */
#ifndef CSPAWN_H
#define CSPAWN_H
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

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
/* The sandbox a confined command enters before exec (sandbox.c): the namespaces to join
   (user_fd -1: none; net_fd is joined unless `network`), the Landlock ruleset to restrict
   itself with, and the absolute directory to start in (joining a mount namespace leaves
   the old one). */
struct cs_confinement {
  int user_fd, mnt_fd, net_fd, ruleset_fd;
  int network;
  const char *directory;
};
/* cs_spawn_input with the command confined by `confinement` (NULL: not confined, cwd as
   cs_spawn's); an error entering it is returned as exec's would be. */
int cs_spawn_confined(const char *path, char *const argv[], char *const envp[], const char *cwd,
                      int in_fd, int out_fd, int err_fd, const struct cs_confinement *confinement,
                      pid_t *pid, int *pidfd);
/* Find `name` as execvp does in the colon-separated `path` (NULL: a default) into out:
   0, ENOENT, EACCES (found but not executable) or ENAMETOOLONG. A name with '/' is itself. */
/* The quality of service of the commands this thread spawns from now on: niceness raised by
   nice_delta (0: as taskrun's), ioprio for ioprio_set (-1: as taskrun's). */
void cs_set_spawn_qos(int nice_delta, int ioprio);
/* The commands this thread spawns from now on take the foreground of terminal `fd` (its
   process group becomes the terminal's) before they run (-1: they do not). */
void cs_set_spawn_terminal(int fd);
/* A terminal handed to an interactive command: which (fd, -1: none), the group that had its
   foreground then (taskrun's), and its modes then; the command's own modes while Ctrl-Z has it
   stopped. */
struct cs_terminal {
  int fd;
  pid_t previous;
  int has_modes, has_job_modes;
  struct termios modes, job_modes;
};
/* Records terminal `fd` before its foreground is handed to a command: 0 when taskrun's group
   has it (t->fd is then `fd`), else ENOTTY or EPERM (t->fd -1: nothing is handed over). */
int cs_hand_terminal(int fd, struct cs_terminal *t);
/* Takes the foreground back for the group that had it, with the modes it had, if the
   command's group `group` has it (0: any but the previous, for a command that failed to
   start); never when anything else has it (taskrun was put in the background: the terminal
   is its shell's). `keep_job_modes`: the command's modes are kept for cs_give_terminal
   (Ctrl-Z). SIGTTOU blocked for the calls. 0, or an errno (EPERM: not taskrun's to take). */
int cs_take_terminal(struct cs_terminal *t, pid_t group, int keep_job_modes);
/* Gives the foreground to the command's group `group` again, with the modes it had, if
   taskrun's group has it (fg after Ctrl-Z): 0, or an errno (EPERM: not taskrun's). */
int cs_give_terminal(struct cs_terminal *t, pid_t group);
/* The user id of the process at the other end of Unix socket `fd`; -1 if unknown. */
long cs_peer_uid(int fd);
int cs_resolve(const char *name, const char *path, char *out, size_t size);
/* Close-on-exec pipe with a non-blocking read end fds[0]; fds[1] write end. 0 or -1. */
int cs_pipe(int fds[2]);
struct pollfd;
/* poll(2) with a timeout in seconds (ppoll: to the nanosecond, not the millisecond). */
int cs_poll(struct pollfd *fds, unsigned long count, double seconds);
/* What a reaped child used: its peak resident memory (KiB) and CPU seconds (user + system). */
struct cs_usage {
  long peak_kb;
  double cpu;
};
/* Has child `pid` exited? 1 with its code (128 + signal when killed) in *code, and reaped if
   `reap` (with what it used in *usage, when not NULL); otherwise left a zombie: until
   cs_reap, its pid and process group id cannot be reused. 0 if not. */
int cs_exited(pid_t pid, int reap, int *code, struct cs_usage *usage);
/* Reap an exited child: 0, or -1 if it has not exited. */
int cs_reap(pid_t pid);
int cs_reap_usage(pid_t pid, struct cs_usage *usage);
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

/* {====== sandbox.c */
/* The kernel's Landlock ABI version (Linux 6.12: 6), or -errno (-ENOSYS, -EOPNOTSUPP: none). */
int cs_landlock_abi(void);
/* A Landlock ruleset (close-on-exec, *out) letting commands read and run the system (/usr,
   /bin, /lib*, /opt, /proc, /sys, /etc as anyone may read it), use /dev/null, zero, full,
   random and urandom, read and run under each of `read`, do anything but make devices under
   each of `write` (NULL-ended lists of paths that exist), connect and bind TCP only if
   `network`, and signal nothing outside it (nor reach abstract sockets outside, unless
   `network`). 0, or an errno with `why` said. */
int cs_landlock_ruleset(const char *const *read, const char *const *write, int network, int *out,
                        char *why, size_t size);
/* A mount namespace where everything is read-only but the folders of `writable` (NULL-ended,
   each bound onto itself), and an empty network namespace; for a user other than root both
   are owned by a new user namespace mapping the user onto itself (*user_fd, else -1). Made
   by a helper process that is reaped before this returns. 0, or an errno with `why` said. */
int cs_sandbox_namespaces(const char *const *writable, int *user_fd, int *mnt_fd, int *net_fd,
                          char *why, size_t size);
/* Removes the folder `path` and everything in it, following no link. */
void cs_remove_tree(const char *path);
/* Builds the seccomp programs once (cs_spawn_confined calls it). */
void cs_sandbox_prepare(void);
/* In a spawned child: joins the namespaces, starts in the directory, drops every capability
   but a root's owner rights, sets no_new_privs, installs the seccomp program and restricts
   itself to the ruleset. 0 or an errno. */
int cs_sandbox_enter(const struct cs_confinement *c, pid_t parent);
/* }====== */

/* {====== processors.c */
/* Processors this process may run on (its affinity), fewer if a cgroup CPU quota allows
   fewer (rounded up); at least 1. */
long cs_processor_count(void);
/* }====== */
#endif
