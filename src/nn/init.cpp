#include "ember/nn/init.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::nn::init {

double calculate_gain(const std::string& nonlinearity, double param) {
  static const char* linear_fns[] = {"linear",           "conv1d",           "conv2d",
                                     "conv3d",           "conv_transpose1d", "conv_transpose2d",
                                     "conv_transpose3d", "sigmoid"};
  for (const char* f : linear_fns) {
    if (nonlinearity == f) return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param < 0 ? 0.01 : param;
    return std::sqrt(2.0 / (1 + slope * slope));
  }
  if (nonlinearity == "selu") return 3.0 / 4;
  throw ValueError("[init.calculate_gain] Unsupported nonlinearity " + nonlinearity);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  if (tensor.dim() < 2) {
    throw ValueError(
        "[init] Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  }
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

namespace {

int64_t fan(const Tensor& t, const std::string& mode) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  if (mode == "fan_in") return in;
  if (mode == "fan_out") return out;
  throw ValueError("[init] Mode " + mode + " not supported, please use one of fan_in, fan_out");
}

}  // namespace

Tensor& uniform_(Tensor& tensor, double a, double b) {
  NoGradGuard g;
  tensor.uniform_(a, b);
  return tensor;
}

Tensor& normal_(Tensor& tensor, double mean, double std) {
  NoGradGuard g;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor& constant_(Tensor& tensor, double value) {
  NoGradGuard g;
  tensor.fill_(value);
  return tensor;
}

Tensor& zeros_(Tensor& tensor) { return constant_(tensor, 0.0); }
Tensor& ones_(Tensor& tensor) { return constant_(tensor, 1.0); }

Tensor& kaiming_uniform_(Tensor& tensor, double a, const std::string& mode,
                         const std::string& nonlinearity) {
  const double gain = calculate_gain(nonlinearity, a);
  const double bound = std::sqrt(3.0) * gain / std::sqrt(static_cast<double>(fan(tensor, mode)));
  return uniform_(tensor, -bound, bound);
}

Tensor& kaiming_normal_(Tensor& tensor, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  const double gain = calculate_gain(nonlinearity, a);
  return normal_(tensor, 0.0, gain / std::sqrt(static_cast<double>(fan(tensor, mode))));
}

Tensor& xavier_uniform_(Tensor& tensor, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(tensor);
  const double bound = gain * std::sqrt(6.0 / static_cast<double>(in + out));
  return uniform_(tensor, -bound, bound);
}

Tensor& xavier_normal_(Tensor& tensor, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(tensor);
  return normal_(tensor, 0.0, gain * std::sqrt(2.0 / static_cast<double>(in + out)));
}

Tensor& trunc_normal_(Tensor& tensor, double mean, double std, double a, double b) {
  NoGradGuard g;
  auto cdf = [](double x) { return (1.0 + std::erf(x / std::sqrt(2.0))) / 2.0; };
  const double l = cdf((a - mean) / std), u = cdf((b - mean) / std);
  // Uniform on [2l-1, 2u-1], then the inverse CDF through erfinv: built from ops so it runs on
  // every device. erfinv(y) is computed as the root of erf(x) = y by Newton steps.
  Tensor y = empty_like(tensor, TensorOptions().dtype(kFloat64)).uniform_(2 * l - 1, 2 * u - 1);
  Tensor x = y.clamp(-0.999999, 0.999999);
  Tensor guess = zeros_like(x);
  for (int i = 0; i < 40; ++i) {
    Tensor f = guess.erf() - x;
    Tensor df = (guess.pow(2).neg()).exp() * (2.0 / std::sqrt(M_PI));
    guess = guess - f / df;
  }
  tensor.copy_((guess * (std * std::sqrt(2.0)) + mean).clamp(a, b));
  return tensor;
}

}  // namespace ember::nn::init
