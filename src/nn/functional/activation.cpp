// Activations composed of core ops, and scaled dot-product attention (an op-layer entry point).
#include "ember/nn/functional/activation.h"

#include "core/switches.h"
#include "core/tensor_util.h"
#include "ops/nn_ops.h"

namespace ember::nn::functional {

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  if (min_val > max_val) {
    throw ValueError("[hardtanh] min_val (" + std::to_string(min_val) +
                     ") cannot be greater than max_val (" + std::to_string(max_val) + ")");
  }
  return clamp(x, Scalar(min_val), Scalar(max_val));
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }

Tensor mish(const Tensor& x) {
  // One op in PyTorch, on no autocast list: its softplus must not switch it to float32.
  AutocastExcludeGuard no_autocast;
  return x * ember::tanh(ember::softplus(x));
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  return ops::scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                           scale);
}

}  // namespace ember::nn::functional
