#include "ember/nn/modules/conv.h"

#include <cmath>
#include <ostream>

#include "ember/autograd.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

namespace F = functional;

namespace {

// PyTorch prints tuples as "(3, 3)" and one-element ones as "(3,)".
template <size_t N>
void print_tuple(std::ostream& out, const ExpandingArray<N>& a) {
  out << "(";
  for (size_t i = 0; i < N; ++i) out << (i ? ", " : "") << a[i];
  out << (N == 1 ? ",)" : ")");
}

// Pooling modules keep what the user gave; a repeated value reads as one number.
template <size_t N>
void print_compact(std::ostream& out, const ExpandingArray<N>& a) {
  bool same = true;
  for (size_t i = 1; i < N; ++i) same &= a[i] == a[0];
  if (same) {
    out << a[0];
  } else {
    print_tuple(out, a);
  }
}

template <size_t N>
bool all_equal(const ExpandingArray<N>& a, int64_t v) {
  for (size_t i = 0; i < N; ++i) {
    if (a[i] != v) return false;
  }
  return true;
}

void check_channels(const char* name, int64_t in, int64_t out, int64_t groups,
                    const std::string& padding_mode) {
  const std::string op = std::string("[") + name + "] ";
  if (groups <= 0) throw ValueError(op + "groups must be a positive integer");
  if (in < 0 || out < 0) throw ValueError(op + "in_channels and out_channels must be non-negative");
  if (in % groups != 0) throw ValueError(op + "in_channels must be divisible by groups");
  if (out % groups != 0) throw ValueError(op + "out_channels must be divisible by groups");
  if (padding_mode == "reflect" || padding_mode == "replicate" || padding_mode == "circular") {
    throw NotImplementedError(op + "padding_mode '" + padding_mode +
                              "' is not implemented; only 'zeros' is");
  }
  if (padding_mode != "zeros") {
    throw ValueError(op +
                     "padding_mode must be one of ['zeros', 'reflect', 'replicate', "
                     "'circular'], but got padding_mode='" +
                     padding_mode + "'");
  }
}

template <size_t D>
void check_padding(const char* name, const ConvPadding<D>& p, const ExpandingArray<D>& stride) {
  if (!p.is_mode()) return;
  const std::string op = std::string("[") + name + "] ";
  if (p.mode() != "same" && p.mode() != "valid") {
    throw ValueError(op + "Invalid padding string '" + p.mode() +
                     "', should be one of ['valid', 'same']");
  }
  if (p.mode() == "same" && !all_equal(stride, 1)) {
    throw ValueError(op + "padding='same' is not supported for strided convolutions");
  }
}

// kaiming_uniform_(a = sqrt(5)) on the weight, bias uniform on +-1/sqrt(fan_in).
void reset_conv(Tensor& weight, Tensor& bias) {
  NoGradGuard guard;
  if (weight.numel() == 0) return;
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    if (fan_in == 0) return;
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

// "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
template <size_t D, class Options>
void print_conv(std::ostream& out, const char* name, const Options& o, const ConvPadding<D>& pad,
                const ExpandingArray<D>* output_padding) {
  out << name << "(" << o.in_channels() << ", " << o.out_channels() << ", kernel_size=";
  print_tuple(out, o.kernel_size());
  out << ", stride=";
  print_tuple(out, o.stride());
  if (pad.is_mode()) {
    out << ", padding=" << pad.mode();
  } else if (!all_equal(pad.values(), 0)) {
    out << ", padding=";
    print_tuple(out, pad.values());
  }
  if (!all_equal(o.dilation(), 1)) {
    out << ", dilation=";
    print_tuple(out, o.dilation());
  }
  if (output_padding && !all_equal(*output_padding, 0)) {
    out << ", output_padding=";
    print_tuple(out, *output_padding);
  }
  if (o.groups() != 1) out << ", groups=" << o.groups();
  if (!o.bias()) out << ", bias=False";
  if (o.padding_mode() != "zeros") out << ", padding_mode=" << o.padding_mode();
  out << ")";
}

// The weight shape (out, in / groups, *kernel).
template <size_t D>
Shape conv_weight_shape(int64_t first, int64_t second, const ExpandingArray<D>& k) {
  Shape s{first, second};
  for (size_t i = 0; i < D; ++i) s.push_back(k[i]);
  return s;
}

}  // namespace

// ---- Conv1d / Conv2d ----------------------------------------------------------------------------

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const ConvOptions<D>& options)
    : Module(D == 1 ? "Conv1d" : "Conv2d"), options(options) {
  check_channels(name().c_str(), options.in_channels(), options.out_channels(), options.groups(),
                 options.padding_mode());
  check_padding(name().c_str(), options.padding(), options.stride());
  weight = register_parameter(
      "weight",
      empty(conv_weight_shape(options.out_channels(), options.in_channels() / options.groups(),
                              options.kernel_size())));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_channels()}));
  reset_parameters();
}

template <size_t D>
void ConvNdImpl<D>::reset_parameters() {
  reset_conv(weight, bias);
}

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& x) {
  // padding: the sizes, or the mode "same" / "valid".
  const auto conv = [&](const auto& padding) {
    if constexpr (D == 1) {
      return F::conv1d(x, weight, bias, options.stride(), padding, options.dilation(),
                       options.groups());
    } else {
      return F::conv2d(x, weight, bias, options.stride(), padding, options.dilation(),
                       options.groups());
    }
  };
  const ConvPadding<D>& p = options.padding();
  return p.is_mode() ? conv(p.mode()) : conv(p.values());
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& out) const {
  print_conv<D>(out, name().c_str(), options, options.padding(), nullptr);
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;

// ---- ConvTranspose2d ----------------------------------------------------------------------------

ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options)
    : Module("ConvTranspose2d"), options(options) {
  check_channels("ConvTranspose2d", options.in_channels(), options.out_channels(), options.groups(),
                 options.padding_mode());
  weight = register_parameter(
      "weight",
      empty(conv_weight_shape(options.in_channels(), options.out_channels() / options.groups(),
                              options.kernel_size())));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_channels()}));
  reset_parameters();
}

void ConvTranspose2dImpl::reset_parameters() { reset_conv(weight, bias); }

Tensor ConvTranspose2dImpl::forward(const Tensor& x) {
  return F::conv_transpose2d(x, weight, bias, options.stride(), options.padding(),
                             options.output_padding(), options.groups(), options.dilation());
}

void ConvTranspose2dImpl::pretty_print(std::ostream& out) const {
  print_conv<2>(out, "ConvTranspose2d", options, ConvPadding<2>(options.padding()),
                &options.output_padding());
}

// ---- pooling ------------------------------------------------------------------------------------

Tensor MaxPool2dImpl::forward(const Tensor& x) {
  return F::max_pool2d(x, options.kernel_size(), options.stride(), options.padding(),
                       options.dilation(), options.ceil_mode());
}

std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& x) {
  return F::max_pool2d_with_indices(x, options.kernel_size(), options.stride(), options.padding(),
                                    options.dilation(), options.ceil_mode());
}

// "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
void MaxPool2dImpl::pretty_print(std::ostream& out) const {
  out << "MaxPool2d(kernel_size=";
  print_compact(out, options.kernel_size());
  out << ", stride=";
  print_compact(out, options.stride());
  out << ", padding=";
  print_compact(out, options.padding());
  out << ", dilation=";
  print_compact(out, options.dilation());
  out << ", ceil_mode=" << (options.ceil_mode() ? "True" : "False") << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& x) {
  return F::avg_pool2d(x, options.kernel_size(), options.stride(), options.padding(),
                       options.ceil_mode(), options.count_include_pad(),
                       options.divisor_override());
}

// "AvgPool2d(kernel_size=2, stride=2, padding=0)"
void AvgPool2dImpl::pretty_print(std::ostream& out) const {
  out << "AvgPool2d(kernel_size=";
  print_compact(out, options.kernel_size());
  out << ", stride=";
  print_compact(out, options.stride());
  out << ", padding=";
  print_compact(out, options.padding());
  out << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& x) {
  return F::adaptive_avg_pool2d(x, options.output_size());
}

// "AdaptiveAvgPool2d(output_size=(1, 1))"
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& out) const {
  out << "AdaptiveAvgPool2d(output_size=";
  print_tuple(out, options.output_size());
  out << ")";
}

}  // namespace ember::nn
