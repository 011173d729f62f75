// A fixed pool of worker threads for intra-op parallelism.
#include "ember/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_util.h"
#include "ember/error.h"

namespace ember {

namespace {

thread_local bool t_in_parallel = false;

int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// Workers sleep on a condition variable; a job is a chunked range that the caller and the
// workers drain together through an atomic cursor.
class ThreadPool {
 public:
  ~ThreadPool() { resize(0); }

  void resize(int workers) {
    std::unique_lock lock(mu_);
    if (static_cast<int>(threads_.size()) == workers) return;
    stop_ = true;
    cv_.notify_all();
    lock.unlock();
    for (auto& t : threads_) t.join();
    lock.lock();
    threads_.clear();
    stop_ = false;
    threads_.reserve(static_cast<size_t>(workers));
    for (int i = 0; i < workers; ++i) {
      try {
        threads_.push_back(detail::start_compute_thread([this] { loop(); }));
      } catch (const std::exception& e) {
        // Those already started are joined: nothing is left running when the error leaves.
        stop_ = true;
        cv_.notify_all();
        lock.unlock();
        for (auto& t : threads_) t.join();
        lock.lock();
        threads_.clear();
        stop_ = false;
        throw Error("[parallel_for] could not start thread " + std::to_string(i + 1) + " of " +
                    std::to_string(workers) + " of the thread pool (" +
                    detail::thread_error_text(e) + "); lower set_num_threads");
      }
    }
  }

  void run(int64_t n, int64_t chunk, const std::function<void(int64_t, int64_t)>& fn) {
    std::lock_guard run_lock(run_mu_);  // one parallel job at a time
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      n_ = n;
      chunk_ = chunk;
      next_.store(0);
      pending_ = static_cast<int>(threads_.size());
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return pending_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    t_in_parallel = true;
    for (;;) {
      int64_t begin = next_.fetch_add(chunk_);
      if (begin >= n_) break;
      try {
        (*fn_)(begin, std::min(n_, begin + chunk_));
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
    t_in_parallel = false;
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }

  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::atomic<int64_t> next_{0};
  int pending_ = 0;
  std::exception_ptr error_;
};

std::atomic<int> g_num_threads{default_threads()};

ThreadPool& pool() {
  static ThreadPool p;
  return p;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw ValueError("[set_num_threads] expected n >= 1, got " + std::to_string(n));
  g_num_threads.store(n);
}

int get_num_threads() { return g_num_threads.load(); }

bool in_parallel_region() { return t_in_parallel; }

void parallel_for(int64_t n, int64_t grain, RangeFnRef fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads = get_num_threads();
  if (threads <= 1 || n <= grain || t_in_parallel) {
    fn(0, n);
    return;
  }
  int64_t max_chunks = (n + grain - 1) / grain;
  int use = static_cast<int>(std::min<int64_t>(threads, max_chunks));
  // A few chunks per thread balance uneven work without much scheduling cost.
  int64_t chunk = std::max<int64_t>(grain, (n + use * 4 - 1) / (use * 4));
  ThreadPool& p = pool();
  p.resize(threads - 1);  // no-op unless set_num_threads changed
  p.run(n, chunk, fn);    // a RangeFnRef fits std::function's small buffer: no allocation
}

}  // namespace ember
