// Fiber stacks and context switches for the SIMT emulator. The x86-64 switch saves only the
// callee-saved registers (no signal mask, no FP control words: all fibers share them), which is
// what makes a 256-thread __syncthreads cost microseconds rather than a hundred.
#include "fiber.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__SANITIZE_ADDRESS__)
#define SIMT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMT_ASAN 1
#endif
#endif
#ifndef SIMT_ASAN
#define SIMT_ASAN 0
#endif

#if SIMT_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !SIMT_USE_UCONTEXT
// simt_context_swap(save, to): pushes the callee-saved registers, stores the stack pointer in
// *save, loads to and pops that context's registers; the final ret resumes it.
// simt_context_start: the first return address of a fresh fiber; r13 holds entry, r12 its arg.
asm(R"(
  .text
  .globl simt_context_swap
  .hidden simt_context_swap
  .type simt_context_swap,@function
  .p2align 4
simt_context_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size simt_context_swap,.-simt_context_swap

  .globl simt_context_start
  .hidden simt_context_start
  .type simt_context_start,@function
  .p2align 4
simt_context_start:
  .cfi_startproc
  .cfi_undefined rip
  movq %r12, %rdi
  callq *%r13
  ud2
  .cfi_endproc
  .size simt_context_start,.-simt_context_start
)");
extern "C" void simt_context_swap(void** save, void* to);
extern "C" void simt_context_start();
#endif

namespace simt::detail {

namespace {

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Switch bookkeeping for ASan: it must know which stack is live, or it reports false positives.
inline void before_switch(Context* from, Context* to, bool from_dies) {
#if SIMT_ASAN
  __sanitizer_start_switch_fiber(from_dies ? nullptr : &from->fake_stack, to->stack_bottom,
                                 to->stack_size);
#else
  (void)from, (void)to, (void)from_dies;
#endif
}

inline void after_switch(Context* self) {
#if SIMT_ASAN
  __sanitizer_finish_switch_fiber(self->fake_stack, nullptr, nullptr);
#else
  (void)self;
#endif
}

#if SIMT_USE_UCONTEXT
struct StartArgs {
  void (*entry)(void*);
  void* arg;
};

void ucontext_start(unsigned lo, unsigned hi) {
  const auto bits = (static_cast<std::uintptr_t>(hi) << 32) | lo;
  const auto* start = reinterpret_cast<const StartArgs*>(bits);
  start->entry(start->arg);
  std::abort();  // entries leave with context_exit
}
#endif

}  // namespace

FiberStack::FiberStack(std::size_t size) {
  const std::size_t page = page_size();
  size_ = (size + page - 1) / page * page;
  mapping_size_ = size_ + page;
  void* p = mmap(nullptr, mapping_size_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "simt: cannot map a %zu-byte fiber stack\n", mapping_size_);
    std::abort();
  }
  mapping_ = static_cast<char*>(p);
  mprotect(mapping_, page, PROT_NONE);  // the guard page: stacks grow down into it
  bottom_ = mapping_ + page;
}

FiberStack::~FiberStack() { munmap(mapping_, mapping_size_); }

void FiberStack::forget_frames() {
#if SIMT_ASAN
  __asan_unpoison_memory_region(bottom_, size_);
#endif
}

std::size_t FiberStack::default_size() {
  if (const char* kb = std::getenv("SIMT_STACK_KB")) {
    const long v = std::strtol(kb, nullptr, 10);
    if (v >= 16) return static_cast<std::size_t>(v) * 1024;
  }
  return SIMT_ASAN ? 256 * 1024 : 64 * 1024;
}

void context_init(Context* ctx, FiberStack* stack, void (*entry)(void*), void* arg) {
  ctx->stack_bottom = stack->bottom();
  ctx->stack_size = stack->size();
  ctx->fake_stack = nullptr;
#if SIMT_USE_UCONTEXT
  // The start arguments live at the top of the fiber's own stack.
  auto* start = reinterpret_cast<StartArgs*>(stack->bottom() + stack->size() - 64);
  start->entry = entry;
  start->arg = arg;
  getcontext(&ctx->uc);
  ctx->uc.uc_stack.ss_sp = stack->bottom();
  ctx->uc.uc_stack.ss_size = stack->size() - 64;
  ctx->uc.uc_link = nullptr;
  const auto bits = reinterpret_cast<std::uintptr_t>(start);
  makecontext(&ctx->uc, reinterpret_cast<void (*)()>(&ucontext_start), 2,
              static_cast<unsigned>(bits), static_cast<unsigned>(bits >> 32));
#else
  // The frame simt_context_swap pops: r15 r14 r13 r12 rbx rbp, then the return address. The
  // address is chosen so that rsp is 16-byte aligned at simt_context_start's call.
  auto top =
      reinterpret_cast<std::uintptr_t>(stack->bottom() + stack->size()) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<void**>(top - 72);
  std::memset(frame, 0, 72);
  frame[2] = reinterpret_cast<void*>(entry);  // r13
  frame[3] = arg;                             // r12
  frame[6] = reinterpret_cast<void*>(&simt_context_start);
  ctx->sp = frame;
#endif
}

void context_init_thread(Context* ctx) {
  ctx->stack_bottom = nullptr;
  ctx->stack_size = 0;
  ctx->fake_stack = nullptr;
#if SIMT_ASAN
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    ctx->stack_bottom = addr;
    ctx->stack_size = size;
  }
#endif
}

void context_switch(Context* from, Context* to) {
  before_switch(from, to, false);
#if SIMT_USE_UCONTEXT
  swapcontext(&from->uc, &to->uc);
#else
  simt_context_swap(&from->sp, to->sp);
#endif
  after_switch(from);
}

void context_exit(Context* from, Context* to) {
  before_switch(from, to, true);
#if SIMT_USE_UCONTEXT
  setcontext(&to->uc);
#else
  simt_context_swap(&from->sp, to->sp);
#endif
  std::abort();
}

void context_started() {
#if SIMT_ASAN
  __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
}

}  // namespace simt::detail
