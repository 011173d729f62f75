/* An LD_PRELOAD library for the crash-consistency tests of `ember train`: it counts the
 * process's writes to regular files and its renames, and SIGKILLs the process just before the
 * N-th one. It sees every write the binary makes through libc (checkpoints, reports, the
 * directory lock) without a test hook in ember itself.
 *
 *   EMBER_KILL_AT=N        SIGKILL before the N-th write or rename (1-based)
 *   EMBER_KILL_COUNT=FILE  at exit, write to FILE one letter per event in order: W for a write,
 *                          R for a rename
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long g_events = 0;
static char g_kinds[4096];

static void event(char kind) {
  static long kill_at = -1;
  if (kill_at < 0) {
    const char* v = getenv("EMBER_KILL_AT");
    kill_at = v ? atol(v) : 0;
  }
  long n = __atomic_add_fetch(&g_events, 1, __ATOMIC_SEQ_CST);
  if (n < (long)sizeof g_kinds) g_kinds[n - 1] = kind;
  if (kill_at > 0 && n == kill_at) kill(getpid(), SIGKILL);
}

static int regular(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

ssize_t write(int fd, const void* buf, size_t n) {
  static ssize_t (*real)(int, const void*, size_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT, "write");
  if (regular(fd)) event('W');
  return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static ssize_t (*real)(int, const void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, const void*, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
  if (regular(fd)) event('W');
  return real(fd, buf, n, off);
}

int rename(const char* from, const char* to) {
  static int (*real)(const char*, const char*);
  if (!real) real = (int (*)(const char*, const char*))dlsym(RTLD_NEXT, "rename");
  event('R');
  return real(from, to);
}

__attribute__((destructor)) static void report(void) {
  const char* path = getenv("EMBER_KILL_COUNT");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (f) {
    fprintf(f, "%s\n", g_kinds);
    fclose(f);
  }
}
