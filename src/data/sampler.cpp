// Sequential, random and distributed samplers.
#include "ember/data/sampler.h"

#include <limits>
#include <numeric>
#include <string>

#include "data/seed.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/random.h"

namespace ember::data {

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  if (n < 0) {
    throw ValueError("[SequentialSampler] size must be non-negative, got " + std::to_string(n));
  }
}

std::vector<int64_t> SequentialSampler::indices() const {
  std::vector<int64_t> v(static_cast<size_t>(n_));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

RandomSampler::RandomSampler(int64_t n)
    : RandomSampler(n, static_cast<uint64_t>(
                           randint(0, std::numeric_limits<int64_t>::max(), {1}).item<int64_t>())) {}

RandomSampler::RandomSampler(int64_t n, uint64_t seed, bool replacement, int64_t num_samples)
    : n_(n),
      num_samples_(num_samples < 0 ? n : num_samples),
      seed_(seed),
      replacement_(replacement) {
  if (n < 0) {
    throw ValueError("[RandomSampler] size must be non-negative, got " + std::to_string(n));
  }
  if (!replacement && num_samples >= 0 && num_samples != n) {
    throw ValueError("[RandomSampler] num_samples needs replacement=true (a permutation has " +
                     std::to_string(n) + " samples)");
  }
  if (replacement && n == 0 && num_samples_ > 0) {
    throw ValueError("[RandomSampler] cannot draw samples from an empty dataset");
  }
}

std::vector<int64_t> RandomSampler::indices() const {
  Generator g(Device(kCPU), detail::mix_seed(seed_, static_cast<uint64_t>(epoch())));
  if (replacement_) {
    if (num_samples_ == 0) return {};
    return randint(0, n_, {num_samples_}, g).to_vector<int64_t>();
  }
  return randperm(n_, g).to_vector<int64_t>();
}

DistributedSampler::DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      drop_last_(drop_last),
      seed_(seed) {
  if (num_replicas <= 0) {
    throw ValueError("[DistributedSampler] num_replicas must be positive, got " +
                     std::to_string(num_replicas));
  }
  if (rank < 0 || rank >= num_replicas) {
    throw ValueError("[DistributedSampler] invalid rank " + std::to_string(rank) +
                     ", rank should be in the interval [0, " + std::to_string(num_replicas - 1) +
                     "]");
  }
  if (dataset_size < 0) {
    throw ValueError("[DistributedSampler] dataset size must be non-negative, got " +
                     std::to_string(dataset_size));
  }
  // PyTorch: drop_last trims to a multiple of num_replicas, otherwise the order is padded up.
  if (drop_last && dataset_size % num_replicas != 0) {
    num_samples_ = dataset_size / num_replicas;
  } else {
    num_samples_ = (dataset_size + num_replicas - 1) / num_replicas;
  }
  total_size_ = num_samples_ * num_replicas;
}

std::vector<int64_t> DistributedSampler::indices() const {
  std::vector<int64_t> order;
  if (shuffle_) {
    // Every rank derives the same permutation from (seed, epoch).
    Generator g(Device(kCPU), seed_ + static_cast<uint64_t>(epoch()));
    order = randperm(dataset_size_, g).to_vector<int64_t>();
  } else {
    order.resize(static_cast<size_t>(dataset_size_));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  if (order.empty()) return {};
  // Pad by repeating the order from its start (several times if it is shorter than the padding).
  for (size_t i = 0; order.size() < static_cast<size_t>(total_size_); ++i) {
    const int64_t v = order[i];
    order.push_back(v);
  }
  order.resize(static_cast<size_t>(total_size_));
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples_));
  for (int64_t i = rank_; i < total_size_; i += num_replicas_) {
    mine.push_back(order[static_cast<size_t>(i)]);
  }
  return mine;
}

}  // namespace ember::data
