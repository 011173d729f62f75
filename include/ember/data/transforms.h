// Per-sample transforms for image tensors (C, H, W). Random ones draw from data::generator(),
// which the DataLoader seeds for every batch from (seed, epoch, batch index): a run with the same
// seed gives the same samples whatever the number of workers.
#pragma once

#include <functional>
#include <vector>

#include "ember/random.h"
#include "ember/tensor.h"

namespace ember::data {

using Transform = std::function<Tensor(const Tensor&)>;

// The generator random transforms use on this thread: the current batch's inside a DataLoader,
// the CPU default generator elsewhere.
Generator& generator();

// (x - mean[c]) / std[c] per channel of a (C, ...) float tensor; one value applies to every
// channel.
class Normalize {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor operator()(const Tensor& x) const;

 private:
  std::vector<double> mean_, std_;
};

// A random (height, width) window of the (C, H, W) input after zero-padding each side by `padding`.
class RandomCrop {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0) : RandomCrop(size, size, padding) {}
  RandomCrop(int64_t height, int64_t width, int64_t padding);
  Tensor operator()(const Tensor& x) const;

 private:
  int64_t height_, width_, padding_;
};

// Mirrors the last dim with probability p.
class RandomHorizontalFlip {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor operator()(const Tensor& x) const;

 private:
  double p_;
};

// Applies transforms in order.
class Compose {
 public:
  explicit Compose(std::vector<Transform> transforms) : transforms_(std::move(transforms)) {}
  Tensor operator()(const Tensor& x) const;

 private:
  std::vector<Transform> transforms_;
};

}  // namespace ember::data
