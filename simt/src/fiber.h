// User-level fibers for the SIMT emulator: guard-paged stacks and a context switch (x86-64
// assembly, or ucontext with -DSIMT_FIBER_UCONTEXT and on other CPUs), annotated for ASan.
#pragma once

#include <cstddef>

#if defined(SIMT_FIBER_UCONTEXT) || !defined(__x86_64__)
#define SIMT_USE_UCONTEXT 1
#include <ucontext.h>
#else
#define SIMT_USE_UCONTEXT 0
#endif

namespace simt::detail {

// A fiber stack with an inaccessible guard page below it, so an overflow faults at once.
class FiberStack {
 public:
  explicit FiberStack(std::size_t size);
  ~FiberStack();
  FiberStack(const FiberStack&) = delete;
  FiberStack& operator=(const FiberStack&) = delete;

  char* bottom() const { return bottom_; }
  std::size_t size() const { return size_; }
  // Whether p lies in the guard page below the stack (where an overflow faults).
  bool guard_contains(const void* p) const {
    return static_cast<const char*>(p) >= mapping_ && static_cast<const char*>(p) < bottom_;
  }
  // Forgets the frames of a fiber that was abandoned mid-run (ASan's stack poisoning).
  void forget_frames();

  // Bytes per stack: SIMT_STACK_KB, else 64 KiB (256 KiB under AddressSanitizer).
  static std::size_t default_size();

 private:
  char* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
  char* bottom_ = nullptr;
  std::size_t size_ = 0;
};

// A suspended execution context. The thread's own stack is a context too (stack unknown).
struct Context {
#if SIMT_USE_UCONTEXT
  ucontext_t uc;
#else
  void* sp = nullptr;
#endif
  const void* stack_bottom = nullptr;  // for ASan's stack bookkeeping
  std::size_t stack_size = 0;
  void* fake_stack = nullptr;
};

// Makes ctx start entry(arg) on stack at its first resumption. entry must never return: it
// leaves with context_exit.
void context_init(Context* ctx, FiberStack* stack, void (*entry)(void*), void* arg);
// Records the thread's own stack in ctx (ASan needs it to switch back).
void context_init_thread(Context* ctx);
// Suspends the caller into from and resumes to.
void context_switch(Context* from, Context* to);
// Leaves a fiber that will never resume (its stack is about to be reused).
[[noreturn]] void context_exit(Context* from, Context* to);
// First call on a fresh fiber, before anything else runs on it.
void context_started();

}  // namespace simt::detail
