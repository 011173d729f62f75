// Activations composed of core ops, and scaled dot-product attention.
#include "ember/nn/functional/activation.h"

#include <cmath>
#include <limits>

#include "core/switches.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/nn/functional/norm.h"
#include "ops/autocast.h"

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
  if (autocast::active(autocast::Op::scaled_dot_product_attention, query)) {
    autocast::Scope s(autocast::Op::scaled_dot_product_attention, query,
                      {query, key, value, attn_mask});
    return scaled_dot_product_attention(s[0], s[1], s[2], s[3], dropout_p, is_causal, scale);
  }
  const char* op = "scaled_dot_product_attention";
  if (!query.defined() || !key.defined() || !value.defined()) {
    throw ValueError(op_prefix(op) + "query, key and value must be defined tensors");
  }
  if (query.dim() < 2 || key.dim() < 2 || value.dim() < 2) {
    throw ValueError(op_prefix(op) + "expected query, key and value of at least 2 dims, got " +
                     shape_str(query) + ", " + shape_str(key) + " and " + shape_str(value));
  }
  if (query.size(-1) != key.size(-1) || key.size(-2) != value.size(-2)) {
    throw ValueError(
        op_prefix(op) + "query " + shape_str(query) + ", key " + shape_str(key) + " and value " +
        shape_str(value) +
        " must share the embedding dim (query, key) and the sequence dim (key, value)");
  }
  if (is_causal && attn_mask.defined()) {
    throw ValueError(op_prefix(op) + "Explicit attn_mask should not be set when is_causal=True");
  }
  if (dropout_p < 0.0 || dropout_p > 1.0) {
    throw ValueError(op_prefix(op) + "dropout probability has to be between 0 and 1, but got " +
                     std::to_string(dropout_p));
  }
  const int64_t l = query.size(-2), s = key.size(-2);
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  Tensor scores = matmul(query * sc, key.transpose(-2, -1));
  const double ninf = -std::numeric_limits<double>::infinity();
  if (is_causal) {
    Tensor keep = tril(ones({l, s}, TensorOptions().dtype(kBool).device(query.device())));
    scores = masked_fill(scores, logical_not(keep), ninf);
  } else if (attn_mask.defined()) {
    if (attn_mask.dtype() == kBool) {
      scores = masked_fill(scores, logical_not(attn_mask), ninf);
    } else {
      scores = scores + attn_mask;
    }
  }
  Tensor attn = ember::softmax(scores, -1);
  if (dropout_p > 0.0) attn = dropout(attn, dropout_p, true);
  return matmul(attn, value);
}

}  // namespace ember::nn::functional
