// DataLoader: batches from a dataset, loaded by worker threads ahead of the consumer and
// delivered in sampler order; optionally copied into recycled pinned host buffers.
//
//   data::DataLoader loader(dataset, data::DataLoaderOptions().batch_size(64).shuffle(true)
//                                      .num_workers(2).pin_memory(true));
//   for (auto& batch : loader) { batch.data; batch.target; }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/sampler.h"

namespace ember::data {

// Turns the examples of one batch into a batch.
using Collate = std::function<Example(std::vector<Example>)>;

// Stacks the data (and the targets, when defined) along a new dim 0.
Example default_collate(std::vector<Example> examples);

// PyTorch's DataLoader options and defaults. Setters chain; getters have the same names.
class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  explicit DataLoaderOptions(int64_t batch_size) : batch_size_(batch_size) {}

  DataLoaderOptions& batch_size(int64_t v) {
    batch_size_ = v;
    return *this;
  }
  DataLoaderOptions& shuffle(bool v) {
    shuffle_ = v;
    return *this;
  }
  // Visiting order; excludes shuffle. A Sampler, a fixed index list, or a callable of the epoch.
  DataLoaderOptions& sampler(SamplerPtr v) {
    sampler_ = std::move(v);
    return *this;
  }
  DataLoaderOptions& sampler(std::vector<int64_t> indices);
  DataLoaderOptions& sampler(FunctionSampler::Function fn);
  // 0: batches are loaded in the iterating thread; N: by N worker threads.
  DataLoaderOptions& num_workers(int v) {
    num_workers_ = v;
    return *this;
  }
  // libtorch's name for num_workers.
  DataLoaderOptions& workers(int v) { return num_workers(v); }
  DataLoaderOptions& collate(Collate v) {
    collate_ = std::move(v);
    return *this;
  }
  // Copy each batch into page-locked host buffers (recycled), so .to(cuda, true) can overlap.
  DataLoaderOptions& pin_memory(bool v) {
    pin_memory_ = v;
    return *this;
  }
  DataLoaderOptions& drop_last(bool v) {
    drop_last_ = v;
    return *this;
  }
  // Seconds to wait for a batch from the workers before failing; 0 waits forever.
  DataLoaderOptions& timeout(double seconds) {
    timeout_ = seconds;
    return *this;
  }
  // Batches in flight per worker (needs num_workers > 0).
  DataLoaderOptions& prefetch_factor(int v) {
    prefetch_factor_ = v;
    return *this;
  }
  // Keep the worker threads between passes (needs num_workers > 0).
  DataLoaderOptions& persistent_workers(bool v) {
    persistent_workers_ = v;
    return *this;
  }
  // Base seed of shuffling and of random transforms; unset: drawn from the CPU default generator.
  DataLoaderOptions& seed(uint64_t v) {
    seed_ = v;
    return *this;
  }

  int64_t batch_size() const { return batch_size_; }
  bool shuffle() const { return shuffle_; }
  const SamplerPtr& sampler() const { return sampler_; }
  int num_workers() const { return num_workers_; }
  int workers() const { return num_workers_; }
  const Collate& collate() const { return collate_; }
  bool pin_memory() const { return pin_memory_; }
  bool drop_last() const { return drop_last_; }
  double timeout() const { return timeout_; }
  int prefetch_factor() const { return prefetch_factor_.value_or(2); }
  bool has_prefetch_factor() const { return prefetch_factor_.has_value(); }
  bool persistent_workers() const { return persistent_workers_; }
  const std::optional<uint64_t>& seed() const { return seed_; }

 private:
  int64_t batch_size_ = 1;
  bool shuffle_ = false;
  SamplerPtr sampler_;
  int num_workers_ = 0;
  Collate collate_;
  bool pin_memory_ = false;
  bool drop_last_ = false;
  double timeout_ = 0.0;
  std::optional<int> prefetch_factor_;
  bool persistent_workers_ = false;
  std::optional<uint64_t> seed_;
};

// Inside a worker thread (or a num_workers = 0 load): which worker, and the current batch's seed.
struct WorkerInfo {
  int id = 0;  // 0..num_workers-1; 0 when loading in the iterating thread
  int num_workers = 0;
  uint64_t seed = 0;  // seed of the batch being loaded (data::generator() starts from it)
};
// The calling thread's WorkerInfo while it loads a batch; nullopt elsewhere.
std::optional<WorkerInfo> get_worker_info();

namespace detail {
class LoaderState;
class EpochRun;
}  // namespace detail

class DataLoader {
 public:
  class Sentinel {};
  // One pass over the loader. Destroying it (leaving the loop early) stops the pass: the workers
  // finish the sample in hand and stop (or, persistent, wait for the next pass).
  class Iterator {
   public:
    explicit Iterator(std::shared_ptr<detail::EpochRun> run);
    Example& operator*() const;
    Example* operator->() const { return &**this; }
    Iterator& operator++();
    bool operator==(const Sentinel&) const;

   private:
    std::shared_ptr<detail::EpochRun> run_;
  };

  template <class D>
  requires(!std::is_same_v<std::decay_t<D>, DataLoader>) explicit DataLoader(
      D&& dataset, DataLoaderOptions options = {})
      : DataLoader(share_dataset(std::forward<D>(dataset)), std::move(options), 0) {}
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  ~DataLoader();

  // Starts a pass: the sampler's epoch advances by one from the previous pass unless it was set
  // since (set_epoch here, or on the sampler). With persistent workers a new pass ends the
  // previous one, whose iterator then throws.
  Iterator begin();
  Sentinel end() const { return {}; }
  // Batches per pass.
  int64_t size() const;
  // The epoch of the next pass.
  void set_epoch(int64_t epoch);
  const DataLoaderOptions& options() const { return options_; }
  const Dataset& dataset() const { return *dataset_; }
  Sampler& sampler() const { return *sampler_; }

 private:
  DataLoader(DatasetPtr dataset, DataLoaderOptions options, int);

  DatasetPtr dataset_;
  DataLoaderOptions options_;
  SamplerPtr sampler_;
  int64_t last_epoch_ = -1;  // epoch of the previous pass
  std::shared_ptr<detail::LoaderState> state_;
};

}  // namespace ember::data
