// Normalisation, dropout and embedding (nn::functional).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn::functional {

// input (N, C, *) normalised per channel. training: batch statistics are used, and running_mean
// / running_var (when defined) are updated in place with momentum and the unbiased variance;
// otherwise the running statistics are used.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = {}, const Tensor& bias = {}, bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// Normalises over the trailing dims given by normalized_shape; weight/bias have that shape.
Tensor layer_norm(const Tensor& input, std::vector<int64_t> normalized_shape,
                  const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// input (N, C, *) normalised over each group of C / num_groups channels; weight/bias (C).
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) * weight over the trailing dims; eps defaults to the dtype's epsilon.
Tensor rms_norm(const Tensor& input, std::vector<int64_t> normalized_shape,
                const Tensor& weight = {}, std::optional<double> eps = {});

// Zeroes each element with probability p and scales the rest by 1 / (1 - p) (training only).
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);
// Zeroes whole channels of (N, C, *) (or (C, *)) inputs with probability p.
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);

// Rows of weight (num_embeddings, dim) picked by input (int64 or int32); rows at padding_idx
// receive no gradient.
Tensor embedding(const Tensor& input, const Tensor& weight,
                 std::optional<int64_t> padding_idx = {});

}  // namespace ember::nn::functional
