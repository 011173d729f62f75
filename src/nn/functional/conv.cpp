// Convolution and pooling (nn::functional): the options turned into the arguments of the op
// layer's entry points (ops/nn_ops.h); the 1-d poolings run the 2-d ones over (N, C, 1, L).
#include "ember/nn/functional/conv.h"

#include <string>
#include <tuple>

#include "core/tensor_util.h"
#include "ops/nn_ops.h"

namespace ember::nn::functional {

// ---- convolution --------------------------------------------------------------------------------

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              ExpandingArray<2> stride, ExpandingArray<2> padding, ExpandingArray<2> dilation,
              int64_t groups) {
  return ops::convolution("conv2d", input, weight, bias, 2, stride.values().data(),
                          padding.values().data(), dilation.values().data(), groups);
}

Tensor detail::conv2d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                   ExpandingArray<2> stride, const std::string& padding,
                                   ExpandingArray<2> dilation, int64_t groups) {
  return ops::convolution("conv2d", input, weight, bias, 2, stride.values().data(), padding,
                          dilation.values().data(), groups);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias,
              ExpandingArray<1> stride, ExpandingArray<1> padding, ExpandingArray<1> dilation,
              int64_t groups) {
  return ops::convolution("conv1d", input, weight, bias, 1, stride.values().data(),
                          padding.values().data(), dilation.values().data(), groups);
}

Tensor detail::conv1d_padding_mode(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                   ExpandingArray<1> stride, const std::string& padding,
                                   ExpandingArray<1> dilation, int64_t groups) {
  return ops::convolution("conv1d", input, weight, bias, 1, stride.values().data(), padding,
                          dilation.values().data(), groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias,
                        ExpandingArray<2> stride, ExpandingArray<2> padding,
                        ExpandingArray<2> output_padding, int64_t groups,
                        ExpandingArray<2> dilation) {
  return ops::conv_transpose2d(input, weight, bias, stride.values(), padding.values(),
                               output_padding.values(), groups, dilation.values());
}

// ---- pooling ------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input,
                                                   ExpandingArray<2> kernel_size,
                                                   std::optional<ExpandingArray<2>> stride,
                                                   ExpandingArray<2> padding,
                                                   ExpandingArray<2> dilation, bool ceil_mode) {
  return ops::max_pool2d_with_indices(input, kernel_size.values(),
                                      stride.value_or(kernel_size).values(), padding.values(),
                                      dilation.values(), ceil_mode);
}

Tensor max_pool2d(const Tensor& input, ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride, ExpandingArray<2> padding,
                  ExpandingArray<2> dilation, bool ceil_mode) {
  return std::get<0>(
      max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor max_pool1d(const Tensor& input, ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride, ExpandingArray<1> padding,
                  ExpandingArray<1> dilation, bool ceil_mode) {
  if (!input.defined() || (input.dim() != 2 && input.dim() != 3)) {
    throw ValueError("[max_pool1d] Expected 2D or 3D (batch mode) tensor for input, but got: " +
                     (input.defined() ? shape_str(input) : std::string("undefined")));
  }
  const int64_t s = stride ? (*stride)[0] : kernel_size[0];
  return max_pool2d(input.unsqueeze(-2), {1, kernel_size[0]}, ExpandingArray<2>{1, s},
                    {0, padding[0]}, {1, dilation[0]}, ceil_mode)
      .squeeze(-2);
}

Tensor avg_pool2d(const Tensor& input, ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride, ExpandingArray<2> padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return ops::avg_pool2d(input, kernel_size.values(), stride.value_or(kernel_size).values(),
                         padding.values(), ceil_mode, count_include_pad, divisor_override);
}

Tensor avg_pool1d(const Tensor& input, ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride, ExpandingArray<1> padding,
                  bool ceil_mode, bool count_include_pad) {
  if (!input.defined() || (input.dim() != 2 && input.dim() != 3)) {
    throw ValueError("[avg_pool1d] Expected 2D or 3D (batch mode) tensor for input, but got: " +
                     (input.defined() ? shape_str(input) : std::string("undefined")));
  }
  const int64_t s = stride ? (*stride)[0] : kernel_size[0];
  return avg_pool2d(input.unsqueeze(-2), {1, kernel_size[0]}, ExpandingArray<2>{1, s},
                    {0, padding[0]}, ceil_mode, count_include_pad)
      .squeeze(-2);
}

Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray<2> output_size) {
  return ops::adaptive_avg_pool2d(input, output_size.values());
}

}  // namespace ember::nn::functional
