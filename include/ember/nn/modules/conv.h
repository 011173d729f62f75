// nn modules: conv.
// Conv1d, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, with libtorch's
// options.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

// A convolution's padding: D sizes (one repeated, or D) or the mode "same" / "valid".
template <size_t D>
class ConvPadding {
 public:
  ConvPadding(int64_t v) : values_(v) {}                               // NOLINT
  ConvPadding(std::initializer_list<int64_t> list) : values_(list) {}  // NOLINT
  ConvPadding(const ExpandingArray<D>& values) : values_(values) {}    // NOLINT
  template <class S, std::enable_if_t<std::is_convertible_v<const S&, std::string_view> &&
                                          !std::is_arithmetic_v<S>,
                                      int> = 0>
  ConvPadding(const S& mode) : values_(0), mode_(std::string(std::string_view(mode))) {}  // NOLINT

  bool is_mode() const { return mode_.has_value(); }
  const std::string& mode() const { return *mode_; }
  const ExpandingArray<D>& values() const { return values_; }

 private:
  ExpandingArray<D> values_;
  std::optional<std::string> mode_;
};

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ConvPadding<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  // Only "zeros" (PyTorch's default) is implemented.
  EMBER_ARG(std::string, padding_mode) = "zeros";
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

struct ConvTranspose2dOptions {
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride) = 1;
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, output_padding) = 0;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(std::string, padding_mode) = "zeros";
};

// Conv1d (D = 1) and Conv2d (D = 2). Weight (out, in / groups, *kernel) kaiming_uniform_(a =
// sqrt(5)), bias uniform on +-1/sqrt(fan_in), as PyTorch.
template <size_t D>
class ConvNdImpl : public Module {
 public:
  ConvNdImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvNdImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvNdImpl(const ConvOptions<D>& options);
  // (N, in, *spatial) or (in, *spatial) -> (N, out, *spatial_out): (N, out, L_out) for Conv1d,
  // (N, out, H_out, W_out) for Conv2d.
  Tensor forward(const Tensor& x);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  ConvOptions<D> options;
  Tensor weight;
  Tensor bias;
};
extern template class ConvNdImpl<1>;
extern template class ConvNdImpl<2>;

using Conv1dImpl = ConvNdImpl<1>;
EMBER_MODULE(Conv1d);
using Conv2dImpl = ConvNdImpl<2>;
EMBER_MODULE(Conv2d);

// Weight (in, out / groups, kH, kW).
class ConvTranspose2dImpl : public Module {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  Tensor forward(const Tensor& x);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  ConvTranspose2dOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(ConvTranspose2d);

// ---- pooling ----

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride);  // defaults to kernel_size
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("MaxPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

  MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(ExpandingArray<2> kernel_size)
      : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride);  // defaults to kernel_size
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(bool, ceil_mode) = false;
  EMBER_ARG(bool, count_include_pad) = true;
  EMBER_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

  AvgPool2dOptions options;
};
EMBER_MODULE(AvgPool2d);

struct AdaptiveAvgPool2dOptions {
  AdaptiveAvgPool2dOptions(ExpandingArray<2> output_size) : output_size_(output_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<2>, output_size);
};

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options)
      : Module("AdaptiveAvgPool2d"), options(options) {}
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

  AdaptiveAvgPool2dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool2d);

}  // namespace ember::nn
