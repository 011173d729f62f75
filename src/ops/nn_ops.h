// The op layer's entry points behind nn::functional: convolution, pooling, the fused
// cross-entropy family, normalisation, dropout and embedding with a padding row. Each checks its
// arguments, allocates its outputs, runs the backend's kernels and records its autograd node;
// nn::functional turns its options into these arguments and never calls a backend itself.
// Errors and node names are PyTorch's, as the public functions document.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/tensor.h"

namespace ember::ops {

// ---- convolution (ops/conv.cpp) -----------------------------------------------------------------
// conv1d (dims = 1) and conv2d (dims = 2) under the name op: input (N, C, *) or (C, *), weight
// (O, C / groups, k...), bias (O) or undefined; stride, padding and dilation hold dims values.
Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                   int64_t dims, const int64_t* stride, const int64_t* padding,
                   const int64_t* dilation, int64_t groups);
// The same with padding "valid" or "same" (stride 1; the odd extra goes to the bottom/right).
Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                   int64_t dims, const int64_t* stride, const std::string& padding,
                   const int64_t* dilation, int64_t groups);
// The adjoint of conv2d: input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        std::array<int64_t, 2> stride, std::array<int64_t, 2> padding,
                        std::array<int64_t, 2> output_padding, int64_t groups,
                        std::array<int64_t, 2> dilation);

// ---- pooling (ops/pool.cpp): input (N, C, H, W) or (C, H, W)
// --------------------------------------
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                   std::array<int64_t, 2> kernel_size,
                                                   std::array<int64_t, 2> stride,
                                                   std::array<int64_t, 2> padding,
                                                   std::array<int64_t, 2> dilation, bool ceil_mode);
Tensor avg_pool2d(const Tensor& input, std::array<int64_t, 2> kernel_size,
                  std::array<int64_t, 2> stride, std::array<int64_t, 2> padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d(const Tensor& input, std::array<int64_t, 2> output_size);

// ---- losses (ops/loss.cpp) ----------------------------------------------------------------------
enum class Reduction { None, Mean, Sum, BatchMean };
// "none", "mean", "sum" (and "batchmean" where allowed) -> Reduction; raises naming op otherwise.
Reduction parse_reduction(const char* op, const std::string& reduction, bool batchmean = false);
// Both defined, input floating (the checks every loss starts with).
void check_loss_operands(const char* op, const Tensor& input, const Tensor& target);
// cross_entropy (from_logits) or nll_loss (log-probabilities) with class-index targets: input
// (N, C, *) or (C), target (N, *) or () of an integer dtype, weight (C) or undefined. Runs the
// backend's fused rows; first derivatives only.
Tensor class_index_loss(const char* op, bool from_logits, const Tensor& input, const Tensor& target,
                        const Tensor& weight, int64_t ignore_index, double label_smoothing,
                        Reduction reduction);

// ---- normalisation, dropout, embedding (ops/norm.cpp) -------------------------------------------
// The fused kernels of kernels/norm_ops.h with one node each; arguments as nn::functional's.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps);
Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight, const Tensor& bias, double eps);
// eps: the dtype's machine epsilon when not given (PyTorch's default).
Tensor rms_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                const Tensor& weight, std::optional<double> eps);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps);
// Zeroes each element with probability p (scaling the rest by 1 / (1 - p)) through the backend's
// fused kernel; returns input itself when not training or p == 0.
Tensor dropout(const Tensor& input, double p, bool training);
// One draw per channel of a (C, H, W) or (N, C, H, W) input, composed of ops.
Tensor dropout2d(const Tensor& input, double p, bool training);
// Rows of weight (V, D) picked by input (*); the padding_idx row gets no gradient.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx);

// ---- attention (ops/attention.cpp) --------------------------------------------------------------
// softmax(q k^T * scale + mask) v with nn::functional's arguments. Runs the backend's fused
// kernels when dropout_p == 0 (CUDA: head dims <= 128; CPU: only when the math path's scores
// would take 256 MiB or more, the GEMMs being faster below) and the math path otherwise.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale);
// The math path (matmul, mask, softmax, dropout, matmul) composed of ops: the reference.
Tensor scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                         const Tensor& value, const Tensor& attn_mask,
                                         double dropout_p, bool is_causal,
                                         std::optional<double> scale);
// The fused kernels whatever the size (no dropout); a ValueError where they cannot run.
Tensor scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key,
                                          const Tensor& value, const Tensor& attn_mask,
                                          bool is_causal, std::optional<double> scale);

}  // namespace ember::ops
