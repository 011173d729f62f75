// Convolution and pooling (nn::functional): conv1d, conv2d, conv_transpose2d, max_pool2d,
// avg_pool2d, adaptive_avg_pool2d. Inputs are batched (N, C, *) or unbatched (C, *), floating
// dtypes, as in PyTorch.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "ember/nn/options.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

namespace detail {
Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           ExpandingArray<1> stride, const std::string& padding,
                           ExpandingArray<1> dilation, int64_t groups);
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                           ExpandingArray<2> stride, const std::string& padding,
                           ExpandingArray<2> dilation, int64_t groups);
}  // namespace detail

// input (N, C_in, L), weight (C_out, C_in / groups, k), bias (C_out) -> (N, C_out, L_out).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              ExpandingArray<1> stride = 1, ExpandingArray<1> padding = 0,
              ExpandingArray<1> dilation = 1, int64_t groups = 1);
// padding "valid" (none) or "same" (output as long as the input; stride 1 only). A template
// over string-like types, so that a braced padding such as {1, 2} is never read as a string.
template <class S, std::enable_if_t<std::is_convertible_v<const S&, std::string>, int> = 0>
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              ExpandingArray<1> stride, const S& padding, ExpandingArray<1> dilation = 1,
              int64_t groups = 1) {
  return detail::conv1d_padding_mode(input, weight, bias, stride, std::string(padding), dilation,
                                     groups);
}

// input (N, C_in, H, W), weight (C_out, C_in / groups, kH, kW), bias (C_out).
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
              ExpandingArray<2> stride = 1, ExpandingArray<2> padding = 0,
              ExpandingArray<2> dilation = 1, int64_t groups = 1);
// padding "valid" or "same"; the odd extra of "same" goes to the bottom/right, as PyTorch.
template <class S, std::enable_if_t<std::is_convertible_v<const S&, std::string>, int> = 0>
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              ExpandingArray<2> stride, const S& padding, ExpandingArray<2> dilation = 1,
              int64_t groups = 1) {
  return detail::conv2d_padding_mode(input, weight, bias, stride, std::string(padding), dilation,
                                     groups);
}

// The adjoint of conv2d: input (N, C_in, H, W), weight (C_in, C_out / groups, kH, kW).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {},
                        ExpandingArray<2> stride = 1, ExpandingArray<2> padding = 0,
                        ExpandingArray<2> output_padding = 0, int64_t groups = 1,
                        ExpandingArray<2> dilation = 1);

// stride: defaults to kernel_size. Indices are h * W + w within each (H, W) plane (int64).
Tensor max_pool2d(const Tensor& input, ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride = std::nullopt,
                  ExpandingArray<2> padding = 0, ExpandingArray<2> dilation = 1,
                  bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& input, ExpandingArray<2> kernel_size,
    std::optional<ExpandingArray<2>> stride = std::nullopt, ExpandingArray<2> padding = 0,
    ExpandingArray<2> dilation = 1, bool ceil_mode = false);
// (N, C, L) through the 2-d kernels.
Tensor max_pool1d(const Tensor& input, ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride = std::nullopt,
                  ExpandingArray<1> padding = 0, ExpandingArray<1> dilation = 1,
                  bool ceil_mode = false);

Tensor avg_pool2d(const Tensor& input, ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride = std::nullopt,
                  ExpandingArray<2> padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true, std::optional<int64_t> divisor_override = {});
Tensor avg_pool1d(const Tensor& input, ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride = std::nullopt,
                  ExpandingArray<1> padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true);

// Output (N, C, oH, oW): window i spans [floor(i * H / oH), ceil((i + 1) * H / oH)).
Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray<2> output_size);

}  // namespace ember::nn::functional
