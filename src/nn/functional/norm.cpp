// Normalisation, dropout and embedding (nn::functional): the op layer's entry points
// (ops/nn_ops.h), which check the arguments, run the fused kernels and record the nodes.
#include "ember/nn/functional/norm.h"

#include "ops/nn_ops.h"

namespace ember::nn::functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  return ops::batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps);
}

Tensor layer_norm(const Tensor& input, std::vector<int64_t> normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  return ops::layer_norm(input, normalized_shape, weight, bias, eps);
}

Tensor rms_norm(const Tensor& input, std::vector<int64_t> normalized_shape, const Tensor& weight,
                std::optional<double> eps) {
  return ops::rms_norm(input, normalized_shape, weight, eps);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  return ops::group_norm(input, num_groups, weight, bias, eps);
}

Tensor dropout(const Tensor& input, double p, bool training) {
  return ops::dropout(input, p, training);
}

Tensor dropout2d(const Tensor& input, double p, bool training) {
  return ops::dropout2d(input, p, training);
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  return ops::embedding(input, weight, padding_idx);
}

}  // namespace ember::nn::functional
