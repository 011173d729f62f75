// Counts a process's heap allocations (malloc, calloc, realloc, aligned_alloc, posix_memalign,
// memalign; operator new goes through malloc) and prints the totals to stderr at exit:
//
//   gcc -O2 -shared -fPIC -o alloc_count.so bench/compare/alloc_count.c
//   LD_PRELOAD=./alloc_count.so build-compare/ember_work add_small 1 --warmup 0 --min-reps 2 ...
//
// Two runs that differ only in --min-reps (with --min-time 0) give the allocations per repetition
// as the difference of their totals, without the set-up's.
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);
extern void __libc_free(void*);

static atomic_long allocs, frees, bytes;

static void* counted(void* p, size_t n) {
  if (p) {
    atomic_fetch_add_explicit(&allocs, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&bytes, (long)n, memory_order_relaxed);
  }
  return p;
}

void* malloc(size_t n) { return counted(__libc_malloc(n), n); }
void* calloc(size_t c, size_t n) { return counted(__libc_calloc(c, n), c * n); }
void* realloc(void* p, size_t n) { return counted(__libc_realloc(p, n), n); }
void* memalign(size_t a, size_t n) { return counted(__libc_memalign(a, n), n); }
void* aligned_alloc(size_t a, size_t n) { return counted(__libc_memalign(a, n), n); }
int posix_memalign(void** out, size_t a, size_t n) {
  void* p = counted(__libc_memalign(a, n), n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) {
  if (p) atomic_fetch_add_explicit(&frees, 1, memory_order_relaxed);
  __libc_free(p);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "alloc_count: allocations %ld frees %ld bytes %ld\n", atomic_load(&allocs),
          atomic_load(&frees), atomic_load(&bytes));
}
