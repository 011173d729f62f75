// Losses (nn::functional) and their options, shared with the loss modules (libtorch's style:
// CrossEntropyFuncOptions is CrossEntropyLossOptions). reduction is "none", "mean" or "sum"
// ("batchmean" too for kl_div), with PyTorch's semantics:
//   F::cross_entropy(logits, target);
//   F::cross_entropy(logits, target, F::CrossEntropyFuncOptions().label_smoothing(0.1));
#pragma once

#include <string>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn {

struct CrossEntropyLossOptions {
  // Per-class weights (C), or undefined.
  EMBER_ARG(Tensor, weight);
  // Class-index targets equal to it add nothing, and count nothing in the mean.
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(std::string, reduction) = "mean";
  EMBER_ARG(double, label_smoothing) = 0.0;
};

struct NLLLossOptions {
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(std::string, reduction) = "mean";
};

struct MSELossOptions {
  EMBER_ARG(std::string, reduction) = "mean";
};

struct L1LossOptions {
  EMBER_ARG(std::string, reduction) = "mean";
};

struct SmoothL1LossOptions {
  EMBER_ARG(std::string, reduction) = "mean";
  // Below beta the loss is quadratic (0.5 d^2 / beta); beta 0 is the L1 loss.
  EMBER_ARG(double, beta) = 1.0;
};

struct HuberLossOptions {
  EMBER_ARG(std::string, reduction) = "mean";
  // Below delta the loss is 0.5 d^2, above it delta (d - 0.5 delta).
  EMBER_ARG(double, delta) = 1.0;
};

struct BCELossOptions {
  // Rescales each element's loss (broadcast to the input), or undefined.
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(std::string, reduction) = "mean";
};

struct BCEWithLogitsLossOptions {
  EMBER_ARG(Tensor, weight);
  EMBER_ARG(std::string, reduction) = "mean";
  // Weight of the positive examples, broadcast along the class dim (last), or undefined.
  EMBER_ARG(Tensor, pos_weight);
};

struct KLDivLossOptions {
  // "batchmean" divides the sum by the batch size (the mathematical KL divergence).
  EMBER_ARG(std::string, reduction) = "mean";
  // Whether target holds log-probabilities.
  EMBER_ARG(bool, log_target) = false;
};

namespace functional {

using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;

// input: logits (C), (N, C) or (N, C, d1, ...). target: class indices (), (N) or (N, d1, ...)
// (integer), or class probabilities of input's shape (floating). The log-softmax, the loss and
// their gradient run fused, one pass over each row.
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options = {});
// input: log-probabilities (C), (N, C) or (N, C, d1, ...); target: class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});
Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options = {});
Tensor huber_loss(const Tensor& input, const Tensor& target,
                  const HuberLossFuncOptions& options = {});
// input: probabilities in [0, 1]; the logs are clamped to >= -100, as PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
Tensor binary_cross_entropy_with_logits(
    const Tensor& input, const Tensor& target,
    const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
// input: log-probabilities; target: probabilities (or log-probabilities with log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});

}  // namespace functional
}  // namespace ember::nn
