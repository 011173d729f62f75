// nn modules: norm. BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm, Dropout, Dropout2d, Embedding.
#pragma once

#include <optional>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: implicit
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  // nullopt: a cumulative moving average (momentum 1 / num_batches_tracked).
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};

// Batch normalisation over (N, C, *): weight ones, bias zeros, running_mean zeros, running_var
// ones, num_batches_tracked 0 (int64), as PyTorch.
class BatchNormImplBase : public Module {
 public:
  BatchNormImplBase(const BatchNormOptions& options, std::string name);
  Tensor forward(const Tensor& input);
  void reset_running_stats();
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  BatchNormOptions options;
  Tensor weight;
  Tensor bias;
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;

 protected:
  virtual void check_input_dim(const Tensor& input) const = 0;
};

// Input (N, C) or (N, C, L).
class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm1dImpl(const BatchNormOptions& options)
      : BatchNormImplBase(options, "BatchNorm1d") {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm1d);

// Input (N, C, H, W).
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}
  explicit BatchNorm2dImpl(const BatchNormOptions& options)
      : BatchNormImplBase(options, "BatchNorm2d") {}

 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm2d);

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, elementwise_affine) = true;
  EMBER_ARG(bool, bias) = true;
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  Tensor forward(const Tensor& input);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  LayerNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(LayerNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}
  EMBER_ARG(int64_t, num_groups);
  EMBER_ARG(int64_t, num_channels);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, affine) = true;
};

class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels)
      : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  Tensor forward(const Tensor& input);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  GroupNormOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(GroupNorm);

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape)  // NOLINT: implicit
      : normalized_shape_(std::move(normalized_shape)) {}
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(std::optional<double>, eps);  // nullopt: the input dtype's epsilon
  EMBER_ARG(bool, elementwise_affine) = true;
};

class RMSNormImpl : public Module {
 public:
  explicit RMSNormImpl(const RMSNormOptions& options);
  Tensor forward(const Tensor& input);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  RMSNormOptions options;
  Tensor weight;
};
EMBER_MODULE(RMSNorm);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT: implicit
  EMBER_ARG(double, p);
  EMBER_ARG(bool, inplace) = false;
};

// Zeroes elements with probability p in training mode; the identity in evaluation mode.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  DropoutOptions options;
};
EMBER_MODULE(Dropout);

// Zeroes whole channels of (N, C, H, W) or (C, H, W) inputs.
class Dropout2dImpl : public Module {
 public:
  explicit Dropout2dImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& out) const override;

  DropoutOptions options;
};
EMBER_MODULE(Dropout2d);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<int64_t>, padding_idx);
};

// A lookup table: weight (num_embeddings, embedding_dim) ~ N(0, 1), the padding row zero.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  // indices (*) int64 or int32 -> (*, embedding_dim)
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  EmbeddingOptions options;
  Tensor weight;
};
EMBER_MODULE(Embedding);

}  // namespace ember::nn
