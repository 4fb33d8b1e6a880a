/* processors.c: how many processors this process may use, as a default for -j. */
#define _GNU_SOURCE
#include "CSpawn.h"
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The first line of `path` into buf (at most size - 1 bytes); its length, or -1. */
static ssize_t read_line(const char *path, char *buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, size - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = 0;
  return n;
}

/* CPUs a cgroup quota allows (rounded up), or 0 when none is set: cgroup v2's cpu.max
   ("max 100000" or "QUOTA PERIOD"), else v1's cpu.cfs_quota_us and cpu.cfs_period_us. */
static long quota_cpus(void) {
  char buf[64];
  long long quota = -1, period = 0;
  if (read_line("/sys/fs/cgroup/cpu.max", buf, sizeof buf) > 0) {
    if (sscanf(buf, "%lld %lld", &quota, &period) != 2) return 0;
  } else if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", buf, sizeof buf) > 0) {
    quota = strtoll(buf, NULL, 10);
    if (quota <= 0 || read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", buf, sizeof buf) <= 0) return 0;
    period = strtoll(buf, NULL, 10);
  }
  if (quota <= 0 || period <= 0) return 0;
  return (long)((quota + period - 1) / period);
}

long cs_processor_count(void) {
  long count = 0;
  for (size_t cpus = 1024; cpus <= (1u << 20) && count == 0; cpus *= 8) {
    cpu_set_t *set = CPU_ALLOC(cpus);
    if (!set) break;
    size_t size = CPU_ALLOC_SIZE(cpus);
    if (sched_getaffinity(0, size, set) == 0) count = CPU_COUNT_S(size, set);
    CPU_FREE(set);
  }
  if (count < 1) count = sysconf(_SC_NPROCESSORS_ONLN);
  long quota = quota_cpus();
  if (quota > 0 && quota < count) count = quota;
  return count < 1 ? 1 : count;
}
