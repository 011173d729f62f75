// TensorDataset, Subset, ConcatDataset and random_split.
#include "ember/data/dataset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data {

namespace {
void check_index(const char* what, int64_t index, int64_t size) {
  if (index < 0 || index >= size) {
    throw IndexError(std::string("[") + what + "] index " + std::to_string(index) +
                     " is out of range for a dataset of size " + std::to_string(size));
  }
}
}  // namespace

TensorDataset::TensorDataset(Tensor data, Tensor target)
    : data_(std::move(data)), target_(std::move(target)) {
  if (!data_.defined() || data_.dim() == 0) {
    throw ValueError("[TensorDataset] data must be a tensor with at least one dim");
  }
  if (target_.defined() && (target_.dim() == 0 || target_.size(0) != data_.size(0))) {
    throw ValueError("[TensorDataset] size mismatch between tensors: data has " +
                     std::to_string(data_.size(0)) + " samples, target " +
                     (target_.dim() == 0 ? std::string("is a scalar")
                                         : "has " + std::to_string(target_.size(0))));
  }
}

Example TensorDataset::get(int64_t index) const {
  check_index("TensorDataset", index, size());
  return {data_.select(0, index), target_.defined() ? target_.select(0, index) : Tensor()};
}

Subset::Subset(DatasetPtr dataset, std::vector<int64_t> indices)
    : dataset_(std::move(dataset)), indices_(std::move(indices)) {
  if (!dataset_) throw ValueError("[Subset] dataset is null");
  const int64_t n = dataset_->size();
  for (int64_t i : indices_) check_index("Subset", i, n);
}

Example Subset::get(int64_t index) const {
  check_index("Subset", index, size());
  return dataset_->get(indices_[static_cast<size_t>(index)]);
}

ConcatDataset::ConcatDataset(std::vector<DatasetPtr> datasets) : datasets_(std::move(datasets)) {
  int64_t total = 0;
  for (const auto& d : datasets_) {
    if (!d) throw ValueError("[ConcatDataset] dataset is null");
    total += d->size();
    offsets_.push_back(total);
  }
}

Example ConcatDataset::get(int64_t index) const {
  check_index("ConcatDataset", index, size());
  const size_t k = static_cast<size_t>(std::upper_bound(offsets_.begin(), offsets_.end(), index) -
                                       offsets_.begin());
  const int64_t start = k == 0 ? 0 : offsets_[k - 1];
  return datasets_[k]->get(index - start);
}

std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths,
                                 Generator& generator) {
  if (!dataset) throw ValueError("[random_split] dataset is null");
  const int64_t n = dataset->size();
  const double total = std::accumulate(lengths.begin(), lengths.end(), 0.0);
  std::vector<int64_t> counts;
  if (std::abs(total - 1.0) <= 1e-9 && total <= 1.0 + 1e-12) {
    // Fractions: floor each share, then hand the remainder out round-robin.
    int64_t assigned = 0;
    for (double f : lengths) {
      if (f < 0.0 || f > 1.0) {
        throw ValueError("[random_split] fraction " + std::to_string(f) +
                         " is not between 0 and 1");
      }
      counts.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * f)));
      assigned += counts.back();
    }
    for (int64_t i = 0; i < n - assigned; ++i) {
      ++counts[static_cast<size_t>(i) % counts.size()];
    }
  } else {
    for (double l : lengths) {
      if (l < 0.0 || l != std::floor(l)) {
        throw ValueError(
            "[random_split] lengths must be non-negative integers or fractions "
            "summing to 1, got " +
            std::to_string(l));
      }
      counts.push_back(static_cast<int64_t>(l));
    }
  }
  const int64_t sum = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (sum != n) {
    throw ValueError("[random_split] sum of input lengths (" + std::to_string(sum) +
                     ") does not equal the length of the input dataset (" + std::to_string(n) +
                     ")");
  }
  const std::vector<int64_t> perm = randperm(n, generator).to_vector<int64_t>();
  std::vector<Subset> out;
  int64_t start = 0;
  for (int64_t c : counts) {
    out.emplace_back(dataset, std::vector<int64_t>(perm.begin() + start, perm.begin() + start + c));
    start += c;
  }
  return out;
}

std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths) {
  Generator g = default_generator(Device(kCPU));
  return random_split(dataset, lengths, g);
}

std::vector<Subset> random_split(const DatasetPtr& dataset, const std::vector<double>& lengths,
                                 uint64_t seed) {
  Generator g(Device(kCPU), seed);
  return random_split(dataset, lengths, g);
}

}  // namespace ember::data
