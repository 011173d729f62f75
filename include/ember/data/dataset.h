// Map-style datasets (random access by index), their combinators and random_split.
#pragma once

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "ember/random.h"
#include "ember/tensor.h"

namespace ember::data {

// One sample, or (after collation) one batch: data and target (target may be undefined).
struct Example {
  Tensor data;
  Tensor target;
};

// A dataset with random access. get() is called from the DataLoader's worker threads at the same
// time, so it must be safe to call concurrently (read-only state, or its own locking).
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Sample `index` in [0, size()).
  virtual Example get(int64_t index) const = 0;
};

using DatasetPtr = std::shared_ptr<const Dataset>;

// A shared handle to a dataset: a DatasetPtr passes through, a dataset object is moved into one.
template <class D>
DatasetPtr share_dataset(D&& dataset) {
  using T = std::decay_t<D>;
  if constexpr (std::is_convertible_v<T, DatasetPtr>) {
    return DatasetPtr(std::forward<D>(dataset));
  } else {
    static_assert(std::is_base_of_v<Dataset, T>, "expected a data::Dataset or a pointer to one");
    return std::make_shared<T>(std::forward<D>(dataset));
  }
}

// Tensors sharing dim 0: sample i is (data[i], target[i]); target may be undefined.
class TensorDataset : public Dataset {
 public:
  explicit TensorDataset(Tensor data, Tensor target = {});
  int64_t size() const override { return data_.size(0); }
  Example get(int64_t index) const override;
  const Tensor& data() const { return data_; }
  const Tensor& target() const { return target_; }

 private:
  Tensor data_, target_;
};

// The samples of `dataset` at `indices`, in that order.
class Subset : public Dataset {
 public:
  Subset(DatasetPtr dataset, std::vector<int64_t> indices);
  template <class D>
  Subset(D&& dataset, std::vector<int64_t> indices)
      : Subset(share_dataset(std::forward<D>(dataset)), std::move(indices)) {}
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  Example get(int64_t index) const override;
  const std::vector<int64_t>& indices() const { return indices_; }
  const DatasetPtr& dataset() const { return dataset_; }

 private:
  DatasetPtr dataset_;
  std::vector<int64_t> indices_;
};

// Several datasets one after the other.
class ConcatDataset : public Dataset {
 public:
  explicit ConcatDataset(std::vector<DatasetPtr> datasets);
  int64_t size() const override { return offsets_.empty() ? 0 : offsets_.back(); }
  Example get(int64_t index) const override;

 private:
  std::vector<DatasetPtr> datasets_;
  std::vector<int64_t> offsets_;  // cumulative sizes
};

// Splits a dataset into non-overlapping random subsets (PyTorch's semantics). `lengths` are
// either sample counts summing to the dataset's size, or fractions summing to 1: each subset then
// gets floor(n * fraction) samples and the remainder is handed out one by one, round-robin, from
// the first subset on. The permutation comes from `generator` (default: the CPU default one).
std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths,
                                 Generator& generator);
std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths);
std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths,
                                 uint64_t seed);
// The same for a dataset object (moved into a shared handle).
template <class D, class... Args>
requires std::is_base_of_v<Dataset, std::decay_t<D>> std::vector<Subset> random_split(
    D&& dataset, const std::vector<double>& lengths, Args&&... args) {
  return random_split(share_dataset(std::forward<D>(dataset)), lengths,
                      std::forward<Args>(args)...);
}

}  // namespace ember::data
