/* sandbox.c: what `--sandbox` does to a command: namespaces, Landlock, seccomp and capabilities. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Landlock's interface, declared here: Debian's kernel headers predate ABI 6. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
struct ll_ruleset_attr { uint64_t handled_access_fs, handled_access_net, scoped; };
struct ll_path_beneath { uint64_t allowed_access; int32_t parent_fd; } __attribute__((packed));
enum { LL_RULE_PATH_BENEATH = 1, LL_CREATE_RULESET_VERSION = 1 };
enum {
  FS_EXECUTE = 1 << 0, FS_WRITE_FILE = 1 << 1, FS_READ_FILE = 1 << 2, FS_READ_DIR = 1 << 3,
  FS_REMOVE_DIR = 1 << 4, FS_REMOVE_FILE = 1 << 5, FS_MAKE_CHAR = 1 << 6, FS_MAKE_DIR = 1 << 7,
  FS_MAKE_REG = 1 << 8, FS_MAKE_SOCK = 1 << 9, FS_MAKE_FIFO = 1 << 10, FS_MAKE_BLOCK = 1 << 11,
  FS_MAKE_SYM = 1 << 12, FS_REFER = 1 << 13, FS_TRUNCATE = 1 << 14, FS_IOCTL_DEV = 1 << 15,
};
enum { NET_BIND_TCP = 1 << 0, NET_CONNECT_TCP = 1 << 1 };
enum { SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0, SCOPE_SIGNAL = 1 << 1 };
#define FS_ALL ((uint64_t)(1 << 16) - 1)
#define FS_FILE (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV)
#define FS_READ (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR)
#define FS_WRITE (FS_ALL & ~(uint64_t)(FS_MAKE_CHAR | FS_MAKE_BLOCK))
#define FS_DEVICE (FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE)

struct mount_attr_ { uint64_t attr_set, attr_clr, propagation, userns_fd; };
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

static void say(char *why, size_t size, const char *what, const char *path, int error) {
  if (why == NULL || size == 0) return;
  if (path && error == ELOOP)
    snprintf(why, size, "%s '%s': it is a link, or under one, to somewhere else: name that place itself", what, path);
  else if (path) snprintf(why, size, "%s '%s': %s", what, path, strerror(error));
  else snprintf(why, size, "%s: %s", what, strerror(error));
}

int cs_landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;
}

/* {====== Landlock rulesets (built once per set of rules, in taskrun) */

/* `path` (whole, links resolved) opened O_PATH, only if it is where it says: a link planted
   there (by a command with write access, while the run goes on) gives ELOOP, never its
   target. -1 with errno on failure. */
/* "/proc/self/fd/N" into out (at least 32 bytes), without stdio (the helper runs after fork). */
static void fd_path(char *out, int fd) {
  static const char prefix[] = "/proc/self/fd/";
  memcpy(out, prefix, sizeof prefix - 1);
  char digits[12];
  int n = 0;
  do { digits[n++] = (char)('0' + fd % 10); fd /= 10; } while (fd > 0 && n < 11);
  char *p = out + sizeof prefix - 1;
  while (n > 0) *p++ = digits[--n];
  *p = '\0';
}

static int open_exact(const char *path) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return -1;
  char self[32], where[4096];
  fd_path(self, fd);
  ssize_t n = readlink(self, where, sizeof where - 1);
  if (n < 0 || (where[n] = '\0', strcmp(where, path) != 0)) {
    close(fd);
    errno = n < 0 ? errno : ELOOP;
    return -1;
  }
  return fd;
}

/* A rule for `path`; `exact`: the path must be where it says (`open_exact`). */
static int add_rule_at(int ruleset, const char *path, uint64_t access, int exact) {
  int fd = exact ? open_exact(path) : open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno;
  struct stat st;
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) access &= FS_FILE;
  struct ll_path_beneath rule = { access, fd };
  int rc = (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  int error = errno;
  close(fd);
  return rc == 0 ? 0 : error;
}

static int add_rule(int ruleset, const char *path, uint64_t access) { return add_rule_at(ruleset, path, access, 0); }

/* What every sandboxed command may read and run: the system, where it exists. */
static const char *const system_read[] = {
  "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/sys", "/etc", NULL,
};
/* The devices every command may use. */
static const char *const devices[] = {
  "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", NULL,
};

int cs_landlock_ruleset(const char *const *read, const char *const *write, int network, int *out,
                        char *why, size_t size) {
  struct ll_ruleset_attr attr = {
    .handled_access_fs = FS_ALL,
    .handled_access_net = network ? 0 : NET_BIND_TCP | NET_CONNECT_TCP,
    .scoped = SCOPE_SIGNAL | (network ? 0 : SCOPE_ABSTRACT_UNIX_SOCKET),
  };
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) {
    int error = errno;
    say(why, size, "Landlock refused the ruleset", NULL, error);
    return error;
  }
  fcntl(ruleset, F_SETFD, FD_CLOEXEC);
  int rc = 0;
  for (const char *const *p = system_read; *p && rc == 0; p++) {
    rc = add_rule(ruleset, *p, FS_READ);
    if (rc == ENOENT) rc = 0;
    else if (rc) say(why, size, "cannot add the sandbox rule for", *p, rc);
  }
  for (const char *const *p = devices; *p && rc == 0; p++) {
    rc = add_rule(ruleset, *p, FS_DEVICE);
    if (rc == ENOENT) rc = 0;
    else if (rc) say(why, size, "cannot add the sandbox rule for", *p, rc);
  }
  for (const char *const *p = read; p && *p && rc == 0; p++)
    if ((rc = add_rule_at(ruleset, *p, FS_READ, 1)) != 0) say(why, size, "cannot let the sandbox read", *p, rc);
  for (const char *const *p = write; p && *p && rc == 0; p++)
    if ((rc = add_rule_at(ruleset, *p, FS_WRITE, 1)) != 0) say(why, size, "cannot let the sandbox write", *p, rc);
  if (rc != 0) {
    close(ruleset);
    return rc;
  }
  *out = ruleset;
  return 0;
}
/* }====== */

/* {====== Namespaces (made once per set of writable folders, by a short-lived helper) */

/* What in /etc only its owner (or group) may read: a root command keeps its owner's rights,
   so in the sandbox's mount namespace /etc/shadow, the SSH host keys and their like are
   covered (files by /dev/null, folders by an empty read-only tmpfs). Folders readable by
   anyone are looked into; at most `max` paths, in `out` (malloc'd). */
static int collect_hidden(const char *path, int depth, char **out, int count, int max) {
  DIR *dir = opendir(path);
  if (dir == NULL) return count;
  struct dirent *entry;
  char child[4096];
  while (count < max && (entry = readdir(dir)) != NULL) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    if ((size_t)snprintf(child, sizeof child, "%s/%s", path, entry->d_name) >= sizeof child) continue;
    struct stat st;
    if (lstat(child, &st) != 0 || S_ISLNK(st.st_mode)) continue;  /* a link's target is looked at where it is */
    int open_to_all = S_ISDIR(st.st_mode) ? (st.st_mode & (S_IROTH | S_IXOTH)) == (S_IROTH | S_IXOTH) : (st.st_mode & S_IROTH) != 0;
    if (!open_to_all && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      if ((out[count] = strdup(child)) != NULL) count++;
    } else if (S_ISDIR(st.st_mode) && depth < 8) {
      count = collect_hidden(child, depth + 1, out, count, max);
    }
  }
  closedir(dir);
  return count;
}

/* Writes `text` to `path` (a /proc file of the helper's own): 0 or errno. */
static int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, text, strlen(text));
  int error = n < 0 ? errno : 0;
  close(fd);
  return error;
}

/* "U U 1\n" for the helper's id maps, without stdio (it runs after fork). */
static void id_map(char *out, unsigned id) {
  char digits[16];
  int n = 0;
  do { digits[n++] = (char)('0' + id % 10); id /= 10; } while (id);
  char *p = out;
  for (int round = 0; round < 2; round++) {
    for (int i = n - 1; i >= 0; i--) *p++ = digits[i];
    *p++ = ' ';
  }
  *p++ = '1'; *p++ = '\n'; *p = '\0';
}

struct helper_report { int step, error; };

static void helper_main(const char *const *writable, char *const *hidden, int user, int report, int release) {
  struct helper_report r = { 0, 0 };
  uid_t uid = geteuid();
  gid_t gid = getegid();
  char map[40];
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (unshare(CLONE_NEWNS | CLONE_NEWNET | (user ? CLONE_NEWUSER : 0)) != 0) { r = (struct helper_report){ 1, errno }; goto done; }
  if (user) {
    if ((r.error = write_file("/proc/self/setgroups", "deny")) != 0) { r.step = 2; goto done; }
    id_map(map, uid);
    if ((r.error = write_file("/proc/self/uid_map", map)) != 0) { r.step = 2; goto done; }
    id_map(map, gid);
    if ((r.error = write_file("/proc/self/gid_map", map)) != 0) { r.step = 2; goto done; }
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) { r = (struct helper_report){ 3, errno }; goto done; }
  /* Each writable folder bound onto itself through a descriptor of exactly it: a link
     planted in its place is refused, not followed. */
  for (int i = 0; writable[i]; i++) {
    int fd = open_exact(writable[i]);
    char self[32];
    if (fd >= 0) fd_path(self, fd);
    if (fd < 0 || mount(self, self, NULL, MS_BIND | MS_REC, NULL) != 0) { r = (struct helper_report){ 100 + i, errno }; goto done; }
    close(fd);
  }
  for (int i = 0; hidden[i]; i++) {
    struct stat st;
    int rc = stat(hidden[i], &st) != 0 ? 0
      : S_ISDIR(st.st_mode) ? mount("tmpfs", hidden[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")
      : mount("/dev/null", hidden[i], NULL, MS_BIND, NULL);
    if (rc != 0) { r = (struct helper_report){ 6, errno }; goto done; }
  }
  struct mount_attr_ ro = { MOUNT_ATTR_RDONLY, 0, 0, 0 };
  if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) != 0) { r = (struct helper_report){ 4, errno }; goto done; }
  struct mount_attr_ rw = { 0, MOUNT_ATTR_RDONLY, 0, 0 };
  for (int i = 0; writable[i]; i++) {
    int fd = open_exact(writable[i]);
    if (fd < 0 || syscall(SYS_mount_setattr, fd, "", AT_RECURSIVE | AT_EMPTY_PATH, &rw, sizeof rw) != 0) { r = (struct helper_report){ 100 + i, errno }; goto done; }
    close(fd);
  }
done:
  if (write(report, &r, sizeof r) != (ssize_t)sizeof r) _exit(1);
  char byte;
  while (read(release, &byte, 1) < 0 && errno == EINTR) {}
  _exit(0);
}

int cs_sandbox_namespaces(const char *const *writable, int *user_fd, int *mnt_fd, int *net_fd,
                          char *why, size_t size) {
  int user = geteuid() != 0;
  int report[2], release[2];
  *user_fd = *mnt_fd = *net_fd = -1;
  if (pipe2(report, O_CLOEXEC) != 0) { say(why, size, "cannot make a pipe", NULL, errno); return errno; }
  if (pipe2(release, O_CLOEXEC) != 0) {
    int error = errno;
    close(report[0]); close(report[1]);
    say(why, size, "cannot make a pipe", NULL, error);
    return error;
  }
  enum { max_hidden = 256 };
  char *hidden[max_hidden + 1];
  int hidden_count = user ? 0 : collect_hidden("/etc", 0, hidden, 0, max_hidden);
  hidden[hidden_count] = NULL;
  pid_t pid = fork();
  if (pid == 0) {
    close(report[0]); close(release[1]);
    helper_main(writable, hidden, user, report[1], release[0]);
  }
  for (int i = 0; i < hidden_count; i++) free(hidden[i]);
  int error = pid < 0 ? errno : 0;
  close(report[1]); close(release[0]);
  struct helper_report r = { 0, 0 };
  if (pid > 0) {
    ssize_t n;
    while ((n = read(report[0], &r, sizeof r)) < 0 && errno == EINTR) {}
    if (n != (ssize_t)sizeof r) r = (struct helper_report){ 5, EIO };
  }
  if (pid > 0 && r.step == 0) {
    static const char *const names[] = { "user", "mnt", "net" };
    int *fds[] = { user_fd, mnt_fd, net_fd };
    char path[64];
    for (int i = user ? 0 : 1; i < 3 && error == 0; i++) {
      snprintf(path, sizeof path, "/proc/%d/ns/%s", (int)pid, names[i]);
      if ((*fds[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0) { error = errno; say(why, size, "cannot open", path, error); }
    }
  }
  close(release[1]);
  close(report[0]);
  if (pid > 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  } else {
    say(why, size, "cannot start the sandbox's helper", NULL, error);
  }
  if (r.step != 0) {
    error = r.error;
    if (r.step == 1) say(why, size, user ? "cannot make user, mount and network namespaces (unshare)" : "cannot make mount and network namespaces (unshare)", NULL, error);
    else if (r.step == 2) say(why, size, "cannot map the user in its namespace", NULL, error);
    else if (r.step == 6) say(why, size, "cannot cover what in /etc only root may read", NULL, error);
    else if (r.step == 3 || r.step == 4) say(why, size, "cannot make the file system read-only in the sandbox", NULL, error);
    else if (r.step >= 100) say(why, size, "cannot let the sandbox write", writable[r.step - 100], error);
    else say(why, size, "the sandbox's helper failed", NULL, error);
  }
  if (error != 0) {
    for (int i = 0; i < 3; i++) {
      int *fd = i == 0 ? user_fd : i == 1 ? mnt_fd : net_fd;
      if (*fd >= 0) close(*fd);
      *fd = -1;
    }
  }
  return error;
}
/* }====== */

/* {====== seccomp: system calls no sandboxed command needs, and sockets outside */

#if defined(__x86_64__)
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

/* What a confined command could still reach without any capability: the user's keyrings,
   and kernel interfaces that take no path (bpf, perf events, userfaultfd) or that would carry
   socket calls past this filter (io_uring). What needs a capability (modules, mounts, clocks,
   raw I/O, reboot…) is gone with the capabilities, and Landlock refuses mounts besides. The
   kernel compiles the program for each command (about 0.7 µs an instruction, 30 µs at
   least): it stays short. */
static const long denied_calls[] = {
  SYS_keyctl, SYS_add_key, SYS_request_key, SYS_bpf, SYS_perf_event_open, SYS_userfaultfd,
  SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
};
#define DENIED (sizeof denied_calls / sizeof denied_calls[0])

/* Four programs, by [network][root]. Without network, socket() is only for AF_INET, AF_INET6
   and AF_NETLINK (in the sandbox's empty network namespace), and no message goes to an
   address (sendto with one, sendmsg, sendmmsg, connect): a socketpair's datagram would
   otherwise reach a Unix socket anywhere by its path. For root, no file is made set-uid or
   set-gid (chmod, or a mode given when a file is created): root owns what its commands make,
   and such a file would outlive the run as a way to root for anyone who can reach it. */
enum { MAX_FILTER = 96 };
static struct sock_filter g_filter[2][2][MAX_FILTER];
static struct sock_fprog g_program[2][2];
static int g_root;
static pthread_once_t g_filter_once = PTHREAD_ONCE_INIT;

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#define CREATING (O_CREAT | 020000000)  /* O_CREAT, or O_TMPFILE's own bit */

/* A small assembler for the programs: instructions whose jumps name labels, resolved when
   the program is done (BPF jumps only forward: every label is placed after its jumps). */
enum label { L_NEXT, L_ALLOW, L_DENY, L_REFUSE, L_NOSYS, L_OPEN, L_OPENAT, L_MODE1, L_MODE2, L_MODE3, L_SOCKET, L_SENDTO, L_COUNT };
struct assembly {
  struct sock_filter *f;
  unsigned char jt[MAX_FILTER], jf[MAX_FILTER];
  int at[L_COUNT], n;
};
static void op(struct assembly *a, struct sock_filter ins, enum label jt, enum label jf) {
  a->jt[a->n] = (unsigned char)jt;
  a->jf[a->n] = (unsigned char)jf;
  a->f[a->n++] = ins;
}
static void load(struct assembly *a, size_t offset) { op(a, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset), L_NEXT, L_NEXT); }
static void ret(struct assembly *a, uint32_t value) { op(a, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, value), L_NEXT, L_NEXT); }
/* if the accumulator == k (or, `set`, has a bit of k) go to jt, else to jf */
static void jump(struct assembly *a, int set, uint32_t k, enum label jt, enum label jf) {
  op(a, (struct sock_filter)BPF_JUMP(BPF_JMP | (set ? BPF_JSET : BPF_JEQ) | BPF_K, k, 0, 0), jt, jf);
}
static void place(struct assembly *a, enum label l) { a->at[l] = a->n; }
static void resolve(struct assembly *a) {
  for (int i = 0; i < a->n; i++) {
    if (a->jt[i] != L_NEXT) a->f[i].jt = (unsigned char)(a->at[a->jt[i]] - i - 1);
    if (a->jf[i] != L_NEXT) a->f[i].jf = (unsigned char)(a->at[a->jf[i]] - i - 1);
  }
}
#define ARG(i) (offsetof(struct seccomp_data, args[i]))

static void build_filters(void) {
  g_root = geteuid() == 0;
  for (int network = 0; network < 2; network++) {
    for (int root = 0; root < 2; root++) {
      struct assembly a = { .f = g_filter[network][root] };
      load(&a, offsetof(struct seccomp_data, arch));
      op(&a, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0), L_NEXT, L_NEXT);
      ret(&a, SECCOMP_RET_KILL_PROCESS);
      load(&a, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
      op(&a, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 0), L_DENY, L_NEXT);  /* x32 calls */
#endif
      for (size_t i = 0; i < DENIED; i++) jump(&a, 0, (uint32_t)denied_calls[i], L_DENY, L_NEXT);
      if (root) {
#if defined(__x86_64__)
        jump(&a, 0, SYS_chmod, L_MODE1, L_NEXT);
        jump(&a, 0, SYS_creat, L_MODE1, L_NEXT);
        jump(&a, 0, SYS_mknod, L_MODE1, L_NEXT);
        jump(&a, 0, SYS_open, L_OPEN, L_NEXT);
#endif
        jump(&a, 0, SYS_fchmod, L_MODE1, L_NEXT);
        jump(&a, 0, SYS_fchmodat, L_MODE2, L_NEXT);
        jump(&a, 0, SYS_fchmodat2, L_MODE2, L_NEXT);
        jump(&a, 0, SYS_mknodat, L_MODE2, L_NEXT);
        jump(&a, 0, SYS_openat, L_OPENAT, L_NEXT);
        jump(&a, 0, SYS_openat2, L_NOSYS, L_NEXT);  /* its mode is behind a pointer: callers fall back to openat */
      }
      if (!network) {
        jump(&a, 0, SYS_socket, L_SOCKET, L_NEXT);
        jump(&a, 0, SYS_sendto, L_SENDTO, L_NEXT);
        jump(&a, 0, SYS_sendmsg, L_REFUSE, L_NEXT);
        jump(&a, 0, SYS_sendmmsg, L_REFUSE, L_NEXT);
        jump(&a, 0, SYS_connect, L_REFUSE, L_NEXT);
      }
      op(&a, (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, 0), L_NEXT, L_NEXT);
      int always = a.n - 1;  /* patched to jump to the allow */
      if (root) {
        place(&a, L_OPEN);
        load(&a, ARG(1));
        jump(&a, 1, CREATING, L_MODE2, L_ALLOW);
        place(&a, L_OPENAT);
        load(&a, ARG(2));
        jump(&a, 1, CREATING, L_MODE3, L_ALLOW);
        for (int k = 1; k <= 3; k++) {
          place(&a, k == 1 ? L_MODE1 : k == 2 ? L_MODE2 : L_MODE3);
          load(&a, ARG(k));
          jump(&a, 1, S_ISUID | S_ISGID, L_DENY, L_ALLOW);
        }
      }
      if (!network) {
        place(&a, L_SOCKET);
        load(&a, ARG(0));
        jump(&a, 0, AF_INET, L_ALLOW, L_NEXT);
        jump(&a, 0, AF_INET6, L_ALLOW, L_NEXT);
        jump(&a, 0, AF_NETLINK, L_ALLOW, L_REFUSE);
        place(&a, L_SENDTO);  /* send() is sendto without an address */
        load(&a, ARG(4));
        jump(&a, 0, 0, L_NEXT, L_REFUSE);
        load(&a, ARG(4) + 4);
        jump(&a, 0, 0, L_ALLOW, L_REFUSE);
      }
      place(&a, L_ALLOW);
      ret(&a, SECCOMP_RET_ALLOW);
      place(&a, L_DENY);
      ret(&a, SECCOMP_RET_ERRNO | EPERM);
      place(&a, L_REFUSE);
      ret(&a, SECCOMP_RET_ERRNO | EACCES);
      place(&a, L_NOSYS);
      ret(&a, SECCOMP_RET_ERRNO | ENOSYS);
      resolve(&a);
      a.f[always].k = (uint32_t)(a.at[L_ALLOW] - always - 1);
      g_program[network][root] = (struct sock_fprog){ (unsigned short)a.n, a.f };
    }
  }
}
/* }====== */

/* {====== In the child, before exec */

/* Capabilities a root command keeps: its own files' owner rights and no more (no mounts,
   modules, raw devices, clocks, handles to files by number, or network administration). */
static const uint64_t kept_caps = 1ULL << CAP_CHOWN | 1ULL << CAP_DAC_OVERRIDE | 1ULL << CAP_FOWNER
  | 1ULL << CAP_FSETID | 1ULL << CAP_KILL | 1ULL << CAP_SETGID | 1ULL << CAP_SETUID
  | 1ULL << CAP_NET_BIND_SERVICE;

void cs_sandbox_prepare(void) { pthread_once(&g_filter_once, build_filters); }

int cs_sandbox_enter(const struct cs_confinement *c, pid_t parent) {
  if (c->user_fd >= 0 && setns(c->user_fd, CLONE_NEWUSER) != 0) return errno;
  if (!c->network && setns(c->net_fd, CLONE_NEWNET) != 0) return errno;
  if (setns(c->mnt_fd, CLONE_NEWNS) != 0) return errno;
  if (chdir(c->directory) != 0) return errno;
  for (int cap = 0; cap < 64; cap++) {
    if (kept_caps >> cap & 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;  /* past the kernel's last capability */
      if (errno != EPERM) return errno;  /* EPERM: not ours to drop, and not ours to use */
    }
  }
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) != 0) return errno;
  for (int i = 0; i < 2; i++) {
    uint32_t keep = (uint32_t)(kept_caps >> (32 * i));
    data[i].effective &= keep;
    data[i].permitted &= keep;
    data[i].inheritable &= keep;
  }
  if (syscall(SYS_capset, &header, data) != 0) return errno;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &g_program[c->network ? 1 : 0][g_root], 0, 0) != 0) return errno;
  if (syscall(SYS_landlock_restrict_self, c->ruleset_fd, 0) != 0) return errno;
  /* A change of credentials clears the parent-death signal: set it again. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return errno;
  if (getppid() != parent) _exit(127);
  return 0;
}
/* }====== */

/* {====== Removing the run's temporary folder */

/* Removes everything in the folder open as `dir` (closed here): links are removed, never
   followed; folders a command made unreadable are opened up first. */
static void remove_inside(int dir, int depth) {
  DIR *d = fdopendir(dir);
  if (d == NULL) { close(dir); return; }
  struct dirent *entry;
  while ((entry = readdir(d)) != NULL) {
    if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
    if (unlinkat(dirfd(d), entry->d_name, 0) == 0 || errno != EISDIR) continue;
    fchmodat(dirfd(d), entry->d_name, 0700, AT_SYMLINK_NOFOLLOW);
    int child = openat(dirfd(d), entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child >= 0 && depth < 256) remove_inside(child, depth + 1);
    else if (child >= 0) close(child);
    unlinkat(dirfd(d), entry->d_name, AT_REMOVEDIR);
  }
  closedir(d);
}

void cs_remove_tree(const char *path) {
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir >= 0) remove_inside(dir, 0);
  rmdir(path);
}
/* }====== */
