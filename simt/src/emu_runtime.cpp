// The SIMT emulator's scheduler: each CUDA thread of a block is a fiber on one worker thread,
// run round-robin until it reaches a barrier or warp collective; the last arrival releases the
// others. Misuse (divergent barriers, bad warp masks, deadlocks) fails the launch with a report.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "fiber.h"
#include "runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SIMT_POISON(p, n) __asan_poison_memory_region((p), (n))
#define SIMT_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define SIMT_POISON(p, n) ((void)(p), (void)(n))
#define SIMT_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace simt {
namespace detail {
namespace {

constexpr int kWarpSize = 32;

// ---- configuration ------------------------------------------------------------------------------

Order order_from_env() {
  const char* v = std::getenv("SIMT_ORDER");
  if (v == nullptr || std::string(v).empty() || std::string(v) == "forward") return Order::kForward;
  if (std::string(v) == "reverse") return Order::kReverse;
  if (std::string(v) == "random") return Order::kRandom;
  std::fprintf(stderr, "simt: SIMT_ORDER=%s is not forward, reverse or random; using forward\n", v);
  return Order::kForward;
}

std::uint64_t seed_from_env() {
  const char* v = std::getenv("SIMT_SEED");
  return v ? std::strtoull(v, nullptr, 0) : 0x5eed5eedULL;
}

int workers_from_env() {
  if (const char* v = std::getenv("SIMT_WORKERS")) {
    const int n = std::atoi(v);
    if (n >= 1) return n;
  }
  return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
}

std::atomic<int>& order_setting() {
  static std::atomic<int> v{static_cast<int>(order_from_env())};
  return v;
}
std::atomic<std::uint64_t>& seed_setting() {
  static std::atomic<std::uint64_t> v{seed_from_env()};
  return v;
}
std::atomic<int>& workers_setting() {
  static std::atomic<int> v{workers_from_env()};
  return v;
}

// ---- messages -----------------------------------------------------------------------------------

std::string site(const std::source_location& where) {
  std::string file = where.file_name();
  const auto slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(where.line());
}

bool same_site(const std::source_location& a, const std::source_location& b) {
  return a.line() == b.line() && a.column() == b.column() &&
         (a.file_name() == b.file_name() || std::strcmp(a.file_name(), b.file_name()) == 0);
}

std::string dims(uint3 v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v.x, v.y, v.z);
  return buf;
}

std::string hex(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

const char* op_name(WarpOp op) {
  switch (op) {
    case WarpOp::kShflIdx:
      return "__shfl_sync";
    case WarpOp::kShflUp:
      return "__shfl_up_sync";
    case WarpOp::kShflDown:
      return "__shfl_down_sync";
    case WarpOp::kShflXor:
      return "__shfl_xor_sync";
    case WarpOp::kBallot:
      return "__ballot_sync";
    case WarpOp::kAny:
      return "__any_sync";
    case WarpOp::kAll:
      return "__all_sync";
    case WarpOp::kSync:
      return "__syncwarp";
    case WarpOp::kMatchAny:
      return "__match_any_sync";
    case WarpOp::kMatchAll:
      return "__match_all_sync";
    case WarpOp::kReduceAdd:
      return "__reduce_add_sync";
    case WarpOp::kReduceMin:
    case WarpOp::kReduceUMin:
      return "__reduce_min_sync";
    case WarpOp::kReduceMax:
    case WarpOp::kReduceUMax:
      return "__reduce_max_sync";
    case WarpOp::kReduceAnd:
      return "__reduce_and_sync";
    case WarpOp::kReduceOr:
      return "__reduce_or_sync";
    case WarpOp::kReduceXor:
      return "__reduce_xor_sync";
  }
  return "warp collective";
}

bool is_shuffle(WarpOp op) {
  return op == WarpOp::kShflIdx || op == WarpOp::kShflUp || op == WarpOp::kShflDown ||
         op == WarpOp::kShflXor;
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- the per-worker scheduler -------------------------------------------------------------------

enum class State : std::uint8_t { kRunnable, kBarrier, kWarp, kDone };

struct Thread {
  Context ctx;
  uint3 idx{};
  int linear = 0;
  State state = State::kRunnable;
  std::source_location where;  // the barrier or warp collective it waits at
};

// The lanes of one warp meeting in collectives. Lanes with disjoint masks may meet separately
// at the same time; a lane's slot holds its arguments until its whole mask has arrived.
struct Warp {
  std::uint32_t present = 0;  // lanes that exist (the last warp of a block may be partial)
  std::uint32_t exited = 0;
  std::uint32_t waiting = 0;
  std::uint32_t named = 0;  // lanes named by the masks of waiting lanes
  std::uint32_t mask[kWarpSize];
  WarpOp op[kWarpSize];
  int width[kWarpSize];
  int arg[kWarpSize];
  std::uint64_t value[kWarpSize];
  std::uint64_t result[kWarpSize];
};

void watch_stack_overflows();

class Worker {
 public:
  Worker() {
    watch_stack_overflows();
    context_init_thread(&main_);
    shared_ = static_cast<unsigned char*>(std::aligned_alloc(128, kMaxDynamicSharedOptIn));
  }
  ~Worker() {
    SIMT_UNPOISON(shared_, kMaxDynamicSharedOptIn);
    std::free(shared_);
  }

  bool run_block(const KernelCall& call, uint3 block_idx, std::string* error);

  int barrier(BarrierOp op, int predicate, const std::source_location& where);
  std::uint64_t collective(WarpOp op, std::uint32_t mask, std::uint64_t bits, int arg, int width,
                           const std::source_location& where);
  std::uint32_t active_mask() const;
  void yield() { switch_away(false); }
  // Fails the block and leaves this fiber for good. The message is built by describe() so that
  // its temporaries are gone before the switch: nothing on an abandoned stack is destroyed.
  template <typename Describe>
  [[noreturn]] void fail(Describe describe) {
    error_ = describe();
    leave_failed();
  }
  unsigned char* shared() const { return shared_; }
  std::string where_block() const;
  bool guard_hit(const void* address) const {
    for (const auto& stack : stacks_) {
      if (stack->guard_contains(address)) return true;
    }
    return false;
  }

 private:
  static void fiber_entry(void* self);
  [[noreturn]] void leave_failed();
  void finish_current();
  void switch_away(bool exiting);
  void complete(Warp& warp, std::uint32_t mask, int warp_index);
  std::string deadlock_message() const;
  void shuffle_order();

  Context main_;
  std::vector<std::unique_ptr<FiberStack>> stacks_;
  std::vector<Thread> threads_;
  std::vector<int> order_;
  std::vector<Warp> warps_;
  const KernelCall* call_ = nullptr;
  uint3 block_idx_{};
  int current_ = -1;
  int cursor_ = 0;  // position of current_ in order_
  int live_ = 0;
  // The barrier the block is gathering at.
  int arrived_ = 0;
  std::source_location barrier_site_;
  int barrier_acc_ = 0;
  int barrier_result_ = 0;
  bool failed_ = false;
  std::string error_;
  Order order_kind_ = Order::kForward;
  std::mt19937_64 rng_;
  unsigned char* shared_ = nullptr;
};

thread_local Worker* t_running = nullptr;  // the worker whose block runs on this thread

// A fault in a fiber's guard page is a stack overflow: say so before the default action (ASan
// has its own report). The handler runs on an alternate stack, since the fiber's is exhausted.
#if !defined(__SANITIZE_ADDRESS__)
struct sigaction previous_segv;

void on_segv(int, siginfo_t* info, void*) {
  const Worker* worker = t_running;
  if (worker != nullptr && worker->guard_hit(info->si_addr)) {
    static const char kMessage[] =
        "simt: a CUDA thread overflowed its fiber stack: use less local memory per thread or "
        "raise SIMT_STACK_KB\n";
    [[maybe_unused]] const ssize_t written = write(2, kMessage, sizeof kMessage - 1);
  }
  sigaction(SIGSEGV, &previous_segv, nullptr);  // the faulting access repeats under it
}

void watch_stack_overflows() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_sigaction = &on_segv;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous_segv);
  });
  stack_t current{};
  if (sigaltstack(nullptr, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
    static thread_local std::vector<char> alternate(64 * 1024);
    stack_t ss{};
    ss.ss_sp = alternate.data();
    ss.ss_size = alternate.size();
    sigaltstack(&ss, nullptr);
  }
}
#else
void watch_stack_overflows() {}
#endif

Worker& this_worker() {
  thread_local Worker worker;
  return worker;
}

Worker& running_worker(const char* what) {
  if (t_running == nullptr) {
    std::fprintf(stderr, "simt: %s called outside a kernel\n", what);
    std::abort();
  }
  return *t_running;
}

bool Worker::run_block(const KernelCall& call, uint3 block_idx, std::string* error) {
  const int bx = static_cast<int>(call.block.x), by = static_cast<int>(call.block.y);
  const int n = bx * by * static_cast<int>(call.block.z);
  while (static_cast<int>(stacks_.size()) < n) {
    stacks_.push_back(std::make_unique<FiberStack>(FiberStack::default_size()));
  }
  threads_.resize(n);
  for (int i = 0; i < n; ++i) {
    Thread& t = threads_[i];
    t.linear = i;
    t.idx = uint3{static_cast<unsigned>(i % bx), static_cast<unsigned>(i / bx % by),
                  static_cast<unsigned>(i / (bx * by))};
    t.state = State::kRunnable;
    context_init(&t.ctx, stacks_[i].get(), &Worker::fiber_entry, this);
  }
  warps_.resize((n + kWarpSize - 1) / kWarpSize);
  for (int w = 0; w < static_cast<int>(warps_.size()); ++w) {
    const int lanes = std::min(kWarpSize, n - w * kWarpSize);
    warps_[w].present = lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1;
    warps_[w].exited = 0;
    warps_[w].waiting = 0;
    warps_[w].named = 0;
  }

  order_kind_ = static_cast<Order>(order_setting().load(std::memory_order_relaxed));
  const std::uint64_t linear_block =
      block_idx.x + static_cast<std::uint64_t>(call.grid.x) *
                        (block_idx.y + static_cast<std::uint64_t>(call.grid.y) * block_idx.z);
  rng_.seed(splitmix(seed_setting().load(std::memory_order_relaxed) ^ splitmix(linear_block)));
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), 0);
  if (order_kind_ == Order::kReverse) std::reverse(order_.begin(), order_.end());
  if (order_kind_ == Order::kRandom) std::shuffle(order_.begin(), order_.end(), rng_);

  call_ = &call;
  block_idx_ = block_idx;
  live_ = n;
  arrived_ = 0;
  failed_ = false;
  error_.clear();
  blockIdx = block_idx;
  blockDim = call.block;
  gridDim = call.grid;
  // Fresh dynamic shared memory reads as 0xFF (NaN for floats); past its end ASan reports.
  SIMT_UNPOISON(shared_, kMaxDynamicSharedOptIn);
  std::memset(shared_, 0xFF, call.smem_bytes);
  SIMT_POISON(shared_ + call.smem_bytes, kMaxDynamicSharedOptIn - call.smem_bytes);

  t_running = this;
  cursor_ = 0;
  current_ = order_[0];
  threadIdx = threads_[current_].idx;
  context_switch(&main_, &threads_[current_].ctx);
  t_running = nullptr;
  call_ = nullptr;

  if (failed_) {
    for (int i = 0; i < n; ++i) {
      if (threads_[i].state != State::kDone) stacks_[i]->forget_frames();
    }
    *error = error_;
    return false;
  }
  return true;
}

void Worker::fiber_entry(void* self) {
  context_started();
  auto* w = static_cast<Worker*>(self);
  std::string escaped;  // set outside the handler: a fiber must not leave in mid-catch
  try {
    w->call_->invoke(w->call_->packed.get());
  } catch (const std::exception& e) {
    escaped = std::string("an exception escaped the kernel: ") + e.what();
  } catch (...) {
    escaped = "an exception escaped the kernel";
  }
  if (!escaped.empty()) w->fail([&] { return std::move(escaped); });
  w->finish_current();
}

void Worker::finish_current() {
  Thread& t = threads_[current_];
  t.state = State::kDone;
  --live_;
  Warp& warp = warps_[t.linear / kWarpSize];
  const int lane = t.linear % kWarpSize;
  warp.exited |= 1u << lane;
  for (std::uint32_t rest = warp.waiting; rest != 0; rest &= rest - 1) {
    const int j = __builtin_ctz(rest);
    if (warp.mask[j] & (1u << lane)) {
      fail([&] {
        return "lane " + std::to_string(lane) + " of warp " + std::to_string(t.linear / kWarpSize) +
               " (thread " + dims(t.idx) + ") exited while lane " + std::to_string(j) +
               " waits for it in " + op_name(warp.op[j]) + " with mask " + hex(warp.mask[j]) +
               " at " + site(threads_[t.linear - lane + j].where) + where_block();
      });
    }
  }
  switch_away(true);
}

// Resumes the next runnable thread in the block's order; back to run_block when all are done.
void Worker::switch_away(bool exiting) {
  Thread& self = threads_[current_];
  const int n = static_cast<int>(order_.size());
  for (int step = 1; step <= n; ++step) {
    int pos = cursor_ + step;
    if (pos >= n) pos -= n;
    const int t = order_[pos];
    if (threads_[t].state != State::kRunnable) continue;
    if (t == current_) return;  // yielded with nobody else to run
    cursor_ = pos;
    current_ = t;
    threadIdx = threads_[t].idx;
    if (exiting) context_exit(&self.ctx, &threads_[t].ctx);
    context_switch(&self.ctx, &threads_[t].ctx);
    return;
  }
  if (live_ == 0) {
    current_ = -1;
    context_exit(&self.ctx, &main_);
  }
  fail([&] { return deadlock_message(); });
}

void Worker::leave_failed() {
  failed_ = true;
  Thread& self = threads_[current_];
  current_ = -1;
  context_exit(&self.ctx, &main_);
}

std::string Worker::where_block() const { return " (block " + dims(block_idx_) + ")"; }

void Worker::shuffle_order() {
  std::shuffle(order_.begin(), order_.end(), rng_);
  cursor_ = static_cast<int>(std::find(order_.begin(), order_.end(), current_) - order_.begin());
}

int Worker::barrier(BarrierOp op, int predicate, const std::source_location& where) {
  Thread& t = threads_[current_];
  if (arrived_ > 0 && !same_site(where, barrier_site_)) {
    fail([&] {
      return "divergent barrier: thread " + dims(t.idx) + " reached " + site(where) + " while " +
             std::to_string(arrived_) + " thread(s) wait at " + site(barrier_site_) + " in " +
             where.function_name() + where_block();
    });
  }
  if (arrived_ == 0) {
    barrier_site_ = where;
    barrier_acc_ = op == BarrierOp::kAnd ? 1 : 0;
  }
  const int p = predicate != 0;
  if (op == BarrierOp::kCount) barrier_acc_ += p;
  if (op == BarrierOp::kAnd) barrier_acc_ &= p;
  if (op == BarrierOp::kOr) barrier_acc_ |= p;
  if (++arrived_ == static_cast<int>(threads_.size())) {
    // The last arrival releases everyone and keeps running.
    barrier_result_ = barrier_acc_;
    arrived_ = 0;
    for (Thread& other : threads_) {
      if (other.state == State::kBarrier) other.state = State::kRunnable;
    }
    if (order_kind_ == Order::kRandom) shuffle_order();
    return barrier_result_;
  }
  t.state = State::kBarrier;
  t.where = where;
  switch_away(false);
  return barrier_result_;
}

std::uint32_t Worker::active_mask() const {
  const Warp& warp = warps_[threads_[current_].linear / kWarpSize];
  return warp.present & ~warp.exited;
}

std::uint64_t Worker::collective(WarpOp op, std::uint32_t mask, std::uint64_t bits, int arg,
                                 int width, const std::source_location& where) {
  Thread& t = threads_[current_];
  const int warp_index = t.linear / kWarpSize;
  const int lane = t.linear % kWarpSize;
  const std::uint32_t bit = 1u << lane;
  Warp& warp = warps_[warp_index];
  auto who = [&] {
    return std::string(op_name(op)) + " at " + site(where) + ": lane " + std::to_string(lane) +
           " of warp " + std::to_string(warp_index);
  };
  if (!(mask & bit)) {
    fail([&] { return who() + " is not in its own mask " + hex(mask) + where_block(); });
  }
  if (mask & ~warp.present) {
    fail([&] {
      return who() + " uses mask " + hex(mask) + ", which names lanes " +
             hex(mask & ~warp.present) + " that do not exist (the warp has " +
             std::to_string(__builtin_popcount(warp.present)) + " lanes)" + where_block();
    });
  }
  if (mask & warp.exited) {
    fail([&] {
      return who() + " uses mask " + hex(mask) + ", which names lane " +
             std::to_string(__builtin_ctz(mask & warp.exited)) + " that has already exited" +
             where_block();
    });
  }
  if (is_shuffle(op) && (width < 1 || width > kWarpSize || (width & (width - 1)) != 0)) {
    fail([&] {
      return who() + " has width " + std::to_string(width) + ", not a power of two up to 32" +
             where_block();
    });
  }
  // Waiting lanes that name each other share one mask and op (checked as each arrived), so one
  // member of this lane's group stands for all; any other lane naming this one is a mismatch.
  int conflict = -1;
  if (const std::uint32_t same = warp.waiting & mask) {
    const int j = __builtin_ctz(same);
    if (warp.mask[j] != mask || warp.op[j] != op || (is_shuffle(op) && warp.width[j] != width)) {
      conflict = j;
    }
  }
  if (conflict < 0 && (warp.named & bit)) {
    for (std::uint32_t rest = warp.waiting & ~mask; rest != 0; rest &= rest - 1) {
      if (warp.mask[__builtin_ctz(rest)] & bit) conflict = __builtin_ctz(rest);
    }
  }
  if (conflict >= 0) {
    fail([&] {
      return who() + " (mask " + hex(mask) + ") does not match lane " + std::to_string(conflict) +
             ", which waits in " + op_name(warp.op[conflict]) + " with mask " +
             hex(warp.mask[conflict]) + " at " +
             site(threads_[warp_index * kWarpSize + conflict].where) + where_block();
    });
  }
  warp.mask[lane] = mask;
  warp.op[lane] = op;
  warp.width[lane] = width;
  warp.arg[lane] = arg;
  warp.value[lane] = bits;
  warp.waiting |= bit;
  warp.named |= mask;
  if ((warp.waiting & mask) == mask) {
    complete(warp, mask, warp_index);
    warp.waiting &= ~mask;
    warp.named = 0;
    for (std::uint32_t rest = warp.waiting; rest != 0; rest &= rest - 1) {
      warp.named |= warp.mask[__builtin_ctz(rest)];
    }
    for (std::uint32_t rest = mask & ~bit; rest != 0; rest &= rest - 1) {
      threads_[warp_index * kWarpSize + __builtin_ctz(rest)].state = State::kRunnable;
    }
    return warp.result[lane];
  }
  t.state = State::kWarp;
  t.where = where;
  switch_away(false);
  return warp.result[lane];
}

// Computes every member's result once the whole mask has arrived (PTX shfl/vote/match/redux).
void Worker::complete(Warp& warp, std::uint32_t mask, int warp_index) {
  const int first = __builtin_ctz(mask);
  const WarpOp op = warp.op[first];
  if (is_shuffle(op)) {
    for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
      const int lane = __builtin_ctz(rest);
      const int width = warp.width[lane];
      const int segment = lane & ~(width - 1);
      const int arg = warp.arg[lane];
      int src = lane;
      switch (op) {
        case WarpOp::kShflIdx:
          src = segment + (arg & (width - 1));
          break;
        case WarpOp::kShflUp:
          src = (lane - segment) >= arg ? lane - arg : lane;
          break;
        case WarpOp::kShflDown:
          src = (lane - segment) + arg < width ? lane + arg : lane;
          break;
        default:
          src = (lane ^ (arg & 31)) < segment + width ? lane ^ (arg & 31) : lane;
          break;
      }
      if (src < 0 || src >= kWarpSize || !(mask & (1u << src))) {
        fail([&] {
          return std::string(op_name(op)) + " at " +
                 site(threads_[warp_index * kWarpSize + lane].where) + ": lane " +
                 std::to_string(lane) + " of warp " + std::to_string(warp_index) + " reads lane " +
                 std::to_string(src) + ", which is not in the mask " + hex(mask) + where_block();
        });
      }
      warp.result[lane] = warp.value[src];
    }
    return;
  }
  std::uint64_t common = 0;
  switch (op) {
    case WarpOp::kBallot:
    case WarpOp::kAny:
    case WarpOp::kAll: {
      std::uint32_t ballot = 0;
      for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
        const int lane = __builtin_ctz(rest);
        if (warp.value[lane]) ballot |= 1u << lane;
      }
      common = op == WarpOp::kBallot ? ballot : op == WarpOp::kAny ? ballot != 0 : ballot == mask;
      break;
    }
    case WarpOp::kMatchAny:
      for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
        const int lane = __builtin_ctz(rest);
        std::uint32_t same = 0;
        for (std::uint32_t other = mask; other != 0; other &= other - 1) {
          const int j = __builtin_ctz(other);
          if (warp.value[j] == warp.value[lane]) same |= 1u << j;
        }
        warp.result[lane] = same;
      }
      return;
    case WarpOp::kMatchAll: {
      bool all = true;
      for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
        all = all && warp.value[__builtin_ctz(rest)] == warp.value[first];
      }
      common = all ? mask : 0;
      break;
    }
    case WarpOp::kReduceAdd:
    case WarpOp::kReduceMin:
    case WarpOp::kReduceMax:
    case WarpOp::kReduceUMin:
    case WarpOp::kReduceUMax:
    case WarpOp::kReduceAnd:
    case WarpOp::kReduceOr:
    case WarpOp::kReduceXor: {
      auto acc = static_cast<std::uint32_t>(warp.value[first]);
      for (std::uint32_t rest = mask & (mask - 1); rest != 0; rest &= rest - 1) {
        const auto v = static_cast<std::uint32_t>(warp.value[__builtin_ctz(rest)]);
        const auto sa = static_cast<std::int32_t>(acc), sv = static_cast<std::int32_t>(v);
        switch (op) {
          case WarpOp::kReduceAdd:
            acc += v;
            break;
          case WarpOp::kReduceMin:
            acc = static_cast<std::uint32_t>(std::min(sa, sv));
            break;
          case WarpOp::kReduceMax:
            acc = static_cast<std::uint32_t>(std::max(sa, sv));
            break;
          case WarpOp::kReduceUMin:
            acc = std::min(acc, v);
            break;
          case WarpOp::kReduceUMax:
            acc = std::max(acc, v);
            break;
          case WarpOp::kReduceAnd:
            acc &= v;
            break;
          case WarpOp::kReduceOr:
            acc |= v;
            break;
          default:
            acc ^= v;
            break;
        }
      }
      common = acc;
      break;
    }
    default:
      break;  // __syncwarp: only the meeting matters
  }
  for (std::uint32_t rest = mask; rest != 0; rest &= rest - 1) {
    warp.result[__builtin_ctz(rest)] = common;
  }
}

std::string Worker::deadlock_message() const {
  int exited = 0;
  std::map<std::string, int> waits;
  const char* function = nullptr;
  for (const Thread& t : threads_) {
    if (t.state == State::kDone) {
      ++exited;
      continue;
    }
    if (function == nullptr) function = t.where.function_name();
    if (t.state == State::kBarrier) {
      ++waits["__syncthreads (" + site(t.where) + ")"];
    } else if (t.state == State::kWarp) {
      const Warp& warp = warps_[t.linear / kWarpSize];
      const int lane = t.linear % kWarpSize;
      ++waits[std::string(op_name(warp.op[lane])) + " (" + site(t.where) + ", warp " +
              std::to_string(t.linear / kWarpSize) + ", mask " + hex(warp.mask[lane]) + ")"];
    }
  }
  std::string message =
      "deadlock in " + std::string(function ? function : "kernel") + where_block() + ": ";
  std::string parts;
  if (exited > 0) parts = std::to_string(exited) + " thread(s) exited";
  for (const auto& [what, count] : waits) {
    parts += (parts.empty() ? "" : ", ") + std::to_string(count) + " wait at " + what;
  }
  return message + parts;
}

// ---- running a launch on the workers ------------------------------------------------------------

struct Job {
  const KernelCall* call = nullptr;
  std::uint64_t blocks = 0;
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;
};

void run_blocks(Job& job) {
  Worker& worker = this_worker();
  const std::uint64_t gx = job.call->grid.x, gy = job.call->grid.y;
  while (!job.failed.load(std::memory_order_relaxed)) {
    const std::uint64_t b = job.next.fetch_add(1, std::memory_order_relaxed);
    if (b >= job.blocks) return;
    const uint3 idx{static_cast<unsigned>(b % gx), static_cast<unsigned>(b / gx % gy),
                    static_cast<unsigned>(b / (gx * gy))};
    std::string error;
    if (!worker.run_block(*job.call, idx, &error)) {
      std::lock_guard<std::mutex> lock(job.mutex);
      if (!job.failed.load()) {
        job.error = std::move(error);
        job.failed.store(true);
      }
      return;
    }
  }
}

// Helper threads that join the calling thread in running a launch's blocks.
class Pool {
 public:
  void run(Job& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(threads_.size()) < helpers) {
        threads_.emplace_back([this] { loop(); });
      }
      job_ = &job;
      wanted_ = helpers;
    }
    work_.notify_all();
    run_blocks(job);
    std::unique_lock<std::mutex> lock(mutex_);
    wanted_ = 0;  // helpers that have not woken yet are not needed any more
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [this] { return wanted_ > 0; });
      --wanted_;
      ++running_;
      Job* job = job_;
      lock.unlock();
      run_blocks(*job);
      lock.lock();
      if (--running_ == 0) done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  int wanted_ = 0;
  int running_ = 0;
};

Pool& pool() {
  static Pool* p = [] {
    auto* pool = new Pool;  // never destroyed: its threads may outlive static destruction
    return pool;
  }();
  return *p;
}

}  // namespace

cudaError_t run_kernel(const KernelCall& call, std::string* error) {
  if (t_running != nullptr) {
    *error = "kernel launches from device code are not supported by the emulator";
    return cudaErrorNotSupported;
  }
  static std::mutex launch_mutex;
  std::lock_guard<std::mutex> lock(launch_mutex);
  Job job;
  job.call = &call;
  job.blocks = static_cast<std::uint64_t>(call.grid.x) * call.grid.y * call.grid.z;
  const auto participants =
      std::min<std::uint64_t>(job.blocks, workers_setting().load(std::memory_order_relaxed));
  if (participants > 1) {
    pool().run(job, static_cast<int>(participants - 1));
  } else {
    run_blocks(job);
  }
  if (job.failed.load()) {
    *error = job.error;
    return cudaErrorLaunchFailure;
  }
  return cudaSuccess;
}

bool in_device_code() { return t_running != nullptr; }

// ---- the device-side entry points ---------------------------------------------------------------

int block_barrier(BarrierOp op, int predicate, const std::source_location& where) {
  return running_worker("__syncthreads").barrier(op, predicate, where);
}

std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t bits, int arg, int width,
                              const std::source_location& where) {
  return running_worker(op_name(op)).collective(op, mask, bits, arg, width, where);
}

unsigned active_mask() { return running_worker("__activemask").active_mask(); }

void yield_thread() { running_worker("__nanosleep").yield(); }

unsigned char* dynamic_shared_memory() { return running_worker("SIMT_DYNAMIC_SHARED").shared(); }

void trap(const std::source_location& where) {
  Worker& w = running_worker("__trap");
  w.fail([&] {
    return "__trap() at " + site(where) + " in " + where.function_name() + w.where_block();
  });
}

long long clock_ticks() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace detail

void set_order(Order order) {
  detail::order_setting().store(static_cast<int>(order), std::memory_order_relaxed);
}
Order order() {
  return static_cast<Order>(detail::order_setting().load(std::memory_order_relaxed));
}
void set_seed(std::uint64_t seed) { detail::seed_setting().store(seed, std::memory_order_relaxed); }
void set_workers(int workers) {
  detail::workers_setting().store(std::max(1, workers), std::memory_order_relaxed);
}
int workers() { return detail::workers_setting().load(std::memory_order_relaxed); }

}  // namespace simt
