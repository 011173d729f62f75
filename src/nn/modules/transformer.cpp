#include "ember/nn/modules/transformer.h"

#include <cmath>
#include <limits>
#include <ostream>

#include "core/tensor_util.h"
#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/norm.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/modules/repr.h"

namespace ember::nn {

namespace F = functional;

void NonDynamicallyQuantizableLinearImpl::pretty_print(std::ostream& out) const {
  out << "NonDynamicallyQuantizable";
  LinearImpl::pretty_print(out);
}

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options)
    : Module("MultiheadAttention"), options(options) {
  const int64_t e = options.embed_dim(), h = options.num_heads();
  if (e <= 0 || h <= 0) {
    throw ValueError("[MultiheadAttention] embed_dim and num_heads must be positive, got " +
                     std::to_string(e) + " and " + std::to_string(h));
  }
  if (e % h != 0) {
    throw ValueError("[MultiheadAttention] embed_dim must be divisible by num_heads (embed_dim " +
                     std::to_string(e) + ", num_heads " + std::to_string(h) + ")");
  }
  if (options.dropout() < 0.0 || options.dropout() > 1.0) {
    throw ValueError("[MultiheadAttention] dropout must be in [0, 1], got " +
                     detail::py_float(options.dropout()));
  }
  head_dim = e / h;
  in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * e}));
  out_proj = register_module(
      "out_proj", NonDynamicallyQuantizableLinear(LinearOptions(e, e).bias(options.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& key_padding_mask,
    bool need_weights, const Tensor& attn_mask, bool average_attn_weights, bool is_causal) {
  const char* op = "MultiheadAttention";
  const int64_t e = options.embed_dim(), h = options.num_heads();
  if (!query.defined() || !key.defined() || !value.defined()) {
    throw ValueError(op_prefix(op) + "query, key and value must be defined tensors");
  }
  const bool batched = query.dim() == 3;
  if ((query.dim() != 3 && query.dim() != 2) || key.dim() != query.dim() ||
      value.dim() != query.dim()) {
    throw ValueError(op_prefix(op) + "expected query, key and value of 3 dims (batched) or 2 " +
                     "(unbatched), got " + shape_str(query) + ", " + shape_str(key) + " and " +
                     shape_str(value));
  }
  if (query.size(-1) != e || key.size(-1) != e || value.size(-1) != e) {
    throw ValueError(op_prefix(op) + "was expecting embedding dimension of " + std::to_string(e) +
                     ", but got query " + shape_str(query) + ", key " + shape_str(key) +
                     " and value " + shape_str(value));
  }
  // (N, L, E) views.
  auto to_nle = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(0);
    return options.batch_first() ? t : t.transpose(0, 1);
  };
  Tensor q = to_nle(query), k = to_nle(key), v = to_nle(value);
  const int64_t n = q.size(0), l = q.size(1), s = k.size(1);
  if (k.size(0) != n || v.size(0) != n || v.size(1) != s) {
    throw ValueError(op_prefix(op) + "query " + shape_str(query) + ", key " + shape_str(key) +
                     " and value " + shape_str(value) +
                     " must share the batch size, and key and value the sequence length");
  }
  auto slice = [&](const Tensor& t, int64_t i) {
    return t.defined() ? t.narrow(0, i * e, e) : Tensor();
  };
  // (N, L, E) -> (N, H, L, D)
  auto heads = [&](const Tensor& t) {
    return t.reshape({n, t.size(1), h, head_dim}).transpose(1, 2);
  };
  q = heads(linear(q, slice(in_proj_weight, 0), slice(in_proj_bias, 0)));
  k = heads(linear(k, slice(in_proj_weight, 1), slice(in_proj_bias, 1)));
  v = heads(linear(v, slice(in_proj_weight, 2), slice(in_proj_bias, 2)));

  // One additive mask broadcast to (N, H, L, S), or undefined.
  const double ninf = -std::numeric_limits<double>::infinity();
  const TensorOptions mopt = TensorOptions().dtype(q.dtype()).device(q.device());
  Tensor mask;
  auto add_mask = [&](const Tensor& m) { mask = mask.defined() ? mask + m : m; };
  if (attn_mask.defined()) {
    Tensor am = attn_mask;
    if (am.dim() == 3) {
      if (am.size(0) != n * h || am.size(1) != l || am.size(2) != s) {
        throw ValueError(op_prefix(op) + "The shape of the 3D attn_mask is " + shape_str(am) +
                         ", but should be [" + std::to_string(n * h) + ", " + std::to_string(l) +
                         ", " + std::to_string(s) + "].");
      }
      am = am.reshape({n, h, l, s});
    } else if (am.dim() != 2 || am.size(0) != l || am.size(1) != s) {
      throw ValueError(op_prefix(op) + "The shape of the 2D attn_mask is " + shape_str(am) +
                       ", but should be (" + std::to_string(l) + ", " + std::to_string(s) + ").");
    }
    add_mask(am.dtype() == kBool ? masked_fill(zeros(am.sizes(), mopt), am, ninf)
                                 : am.to(q.dtype()));
  } else if (is_causal) {
    Tensor future = triu(ones({l, s}, TensorOptions().dtype(kBool).device(q.device())), 1);
    add_mask(masked_fill(zeros({l, s}, mopt), future, ninf));
  }
  if (key_padding_mask.defined()) {
    const Shape want = batched ? Shape{n, s} : Shape{s};
    if (key_padding_mask.sizes() != want) {
      throw ValueError(op_prefix(op) + "expected key_padding_mask of shape " + shape_str(want) +
                       ", got " + shape_str(key_padding_mask));
    }
    Tensor kp = key_padding_mask.reshape({n, 1, 1, s});
    add_mask(kp.dtype() == kBool ? masked_fill(zeros(kp.sizes(), mopt), kp, ninf)
                                 : kp.to(q.dtype()));
  }

  const double p = is_training() ? options.dropout() : 0.0;
  Tensor out, weights;
  if (need_weights) {
    Tensor scores =
        matmul(q * (1.0 / std::sqrt(static_cast<double>(head_dim))), k.transpose(-2, -1));
    if (mask.defined()) scores = scores + mask;
    weights = softmax(scores, -1);
    if (p > 0.0) weights = F::dropout(weights, p, true);
    out = matmul(weights, v);
    if (average_attn_weights) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  } else {
    out = F::scaled_dot_product_attention(q, k, v, mask, p);
  }
  // (N, H, L, D) -> (N, L, E) -> the query's layout
  out = out_proj->forward(out.transpose(1, 2).reshape({n, l, e}));
  if (!batched)
    out = out.squeeze(0);
  else if (!options.batch_first())
    out = out.transpose(0, 1);
  return {out, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& out) const {
  out << "MultiheadAttention()";
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(
    const TransformerEncoderLayerOptions& options)
    : Module("TransformerEncoderLayer"), options(options) {
  const std::string& act = options.activation();
  if (act != "relu" && act != "gelu") {
    throw ValueError("[TransformerEncoderLayer] activation should be relu/gelu, not " + act);
  }
  const int64_t d = options.d_model(), ff = options.dim_feedforward();
  self_attn =
      register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(d, options.nhead())
                                                          .dropout(options.dropout())
                                                          .bias(options.bias())
                                                          .batch_first(options.batch_first())));
  linear1 = register_module("linear1", Linear(LinearOptions(d, ff).bias(options.bias())));
  dropout = register_module("dropout", Dropout(options.dropout()));
  linear2 = register_module("linear2", Linear(LinearOptions(ff, d).bias(options.bias())));
  auto norm = [&] {
    return LayerNorm(LayerNormOptions({d}).eps(options.layer_norm_eps()).bias(options.bias()));
  };
  norm1 = register_module("norm1", norm());
  norm2 = register_module("norm2", norm());
  dropout1 = register_module("dropout1", Dropout(options.dropout()));
  dropout2 = register_module("dropout2", Dropout(options.dropout()));
}

Tensor TransformerEncoderLayerImpl::activate(const Tensor& x) const {
  return options.activation() == "gelu" ? F::gelu(x) : F::relu(x);
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  auto sa = [&](const Tensor& x) {
    auto [out, w] =
        self_attn->forward(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal);
    return dropout1->forward(out);
  };
  auto ff = [&](const Tensor& x) {
    return dropout2->forward(linear2->forward(dropout->forward(activate(linear1->forward(x)))));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + sa(norm1->forward(x));
    x = x + ff(norm2->forward(x));
  } else {
    x = norm1->forward(x + sa(x));
    x = norm2->forward(x + ff(x));
  }
  return x;
}

void TransformerEncoderLayerImpl::pretty_print(std::ostream& out) const {
  out << "TransformerEncoderLayer()";
}

}  // namespace ember::nn
