// Samplers: the order in which a DataLoader visits a dataset's indices, one pass per epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace ember::data {

// Yields the indices of one pass. The epoch (set by the DataLoader before each pass, or by the
// caller) selects the shuffle, so a pass is reproducible from (seed, epoch). indices() is called
// from the thread that iterates the loader.
class Sampler {
 public:
  virtual ~Sampler() = default;
  // The indices of a pass over the current epoch.
  virtual std::vector<int64_t> indices() const = 0;
  // How many indices a pass yields.
  virtual int64_t size() const = 0;
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

 private:
  int64_t epoch_ = 0;
};

using SamplerPtr = std::shared_ptr<Sampler>;

// 0, 1, ..., n-1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A random permutation of 0..n-1 per epoch (or num_samples draws with replacement), from a
// Philox stream seeded by (seed, epoch). Without a seed, one is drawn from the CPU default
// generator, so manual_seed makes the run reproducible.
class RandomSampler : public Sampler {
 public:
  explicit RandomSampler(int64_t n);
  RandomSampler(int64_t n, uint64_t seed, bool replacement = false, int64_t num_samples = -1);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return num_samples_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t n_, num_samples_;
  uint64_t seed_;
  bool replacement_;
};

// A fixed list of indices, the same every epoch.
class IndexSampler : public Sampler {
 public:
  explicit IndexSampler(std::vector<int64_t> indices) : indices_(std::move(indices)) {}
  std::vector<int64_t> indices() const override { return indices_; }
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }

 private:
  std::vector<int64_t> indices_;
};

// Indices from a callable given the epoch; size() calls it for the current epoch.
class FunctionSampler : public Sampler {
 public:
  using Function = std::function<std::vector<int64_t>(int64_t epoch)>;
  explicit FunctionSampler(Function fn) : fn_(std::move(fn)) {}
  std::vector<int64_t> indices() const override { return fn_(epoch()); }
  int64_t size() const override { return static_cast<int64_t>(fn_(epoch()).size()); }

 private:
  Function fn_;
};

// The share of one rank in distributed training (PyTorch's DistributedSampler): every rank takes
// every num_replicas-th index of the same (seed + epoch)-shuffled order, starting at its rank.
// Without drop_last the order is padded by repeating its start so all ranks get
// ceil(n / num_replicas) indices; with drop_last the tail is dropped so they get
// floor(n / num_replicas). Call set_epoch each epoch (the DataLoader advances it by itself).
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  std::vector<int64_t> indices() const override;
  int64_t size() const override { return num_samples_; }
  int64_t num_replicas() const { return num_replicas_; }
  int64_t rank() const { return rank_; }

 private:
  int64_t dataset_size_, num_replicas_, rank_, num_samples_, total_size_;
  bool shuffle_, drop_last_;
  uint64_t seed_;
};

}  // namespace ember::data
