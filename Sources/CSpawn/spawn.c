/* spawn.c: start a command in its own process group, tied to taskrun's life, and reap it. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include "inherited.h"
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct spawn_args {
  const char *path;
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int in_fd, out_fd, err_fd;  /* in_fd -1: /dev/null */
  pid_t parent;
  const struct cs_confinement *confinement;  /* NULL: none */
  int nice_delta, ioprio;  /* cs_set_spawn_qos's, for this spawn */
  int terminal;  /* cs_set_spawn_terminal's: the terminal whose foreground it takes (-1: none) */
  volatile int error;   /* written by the child before it exits: why exec failed */
};

/* The kernel's own sigaction: glibc's refuses the two signals it keeps for itself (32 and
   33), yet a program can start with them ignored (glibc's posix_spawn leaves them so). */
struct kernel_sigaction { void (*handler)(int); unsigned long flags; void *restorer; unsigned long mask; };
static int kernel_sigaction(int sig, const struct kernel_sigaction *set, struct kernel_sigaction *old) {
  return (int)syscall(SYS_rt_sigaction, sig, set, old, sizeof(unsigned long));
}

/* What every child needs, found once: /dev/null open above the standard descriptors, and the
   signals above 31 that are not at their default. Every spawn is a wait for the spawning
   thread until the child has exec'd, so work moved out of the child is waited for once. */
static int g_null = -1;
static unsigned long long g_above31;  /* bit sig - 32 (glibc's sigset_t refuses 32 and 33) */
static unsigned g_fd_limit = 1024;   /* where closing one by one stops (no close_range) */
static pthread_key_t g_stack;         /* the child's stack, one per spawning thread, kept */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void find_once(void) {
  pthread_key_create(&g_stack, free);  /* freed when its thread ends (Slurm's, from a pool) */
  long limit = sysconf(_SC_OPEN_MAX);
  if (limit > 0) g_fd_limit = limit < 65536 ? (unsigned)limit : 65536;
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0 && null < 3) {  /* a standard descriptor was closed: keep clear of them */
    g_null = fcntl(null, F_DUPFD_CLOEXEC, 3);
    close(null);
  } else {
    g_null = null;
  }
  for (int sig = 32; sig < NSIG; sig++) {
    struct kernel_sigaction old;
    if (kernel_sigaction(sig, NULL, &old) == 0 && old.handler != SIG_DFL) g_above31 |= 1ULL << (sig - 32);
  }
}

/* Runs in the child, on its own stack, sharing memory with the suspended parent (as glibc's
   posix_spawn does): only system calls, no allocation. */
static int child_main(void *arg) {
  struct spawn_args *a = arg;
  struct sigaction dfl;
  struct kernel_sigaction kernel_dfl = { SIG_DFL, 0, NULL, 0 };
  sigset_t empty;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  /* Ignored signals stay ignored through exec, and a handler of taskrun's must not run here
     once signals are unblocked: every signal gets its default. The standard ones are set
     without looking (29 system calls; looking first took 64 and then some); those above 31
     that were not at their default when taskrun first spawned (inherited, or glibc's own)
     are set too. */
  for (int sig = 1; sig < 32; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL);
  for (int sig = 32; sig < NSIG; sig++)
    if (g_above31 >> (sig - 32) & 1) kernel_sigaction(sig, &kernel_dfl, NULL);
  if (setpgid(0, 0) != 0) goto fail;
  /* An interactive command's group becomes the terminal's foreground before it runs a thing
     (as a shell's job does): what it reads is not stopped by SIGTTIN, and Ctrl-C reaches it.
     Its signals are still blocked here, SIGTTOU too, so a background taskrun may hand it. */
  if (a->terminal >= 0 && tcsetpgrp(a->terminal, getpid()) != 0) goto fail;
  /* Die with taskrun even if it is killed with SIGKILL. The signal follows the thread that
     spawned us: taskrun spawns commands from its scheduler thread, which lives as long as
     the run, and Slurm's tools from a thread that waits for them. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) goto fail;
  if (getppid() != a->parent) _exit(127);  /* taskrun died before the line above */
  /* Its quality of service, before it runs a thing: what it starts inherits it. Lowering
     priority needs no privilege; a failure leaves the command as it would have been. */
  if (a->nice_delta > 0) {
    errno = 0;
    int now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0) (void)setpriority(PRIO_PROCESS, 0, now + a->nice_delta > 19 ? 19 : now + a->nice_delta);
  }
  if (a->ioprio >= 0) (void)syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, a->ioprio);
  if (a->in_fd >= 0) {
    if (dup2(a->in_fd, 0) < 0) goto fail;
  } else {
    int null = g_null >= 0 ? g_null : open("/dev/null", O_RDONLY);
    if (null < 0) goto fail;
    if (null != 0) {
      if (dup2(null, 0) < 0) goto fail;
      if (null != g_null) close(null);
    }
  }
  if (dup2(a->out_fd, 1) < 0 || dup2(a->err_fd, 2) < 0) goto fail;
  if (a->confinement) {
    int error = cs_sandbox_enter(a->confinement, a->parent);
    if (error != 0) { errno = error; goto fail; }
  } else if (a->cwd && chdir(a->cwd) != 0) {
    goto fail;
  }
  /* Nothing taskrun or Lua opened (a file `io.open` is writing would make its exec fail
     with ETXTBSY for as long as this command runs; a pipe would never see its end). */
  /* A confined command gets no descriptor but its three: one taskrun was started with (a
     file, a socket) would reach past the sandbox's rules. */
  if (a->confinement && syscall(SYS_close_range, 3, ~0U, 0) != 0)
    for (unsigned fd = 3; fd < g_fd_limit; fd++) close((int)fd);
  for (int i = 0; i < cs_foreign_count; i++)
    if (syscall(SYS_close_range, cs_foreign[i].first, cs_foreign[i].last, 0) != 0)
      for (unsigned fd = cs_foreign[i].first; fd <= cs_foreign[i].last && fd < g_fd_limit; fd++) close((int)fd);
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, NULL);
  execve(a->path, a->argv, a->envp);
fail:
  a->error = errno ? errno : EINVAL;
  _exit(127);
}

/* pidfd_open(2): a descriptor that becomes readable when the process exits; -1 on error. */
static int pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* One clone of child_main with `a`: 0 and the child (reaped if its exec failed, with the
   reason in a->error), or the clone's errno. */
static int spawn_once(struct spawn_args *a, pid_t *pid, int *pidfd) {
  /* The parent is suspended until the child has exec'd or exited (CLONE_VFORK); the child
     runs on a stack of its own. */
  static const size_t size = 64 * 1024;
  pthread_once(&g_once, find_once);
  char *stack = pthread_getspecific(g_stack);
  if (stack == NULL) {
    if ((stack = malloc(size)) == NULL) return ENOMEM;
    pthread_setspecific(g_stack, stack);
  }
  sigset_t all, old;
  sigfillset(&all);
  /* No handler of ours may run in the child while it shares our memory. SIGCHLD has none
     (signals.c): left unblocked, a command's exit in this window is dropped where it is
     sent. Blocked, it would be pending for the whole process and wake another thread. */
  sigdelset(&all, SIGCHLD);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  /* The pidfd comes with the child (CLONE_PIDFD, Linux 5.2), or from pidfd_open below. */
  static _Atomic int has_clone_pidfd = 1;
  int fd = -1;
  pid_t child = -1;
  a->error = 0;
  if (has_clone_pidfd) {
    child = clone(child_main, stack + size, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, a, &fd);
    if (child < 0 && errno == EINVAL) { has_clone_pidfd = 0; fd = -1; }
  }
  if (!has_clone_pidfd) child = clone(child_main, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
  int saved = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (child < 0) return saved;
  if (a->error != 0) {
    int status;
    if (fd >= 0) close(fd);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    return 0;
  }
  *pid = child;
  *pidfd = fd >= 0 ? fd : pidfd_open(child);
  return 0;
}

int cs_spawn(const char *path, char *const argv[], char *const envp[], const char *cwd,
             int out_fd, int err_fd, pid_t *pid, int *pidfd) {
  return cs_spawn_input(path, argv, envp, cwd, -1, out_fd, err_fd, pid, pidfd);
}

int cs_spawn_input(const char *path, char *const argv[], char *const envp[], const char *cwd,
                   int in_fd, int out_fd, int err_fd, pid_t *pid, int *pidfd) {
  return cs_spawn_confined(path, argv, envp, cwd, in_fd, out_fd, err_fd, NULL, pid, pidfd);
}

/* The next spawns' quality of service on this thread (cs_set_spawn_qos). */
static _Thread_local int g_qos_nice = 0, g_qos_ioprio = -1;
static _Thread_local int g_terminal = -1;

void cs_set_spawn_terminal(int fd) { g_terminal = fd; }

void cs_set_spawn_qos(int nice_delta, int ioprio) {
  g_qos_nice = nice_delta;
  g_qos_ioprio = ioprio;
}

int cs_spawn_confined(const char *path, char *const argv[], char *const envp[], const char *cwd,
                      int in_fd, int out_fd, int err_fd, const struct cs_confinement *confinement,
                      pid_t *pid, int *pidfd) {
  static _Atomic pid_t self = 0;  /* a process's id does not change: one getpid a process */
  if (self == 0) self = getpid();
  if (confinement) cs_sandbox_prepare();
  struct spawn_args a = { path, argv, envp ? envp : environ, cwd, in_fd, out_fd, err_fd, self, confinement,
                          g_qos_nice, g_qos_ioprio, g_terminal, 0 };
  int rc = spawn_once(&a, pid, pidfd);
  if (rc != 0) return rc;
  if (a.error != ENOEXEC) return a.error;
  /* An executable file the kernel cannot run (a script without "#!"): as execvp, sh and
     make do, /bin/sh runs it, with the command's arguments after its path. */
  size_t count = 0;
  while (argv[count] != NULL) count++;
  char **shell = malloc((count + 2) * sizeof *shell);
  if (shell == NULL) return ENOMEM;
  shell[0] = "/bin/sh";
  shell[1] = (char *)path;
  for (size_t i = 1; i <= count; i++) shell[i + 1] = argv[i];  /* argv[count] is the NULL */
  if (count == 0) shell[2] = NULL;
  a.path = "/bin/sh";
  a.argv = shell;
  rc = spawn_once(&a, pid, pidfd);
  free(shell);
  return rc != 0 ? rc : a.error;
}

int cs_resolve(const char *name, const char *path, char *out, size_t size) {
  if (strchr(name, '/')) {
    if (strlen(name) >= size) return ENAMETOOLONG;
    strcpy(out, name);
    return 0;
  }
  if (*name == '\0') return ENOENT;
  if (path == NULL) path = "/usr/local/bin:/usr/bin:/bin";
  int found = ENOENT;
  for (const char *p = path;; ) {
    const char *end = strchrnul(p, ':');
    size_t dir = (size_t)(end - p);
    /* An empty entry is the current folder, as execvp has it. */
    if (dir + 1 + strlen(name) + 1 <= size) {
      if (dir == 0) { strcpy(out, name); }
      else { memcpy(out, p, dir); out[dir] = '/'; strcpy(out + dir + 1, name); }
      struct stat st;
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
        if (access(out, X_OK) == 0) return 0;
        found = EACCES;
      }
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  return found;
}

int cs_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  /* the read end is ours and drained until EAGAIN; the child's write end stays blocking */
  return fcntl(fds[0], F_SETFL, O_RDONLY | O_NONBLOCK) == 0 ? 0 : -1;  /* a new pipe's end has no other flag */
}

int cs_poll(struct pollfd *fds, unsigned long count, double seconds) {
  struct timespec span;
  span.tv_sec = (time_t)seconds;
  span.tv_nsec = (long)((seconds - (double)span.tv_sec) * 1e9);
  return ppoll(fds, (nfds_t)count, &span, NULL);
}

static void cs_note_usage(const struct rusage *ru, struct cs_usage *usage) {
  if (!usage) return;
  usage->peak_kb = ru->ru_maxrss;
  usage->cpu = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 + (double)ru->ru_stime.tv_sec
    + (double)ru->ru_stime.tv_usec / 1e6;
}

int cs_exited(pid_t pid, int reap, int *code, struct cs_usage *usage) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int r;
  if (reap) {
    /* wait4, not waitid: it reports what the child used (peak memory, CPU) as it reaps it */
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    pid_t got;
    while ((got = wait4(pid, &status, WNOHANG, &ru)) < 0 && errno == EINTR) {}
    if (got != pid) return 0;
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    cs_note_usage(&ru, usage);
    return 1;
  }
  while ((r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT)) != 0 && errno == EINTR) {}
  if (r != 0 || info.si_pid != pid) return 0;
  *code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
  return 1;
}

int cs_reap(pid_t pid) { return cs_reap_usage(pid, NULL); }

int cs_reap_usage(pid_t pid, struct cs_usage *usage) {
  int status;
  pid_t r;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while ((r = wait4(pid, &status, WNOHANG, &ru)) < 0 && errno == EINTR) {}
  if (r != pid) return -1;
  cs_note_usage(&ru, usage);
  return 0;
}

int cs_stop_signal(pid_t pid) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  if (waitid(P_PID, (id_t)pid, &info, WSTOPPED | WNOHANG) != 0 || info.si_pid != pid) return 0;
  return info.si_code == CLD_STOPPED || info.si_code == CLD_TRAPPED ? info.si_status : 0;
}
