// DataLoader: batch plans, the worker pool with its in-order delivery window, and pinned buffers.
#include "ember/data/dataloader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "core/tensor_util.h"
#include "core/thread_util.h"
#include "data/seed.h"
#include "data/worker_context.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data {

DataLoaderOptions& DataLoaderOptions::sampler(std::vector<int64_t> indices) {
  sampler_ = std::make_shared<IndexSampler>(std::move(indices));
  return *this;
}

DataLoaderOptions& DataLoaderOptions::sampler(FunctionSampler::Function fn) {
  sampler_ = std::make_shared<FunctionSampler>(std::move(fn));
  return *this;
}

Example default_collate(std::vector<Example> examples) {
  if (examples.empty()) throw ValueError("[default_collate] no examples to collate");
  const bool has_target = examples.front().target.defined();
  TensorList data, target;
  data.reserve(examples.size());
  target.reserve(has_target ? examples.size() : 0);
  for (Example& e : examples) {
    if (!e.data.defined()) throw ValueError("[default_collate] an example has no data");
    if (e.target.defined() != has_target) {
      throw ValueError("[default_collate] some examples have a target and some do not");
    }
    data.push_back(std::move(e.data));
    if (has_target) target.push_back(std::move(e.target));
  }
  return {stack(data), has_target ? stack(target) : Tensor()};
}

namespace detail {

namespace {

// Thrown inside a worker when its pass was cancelled: the batch is dropped, not reported.
struct Cancelled {};

// A dataset error with the sample that raised it.
struct SampleError {
  int64_t sample;
  std::string message;
};

std::string seconds_str(double s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

}  // namespace

// Page-locked host buffers recycled between batches. A batch tensor borrows a buffer through a
// storage whose deleter hands the buffer back under the pool's lock, so the batch's last release
// happens-before the buffer's next use. Leases keep the pool alive: batches may outlive the loader.
class PinnedPool {
 public:
  explicit PinnedPool(size_t max_buffers) : shared_(std::make_shared<Shared>()) {
    shared_->max_buffers = max_buffers;
  }

  // A copy of `t` in a pinned buffer; tensors not on the CPU are returned as they are.
  Tensor pin(const Tensor& t) {
    if (!t.defined() || !t.is_cpu() || t.numel() == 0) return t;
    const size_t nbytes = t.nbytes();
    std::unique_ptr<Lease> lease;
    void* data = nullptr;
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      std::vector<Slot>& slots = shared_->slots;
      size_t pick = slots.size();
      for (size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].busy) continue;
        if (slots[i].buffer.nbytes() >= nbytes) {
          pick = i;
          break;
        }
        if (pick == slots.size()) pick = i;  // free but too small: regrown below
      }
      if (pick < slots.size() && slots[pick].buffer.nbytes() < nbytes) {
        slots[pick].buffer = allocate(nbytes);
      } else if (pick == slots.size() && slots.size() < shared_->max_buffers) {
        slots.push_back({allocate(nbytes), false});
      }
      if (pick < slots.size()) {
        slots[pick].busy = true;
        data = slots[pick].buffer.data_ptr();
        lease = std::make_unique<Lease>(Lease{shared_, pick});
      }
    }
    Tensor out;
    if (lease) {
      auto impl = std::make_shared<TensorImpl>();
      impl->storage = std::make_shared<StorageImpl>(
          DataPtr(data, lease.get(), &PinnedPool::give_back, Device(kCPU)), nbytes);
      lease.release();  // owned by the storage now
      impl->sizes = t.sizes();
      impl->strides = contiguous_strides(t.sizes());
      impl->dtype = t.dtype();
      impl->device = Device(kCPU);
      impl->refresh();
      out = Tensor(std::move(impl));
    } else {
      // Every buffer is held by a batch still alive: a one-off pinned allocation.
      out = empty(t.sizes(), TensorOptions().dtype(t.dtype()).pinned_memory(true));
    }
    out.copy_(t);
    return out;
  }

 private:
  struct Slot {
    Tensor buffer;  // uint8, page-locked
    bool busy;
  };
  struct Shared {
    std::mutex mu;
    std::vector<Slot> slots;
    size_t max_buffers = 0;
  };
  struct Lease {
    std::shared_ptr<Shared> shared;
    size_t slot;
  };

  static Tensor allocate(size_t nbytes) {
    return empty({static_cast<int64_t>(nbytes)}, TensorOptions().dtype(kUInt8).pinned_memory(true));
  }
  static void give_back(void*, void* ctx) {
    std::unique_ptr<Lease> lease(static_cast<Lease*>(ctx));
    std::lock_guard<std::mutex> lock(lease->shared->mu);
    lease->shared->slots[lease->slot].busy = false;
  }

  std::shared_ptr<Shared> shared_;
};

// What every pass of a loader shares.
struct LoadContext {
  DatasetPtr dataset;
  Collate collate;
  int num_workers = 0;
  double timeout = 0.0;
  std::unique_ptr<PinnedPool> pinned;  // null without pin_memory
};

// One pass: the batches' sample indices and the pass's seed.
struct Plan {
  std::vector<std::vector<int64_t>> batches;
  uint64_t seed = 0;
};

namespace {

// Loads, collates and pins batch `b` of `plan`. With `live` set, stops (throws Cancelled) as soon
// as *live no longer equals `gen`; with `wrap`, dataset errors become SampleError.
Example load_batch(const LoadContext& ctx, const Plan& plan, size_t b, int worker, bool wrap,
                   const std::atomic<uint64_t>* live, uint64_t gen) {
  const uint64_t seed = mix_seed(plan.seed, b);
  WorkerContext wc{WorkerInfo{worker, ctx.num_workers, seed}, Generator(Device(kCPU), seed)};
  WorkerContextGuard guard(&wc);
  const std::vector<int64_t>& indices = plan.batches[b];
  std::vector<Example> examples;
  examples.reserve(indices.size());
  for (int64_t i : indices) {
    if (live && live->load(std::memory_order_relaxed) != gen) throw Cancelled{};
    if (!wrap) {
      examples.push_back(ctx.dataset->get(i));
      continue;
    }
    try {
      examples.push_back(ctx.dataset->get(i));
    } catch (const std::exception& e) {
      throw SampleError{i, e.what()};
    } catch (...) {
      throw SampleError{i, "unknown exception"};
    }
  }
  Example batch =
      ctx.collate ? ctx.collate(std::move(examples)) : default_collate(std::move(examples));
  if (ctx.pinned) {
    batch.data = ctx.pinned->pin(batch.data);
    batch.target = ctx.pinned->pin(batch.target);
  }
  return batch;
}

}  // namespace

// Worker threads that load the batches of one pass at a time. Workers claim batches in order;
// a batch may be claimed only while fewer than `window` batches are claimed or waiting ahead of
// the consumer, which bounds memory and keeps delivery in order however long each batch takes.
class WorkerPool {
 public:
  WorkerPool(std::shared_ptr<const LoadContext> ctx, int num_workers, size_t window)
      : ctx_(std::move(ctx)), window_(window) {
    threads_.reserve(static_cast<size_t>(num_workers));
    for (int id = 0; id < num_workers; ++id) {
      try {
        threads_.push_back(ember::detail::start_compute_thread([this, id] { work(id); }));
      } catch (const std::exception& e) {
        stop_all();  // the destructor does not run for a constructor that throws
        throw Error("[DataLoader] could not start worker " + std::to_string(id + 1) + " of " +
                    std::to_string(num_workers) + " (" + ember::detail::thread_error_text(e) +
                    "); lower num_workers");
      }
    }
  }

  ~WorkerPool() { stop_all(); }

  // Starts a pass, ending the current one; returns the pass's generation.
  uint64_t start(std::shared_ptr<const Plan> plan) {
    uint64_t gen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      gen = ++gen_;
      plan_ = std::move(plan);
      next_claim_ = next_deliver_ = 0;
      ready_.clear();
      live_.store(gen);
    }
    work_cv_.notify_all();
    ready_cv_.notify_all();
    return gen;
  }

  // Ends pass `gen` if it is still the current one: workers drop what they are loading.
  void cancel(uint64_t gen) {
    std::lock_guard<std::mutex> lock(mu_);
    if (gen != gen_) return;
    ++gen_;
    plan_.reset();
    ready_.clear();
    live_.store(gen_);
  }

  // The next batch of pass `gen` in order, or nullopt when the pass is complete.
  std::optional<Example> next(uint64_t gen) {
    std::unique_lock<std::mutex> lock(mu_);
    check_current(gen);
    if (next_deliver_ >= plan_->batches.size()) return std::nullopt;
    const auto ready = [&] { return gen != gen_ || ready_.count(next_deliver_) > 0; };
    if (ctx_->timeout > 0.0) {
      if (!ready_cv_.wait_for(lock, std::chrono::duration<double>(ctx_->timeout), ready)) {
        throw Error("[DataLoader] timed out after " + seconds_str(ctx_->timeout) +
                    " s waiting for a batch");
      }
    } else {
      ready_cv_.wait(lock, ready);
    }
    check_current(gen);
    auto it = ready_.find(next_deliver_);
    Result r = std::move(it->second);
    ready_.erase(it);
    ++next_deliver_;
    lock.unlock();
    work_cv_.notify_all();  // the window moved on
    if (!r.error.empty()) throw Error(r.error);
    return std::move(r.batch);
  }

 private:
  struct Result {
    Example batch;
    std::string error;  // set when loading failed
  };

  // Stops and joins every started worker.
  void stop_all() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      live_.store(std::numeric_limits<uint64_t>::max());
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

  void check_current(uint64_t gen) const {
    if (gen != gen_ || !plan_) {
      throw Error(
          "[DataLoader] this pass was ended by a newer pass over the same loader "
          "(persistent workers serve one pass at a time)");
    }
  }

  void work(int id) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] {
        return stop_ || (plan_ && next_claim_ < plan_->batches.size() &&
                         next_claim_ < next_deliver_ + window_);
      });
      if (stop_) return;
      const size_t b = next_claim_++;
      const uint64_t gen = gen_;
      const std::shared_ptr<const Plan> plan = plan_;
      lock.unlock();

      Result r;
      bool cancelled = false;
      try {
        r.batch = load_batch(*ctx_, *plan, b, id, true, &live_, gen);
      } catch (const Cancelled&) {
        cancelled = true;
      } catch (const SampleError& e) {
        r.error = "[DataLoader] worker " + std::to_string(id) + " failed on sample " +
                  std::to_string(e.sample) + ": " + e.message;
      } catch (const std::exception& e) {
        r.error = "[DataLoader] worker " + std::to_string(id) + " failed on batch " +
                  std::to_string(b) + " (collate or pin): " + e.what();
      } catch (...) {
        r.error = "[DataLoader] worker " + std::to_string(id) + " failed on batch " +
                  std::to_string(b) + ": unknown exception";
      }

      lock.lock();
      if (!cancelled && gen == gen_) {
        ready_.emplace(b, std::move(r));
        ready_cv_.notify_all();
      }
    }
  }

  std::shared_ptr<const LoadContext> ctx_;
  const size_t window_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, ready_cv_;
  bool stop_ = false;
  uint64_t gen_ = 0;
  std::atomic<uint64_t> live_{0};  // gen_, readable without the lock while loading
  std::shared_ptr<const Plan> plan_;
  size_t next_claim_ = 0, next_deliver_ = 0;
  std::map<size_t, Result> ready_;
};

class LoaderState {
 public:
  std::shared_ptr<LoadContext> ctx;
  std::shared_ptr<WorkerPool> persistent_pool;
  size_t window = 0;
};

// One pass over the loader, behind an Iterator.
class EpochRun {
 public:
  EpochRun(std::shared_ptr<const LoadContext> ctx, std::shared_ptr<const Plan> plan,
           std::shared_ptr<WorkerPool> pool, bool owns_pool)
      : ctx_(std::move(ctx)),
        plan_(std::move(plan)),
        pool_(std::move(pool)),
        owns_pool_(owns_pool) {
    if (pool_) gen_ = pool_->start(plan_);
  }
  ~EpochRun() { release_pool(); }

  // Fetches the next batch into current(), or marks the pass done.
  void advance() {
    if (done_) return;
    std::optional<Example> batch;
    if (pool_) {
      batch = pool_->next(gen_);
    } else if (next_ < plan_->batches.size()) {
      batch = load_batch(*ctx_, *plan_, next_++, 0, false, nullptr, 0);
    }
    if (batch) {
      current_ = std::move(*batch);
    } else {
      done_ = true;
      current_ = {};
      release_pool();  // a pass's own threads end with it
    }
  }
  bool done() const { return done_; }
  Example& current() {
    if (done_) throw Error("[DataLoader] dereferencing an iterator past the last batch");
    return current_;
  }

 private:
  void release_pool() {
    if (!pool_) return;
    if (!owns_pool_) pool_->cancel(gen_);
    pool_.reset();
  }

  std::shared_ptr<const LoadContext> ctx_;
  std::shared_ptr<const Plan> plan_;
  std::shared_ptr<WorkerPool> pool_;
  bool owns_pool_;
  uint64_t gen_ = 0;
  size_t next_ = 0;
  bool done_ = false;
  Example current_;
};

}  // namespace detail

// ---- DataLoader ---------------------------------------------------------------------------------

DataLoader::Iterator::Iterator(std::shared_ptr<detail::EpochRun> run) : run_(std::move(run)) {}
Example& DataLoader::Iterator::operator*() const { return run_->current(); }
DataLoader::Iterator& DataLoader::Iterator::operator++() {
  run_->advance();
  return *this;
}
bool DataLoader::Iterator::operator==(const Sentinel&) const { return run_->done(); }

DataLoader::DataLoader(DatasetPtr dataset, DataLoaderOptions options, int)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  const DataLoaderOptions& o = options_;
  if (!dataset_) throw ValueError("[DataLoader] dataset is null");
  if (o.batch_size() < 1) {
    throw ValueError("[DataLoader] batch_size must be positive, got " +
                     std::to_string(o.batch_size()));
  }
  if (o.num_workers() < 0) {
    throw ValueError("[DataLoader] num_workers option should be non-negative, got " +
                     std::to_string(o.num_workers()));
  }
  if (o.timeout() < 0) {
    throw ValueError("[DataLoader] timeout option should be non-negative, got " +
                     detail::seconds_str(o.timeout()));
  }
  if (o.has_prefetch_factor() && o.num_workers() == 0) {
    throw ValueError("[DataLoader] prefetch_factor option needs num_workers > 0");
  }
  if (o.prefetch_factor() < 1) {
    throw ValueError("[DataLoader] prefetch_factor must be positive, got " +
                     std::to_string(o.prefetch_factor()));
  }
  if (o.persistent_workers() && o.num_workers() == 0) {
    throw ValueError("[DataLoader] persistent_workers option needs num_workers > 0");
  }
  if (o.shuffle() && o.sampler()) {
    throw ValueError("[DataLoader] sampler option is mutually exclusive with shuffle");
  }
  if (!options_.seed()) {
    options_.seed(static_cast<uint64_t>(
        randint(0, std::numeric_limits<int64_t>::max(), {1}).item<int64_t>()));
  }
  if (o.sampler()) {
    sampler_ = o.sampler();
  } else if (o.shuffle()) {
    sampler_ = std::make_shared<RandomSampler>(dataset_->size(), *options_.seed());
  } else {
    sampler_ = std::make_shared<SequentialSampler>(dataset_->size());
  }

  state_ = std::make_shared<detail::LoaderState>();
  auto ctx = std::make_shared<detail::LoadContext>();
  ctx->dataset = dataset_;
  ctx->collate = o.collate();
  ctx->num_workers = o.num_workers();
  ctx->timeout = o.timeout();
  state_->window = static_cast<size_t>(o.prefetch_factor()) * static_cast<size_t>(o.num_workers());
  if (o.pin_memory() && !cuda::is_available()) {
    // As PyTorch: without an accelerator there is nothing to pin for; batches stay pageable.
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::fprintf(stderr,
                   "[DataLoader] warning: pin_memory is set but no CUDA device is available; "
                   "batches are not pinned\n");
    });
  } else if (o.pin_memory()) {
    // Two tensors per batch, for every batch in flight plus the consumer's and one being copied.
    ctx->pinned =
        std::make_unique<detail::PinnedPool>(2 * (std::max<size_t>(state_->window, 1) + 2));
  }
  state_->ctx = std::move(ctx);
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::size() const {
  const int64_t n = sampler_->size(), b = options_.batch_size();
  return options_.drop_last() ? n / b : (n + b - 1) / b;
}

void DataLoader::set_epoch(int64_t epoch) {
  sampler_->set_epoch(epoch);
  last_epoch_ = -1;
}

DataLoader::Iterator DataLoader::begin() {
  int64_t epoch = sampler_->epoch();
  if (last_epoch_ >= 0 && epoch == last_epoch_) epoch = last_epoch_ + 1;
  sampler_->set_epoch(epoch);
  last_epoch_ = epoch;

  auto plan = std::make_shared<detail::Plan>();
  plan->seed = detail::mix_seed(*options_.seed(), static_cast<uint64_t>(epoch));
  const std::vector<int64_t> indices = sampler_->indices();
  const size_t b = static_cast<size_t>(options_.batch_size());
  for (size_t start = 0; start < indices.size(); start += b) {
    const size_t end = std::min(indices.size(), start + b);
    if (end - start < b && options_.drop_last()) break;
    plan->batches.emplace_back(indices.begin() + static_cast<std::ptrdiff_t>(start),
                               indices.begin() + static_cast<std::ptrdiff_t>(end));
  }

  std::shared_ptr<detail::WorkerPool> pool;
  const int workers = options_.num_workers();
  if (workers > 0) {
    if (options_.persistent_workers()) {
      if (!state_->persistent_pool) {
        state_->persistent_pool =
            std::make_shared<detail::WorkerPool>(state_->ctx, workers, state_->window);
      }
      pool = state_->persistent_pool;
    } else {
      pool = std::make_shared<detail::WorkerPool>(state_->ctx, workers, state_->window);
    }
  }
  auto run = std::make_shared<detail::EpochRun>(state_->ctx, std::move(plan), std::move(pool),
                                                !options_.persistent_workers());
  run->advance();
  return Iterator(std::move(run));
}

}  // namespace ember::data
