// The threads ember starts (the intra-op pool, DataLoader workers) and signals: they block every
// asynchronous signal, so a signal storm during float32 products lands on the user's threads only
// and never corrupts memory; and a thread that cannot be created is a clear error with every
// started thread joined.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/ember.h"

using namespace ember;

namespace {

pid_t tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Threads of this process, from /proc/self/task.
int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

bool blocks_async_signals() {
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, nullptr, &cur);
  for (int s : {SIGINT, SIGTERM, SIGPROF, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD, SIGHUP, SIGQUIT})
    if (!sigismember(&cur, s)) return false;
  // Synchronous signals stay deliverable: a crash in a worker must still be reported.
  return !sigismember(&cur, SIGSEGV) && !sigismember(&cur, SIGBUS) && !sigismember(&cur, SIGFPE);
}

// Set on a thread while it runs ember's work for the test (pool chunk or dataset sample) away
// from the main thread: a signal handled there is a signal that reached a compute thread.
thread_local bool t_compute = false;
std::atomic<int> g_handled{0}, g_on_compute{0};

void on_signal(int) {
  g_handled.fetch_add(1, std::memory_order_relaxed);
  if (t_compute) g_on_compute.fetch_add(1, std::memory_order_relaxed);
}

// Samples whose get() runs on the DataLoader's workers; each records whether its thread blocks
// the asynchronous signals.
class MaskProbe : public data::Dataset {
 public:
  explicit MaskProbe(pid_t main) : main_(main) {}
  int64_t size() const override { return 64; }
  data::Example get(int64_t index) const override {
    const bool worker = tid() != main_;
    t_compute = worker;
    if (worker && !blocks_async_signals()) unmasked.fetch_add(1);
    Tensor x = full({8, 8}, static_cast<double>(index));
    Tensor y = mm(x, x);  // a product on the worker too
    t_compute = false;
    return {y.sum(), tensor(std::vector<int64_t>{index})};
  }
  mutable std::atomic<int> unmasked{0};

 private:
  pid_t main_;
};

}  // namespace

TEST(Threads, PoolAndDataLoaderThreadsBlockAsynchronousSignals) {
  const int before = get_num_threads();
  set_num_threads(3);
  const pid_t main = tid();
  std::atomic<int> workers_seen{0}, unmasked{0};
  parallel_for(300, 1, [&](int64_t, int64_t) {
    if (tid() == main) {  // leave chunks to the workers (for at most 5 s)
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (workers_seen.load() < 2 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      return;
    }
    workers_seen.fetch_add(1);
    if (!blocks_async_signals()) unmasked.fetch_add(1);
  });
  set_num_threads(before);
  EXPECT_GT(workers_seen.load(), 0) << "no chunk ran on a pool thread";
  EXPECT_EQ(unmasked.load(), 0) << "pool threads that take asynchronous signals";

  auto probe = std::make_shared<MaskProbe>(main);
  data::DataLoader loader(probe, data::DataLoaderOptions().batch_size(4).num_workers(3));
  int64_t batches = 0;
  for (auto& b : loader) batches += b.data.size(0) > 0 ? 1 : 0;
  EXPECT_EQ(batches, 16);
  EXPECT_EQ(probe->unmasked.load(), 0) << "DataLoader workers that take asynchronous signals";
  // The caller's own mask is left as it was.
  sigset_t cur;
  pthread_sigmask(SIG_BLOCK, nullptr, &cur);
  EXPECT_FALSE(sigismember(&cur, SIGINT));
}

// SIGPROF from an interval timer (what a sampling profiler does), SIGINT, SIGTERM and SIGUSR1
// from another thread, all at a high rate for two seconds while the main thread runs float32
// products on the pool and a DataLoader runs products on its workers: every product stays right,
// no signal reaches a compute thread, and the process lives.
TEST(Threads, SignalStormDuringProductsCorruptsNothing) {
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  struct sigaction old[4];
  const int sigs[4] = {SIGPROF, SIGINT, SIGTERM, SIGUSR1};
  for (int i = 0; i < 4; ++i) ASSERT_EQ(sigaction(sigs[i], &sa, &old[i]), 0);

  const int before = get_num_threads();
  set_num_threads(3);
  manual_seed(11);
  Tensor a = randn({96, 160}), b = randn({160, 112});
  const Tensor want = mm(a.to(kFloat64), b.to(kFloat64));

  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread sender([&] {
    int i = 0;
    while (!stop.load()) {
      kill(getpid(), sigs[1 + i++ % 3]);
      sent.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  itimerval every = {{0, 200}, {0, 200}};
  setitimer(ITIMER_PROF, &every, nullptr);

  auto probe = std::make_shared<MaskProbe>(tid());
  data::DataLoader loader(probe, data::DataLoaderOptions().batch_size(2).num_workers(2));
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int products = 0, wrong = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (auto& batch : loader) {
      Tensor c = mm(a, b);
      ++products;
      if (!allclose(c.to(kFloat64), want, 1e-4, 1e-4)) ++wrong;
      (void)batch;
    }
  }
  itimerval off = {};
  setitimer(ITIMER_PROF, &off, nullptr);
  stop.store(true);
  sender.join();
  for (int i = 0; i < 4; ++i) sigaction(sigs[i], &old[i], nullptr);
  set_num_threads(before);

  EXPECT_GT(products, 20);
  EXPECT_EQ(wrong, 0);
  EXPECT_GT(sent.load(), 200);
  EXPECT_GT(g_handled.load(), 200);
  EXPECT_EQ(g_on_compute.load(), 0) << "signals handled on a compute thread";
  // The heap is intact: allocate and free a lot after the storm.
  std::vector<std::vector<char>> blocks;
  for (int i = 0; i < 2000; ++i) blocks.emplace_back(static_cast<size_t>(64 + i * 13), 'x');
  blocks.clear();
}

namespace {

// Caps the address space a little above what the process uses, so that only a few more thread
// stacks fit.
void cap_address_space() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (f == nullptr || std::fscanf(f, "%lu", &pages) != 1) std::_Exit(3);
  std::fclose(f);
  const rlim_t cap = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + (160ul << 20);
  rlimit r = {cap, cap};
  if (setrlimit(RLIMIT_AS, &r) != 0) std::_Exit(4);
}

// The statement of the death tests: runs `make` under the cap; exits 0 when it threw an Error
// whose message contains `expect` and the process is back to its threads of before.
template <class F>
void fails_cleanly(F make, const std::string& expect) {
  const int threads = thread_count();
  cap_address_space();
  try {
    make();
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    if (std::string(e.what()).find(expect) == std::string::npos) std::_Exit(5);
    if (thread_count() != threads) std::_Exit(6);
    std::_Exit(0);
  } catch (...) {
    std::_Exit(7);
  }
  std::_Exit(8);  // nothing thrown
}

}  // namespace

TEST(ThreadsDeathTest, DataLoaderThatCannotStartItsWorkersRaisesAndJoinsThem) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);  // a hang fails the test instead of blocking it
        fails_cleanly(
            [] {
              data::TensorDataset ds(zeros({6000, 2}), zeros({6000}));
              data::DataLoader loader(ds, data::DataLoaderOptions().num_workers(3000));
              for (auto& b : loader) (void)b;
            },
            "[DataLoader] could not start worker");
      },
      testing::ExitedWithCode(0), "could not start worker [0-9]+ of 3000");
}

TEST(ThreadsDeathTest, ThreadPoolThatCannotStartItsThreadsRaisesAndJoinsThem) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);
        fails_cleanly(
            [] {
              set_num_threads(3000);
              parallel_for(1 << 20, 1, [](int64_t, int64_t) {});
            },
            "[parallel_for] could not start thread");
      },
      testing::ExitedWithCode(0), "could not start thread [0-9]+ of 2999");
}
