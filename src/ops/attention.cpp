// scaled_dot_product_attention: argument checks, then the backend's fused kernels
// (kernels/attention_ops.h) with one autograd node whose backward recomputes the probabilities
// from the saved log-sum-exp, or the math path (matmul, mask, softmax, dropout, matmul) composed
// of ops where the fused kernels do not apply. Entry points of ops/nn_ops.h.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "kernels/attention_ops.h"
#include "ops/autocast.h"
#include "ops/nn_ops.h"
#include "ops/op_utils.h"

namespace ember::ops {

namespace {

using autograd::GradContext;

constexpr const char* kOp = "scaled_dot_product_attention";
// The head dims (E and Ev) the CUDA kernels take; larger ones run the math path.
constexpr int64_t kCudaMaxHeadDim = 128;
constexpr int64_t kCudaMaxBatch = 65535;                     // grid.y of the CUDA kernels
constexpr double kCpuFusedScoreBytes = 256.0 * 1024 * 1024;  // float32 scores of one call

Shape batch_dims(const Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end() - 2); }

Shape with_tail(Shape s, int64_t a, int64_t b) {
  s.push_back(a);
  s.push_back(b);
  return s;
}

// The checked arguments: batch shape, sizes, scale and the mask in its compute form (bool, or
// query's dtype; undefined when none).
struct Prepared {
  Shape batch;
  int64_t l = 0, s = 0, e = 0, ev = 0;
  double scale = 1.0;
  Tensor mask;
};

Prepared prepare(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& attn_mask,
                 double dropout_p, bool is_causal, std::optional<double> scale) {
  if (!q.defined() || !k.defined() || !v.defined()) {
    throw ValueError(op_prefix(kOp) + "query, key and value must be defined tensors");
  }
  if (q.dim() < 2 || k.dim() < 2 || v.dim() < 2) {
    throw ValueError(op_prefix(kOp) + "expected query, key and value of at least 2 dims, got " +
                     shape_str(q) + ", " + shape_str(k) + " and " + shape_str(v));
  }
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype()) {
    throw TypeError(op_prefix(kOp) +
                    "Expected query, key, and value to have the same dtype, but got query.dtype: " +
                    std::string(dtype_name(q.dtype())) +
                    " key.dtype: " + std::string(dtype_name(k.dtype())) +
                    " and value.dtype: " + std::string(dtype_name(v.dtype())) + " instead.");
  }
  if (!is_floating_point(q.dtype())) {
    throw TypeError(op_prefix(kOp) + "expected floating point query, key and value, got dtype " +
                    std::string(dtype_name(q.dtype())));
  }
  if (attn_mask.defined()) {
    common_device(kOp, {&q, &k, &v, &attn_mask});
  } else {
    common_device(kOp, {&q, &k, &v});
  }
  if (q.size(-1) != k.size(-1) || k.size(-2) != v.size(-2)) {
    throw ValueError(
        op_prefix(kOp) + "query " + shape_str(q) + ", key " + shape_str(k) + " and value " +
        shape_str(v) +
        " must share the embedding dim (query, key) and the sequence dim (key, value)");
  }
  if (is_causal && attn_mask.defined()) {
    throw ValueError(op_prefix(kOp) + "Explicit attn_mask should not be set when is_causal=True");
  }
  if (!(dropout_p >= 0.0 && dropout_p <= 1.0)) {
    throw ValueError(op_prefix(kOp) + "dropout probability has to be between 0 and 1, but got " +
                     std::to_string(dropout_p));
  }
  if (scale && !std::isfinite(*scale)) {
    throw ValueError(op_prefix(kOp) + "scale must be finite, got " + std::to_string(*scale));
  }
  Prepared p;
  try {
    p.batch =
        broadcast_shapes(kOp, broadcast_shapes(kOp, batch_dims(q), batch_dims(k)), batch_dims(v));
  } catch (const ValueError&) {
    throw ValueError(op_prefix(kOp) + "the batch dims of query " + shape_str(q) + ", key " +
                     shape_str(k) + " and value " + shape_str(v) + " do not broadcast");
  }
  p.l = q.size(-2);
  p.s = k.size(-2);
  p.e = q.size(-1);
  p.ev = v.size(-1);
  p.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(p.e));
  if (attn_mask.defined()) {
    const Shape scores = with_tail(p.batch, p.l, p.s);
    bool ok = attn_mask.dim() <= static_cast<int64_t>(scores.size());
    for (int64_t d = 1; ok && d <= attn_mask.dim(); ++d) {
      const int64_t m = attn_mask.size(-d), t = scores[scores.size() - static_cast<size_t>(d)];
      ok = m == 1 || m == t;
    }
    if (!ok) {
      throw ValueError(op_prefix(kOp) + "attn_mask " + shape_str(attn_mask) +
                       " does not broadcast to the attention scores " + shape_str(scores));
    }
    if (attn_mask.dtype() == kBool) {
      p.mask = attn_mask;
    } else if (is_floating_point(attn_mask.dtype())) {
      p.mask = attn_mask.dtype() == q.dtype() ? attn_mask : attn_mask.to(q.dtype());
    } else {
      throw TypeError(op_prefix(kOp) + "attn_mask must be bool or floating, got dtype " +
                      std::string(dtype_name(attn_mask.dtype())));
    }
  }
  return p;
}

// q k^T * scale with the causal or explicit mask applied: (batch..., L, S).
Tensor masked_scores(const Tensor& q, const Tensor& k, const Tensor& mask, bool is_causal,
                     double scale) {
  Tensor scores = matmul(q * scale, k.transpose(-2, -1));
  const double ninf = -std::numeric_limits<double>::infinity();
  const int64_t l = q.size(-2), s = k.size(-2);
  if (is_causal) {
    Tensor keep = tril(ones({l, s}, TensorOptions().dtype(kBool).device(q.device())));
    scores = masked_fill(scores, logical_not(keep), ninf);
  } else if (mask.defined()) {
    scores = mask.dtype() == kBool ? masked_fill(scores, logical_not(mask), ninf) : scores + mask;
  }
  return scores;
}

// softmax over the last dim with rows whose every score is -inf giving 0 (not NaN), and no NaN
// in their gradient either.
Tensor safe_softmax(const Tensor& scores) {
  if (scores.numel() == 0) return ember::softmax(scores, -1);
  const Tensor dead = all(eq(scores, Scalar(-std::numeric_limits<double>::infinity())), -1, true);
  return masked_fill(ember::softmax(masked_fill(scores, dead, 0.0), -1), dead, 0.0);
}

// The stride that steps the flat batch index of t's first nbatch dims, when one does (a mask
// shared by the batch has stride 0); nullopt when those dims do not collapse.
std::optional<int64_t> flat_batch_stride(const Tensor& t, size_t nbatch) {
  std::optional<int64_t> stride;
  int64_t inner_size = 1;
  for (size_t d = nbatch; d-- > 0;) {
    const int64_t size = t.size(static_cast<int64_t>(d)), st = t.strides()[d];
    if (size == 1) continue;
    if (!stride) {
      stride = st;
    } else if (st != *stride * inner_size) {
      return std::nullopt;
    }
    inner_size *= size;
  }
  return stride.value_or(0);
}

// Whether the backend's fused kernels take these operands.
// Whether the fused kernels can run this call at all.
bool fused_supported(const Tensor& q, const Prepared& p, double dropout_p) {
  if (dropout_p > 0.0) return false;
  if (p.mask.defined() && autograd::requires_grad(p.mask)) return false;  // mask gradients: math
  if (q.device().is_cpu()) return true;
  if (q.device().type() != kCUDA) return false;
  int64_t batch = 1;
  for (int64_t d : p.batch) batch *= d;
  return p.e <= kCudaMaxHeadDim && p.ev <= kCudaMaxHeadDim && batch <= kCudaMaxBatch;
}

// Whether the op runs them by default. On CUDA always. On the CPU the math path's GEMMs are
// faster (docs/perf.md), so the fused kernels run only when the (..., L, S) scores the math path
// would hold reach kCpuFusedScoreBytes: there memory, not speed, decides.
bool fused_applies(const Tensor& q, const Prepared& p, double dropout_p) {
  if (!fused_supported(q, p, dropout_p)) return false;
  if (!q.device().is_cpu()) return true;
  double scores = static_cast<double>(p.l) * static_cast<double>(p.s) * 4.0;
  for (int64_t d : p.batch) scores *= static_cast<double>(d);
  return scores >= kCpuFusedScoreBytes;
}

// The fused path's backward with differentiable ops, for create_graph.
TensorList composite_backward(const Tensor& g, const Tensor& q, const Tensor& k, const Tensor& v,
                              const Tensor& mask, bool is_causal, double scale) {
  const Tensor pr = safe_softmax(masked_scores(q, k, mask, is_causal, scale));
  const Tensor dv = matmul(pr.transpose(-2, -1), g);
  const Tensor dp = matmul(g, v.transpose(-2, -1));
  const Tensor ds = pr * (dp - (dp * pr).sum({-1}, true));
  return {matmul(ds, k) * scale, matmul(ds.transpose(-2, -1), q) * scale, dv};
}

Tensor fused_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                       const Prepared& pp, bool is_causal) {
  const Device device = query.device();
  const TensorOptions o = TensorOptions(query.dtype()).device(device);
  const DType acc = query.dtype() == kFloat64 ? kFloat64 : kFloat32;
  AttentionParams p;
  p.l = pp.l;
  p.s = pp.s;
  p.e = pp.e;
  p.ev = pp.ev;
  p.scale = pp.scale;
  p.causal = is_causal;
  p.batch = 1;
  for (int64_t d : pp.batch) p.batch *= d;
  Tensor q, k, v, mask, out, lse;
  {
    NoGradGuard ng;
    q = query.expand(with_tail(pp.batch, pp.l, pp.e)).contiguous();
    k = key.expand(with_tail(pp.batch, pp.s, pp.e)).contiguous();
    v = value.expand(with_tail(pp.batch, pp.s, pp.ev)).contiguous();
    if (pp.mask.defined()) {
      // (B, L, S) with one stride per dim: a view where the batch dims collapse (a mask shared
      // by the batch has stride 0), else a copy.
      mask = pp.mask.expand(with_tail(pp.batch, pp.l, pp.s));
      std::optional<int64_t> sb = flat_batch_stride(mask, pp.batch.size());
      if (!sb) {
        mask = mask.contiguous();
        sb = flat_batch_stride(mask, pp.batch.size());
      }
      const Shape& ms = mask.strides();
      p.has_mask = true;
      p.mask_bool = mask.dtype() == kBool;
      p.mask_sb = *sb;
      p.mask_sl = ms[ms.size() - 2];
      p.mask_ss = ms[ms.size() - 1];
    }
    out = make_empty(with_tail(pp.batch, pp.l, pp.ev), o);
    lse = make_empty(Shape{p.batch, pp.l}, acc, device);
    backend(device).attention_forward(out, lse, q, k, v, mask, p);
  }
  if (!autograd::needs_grad({&query, &key, &value})) return out;
  const Shape qs = query.sizes(), ks = key.sizes(), vs = value.sizes();
  const char* node = device.is_cpu() ? "ScaledDotProductFlashAttentionForCpuBackward0"
                                     : "ScaledDotProductFlashAttentionBackward0";
  autograd::record(node, {query, key, value}, {out}, {q, k, v, out, lse, mask},
                   [p, qs, ks, vs](const TensorList& g, const GradContext& c) {
                     const Tensor &q = c.saved[0], &k = c.saved[1], &v = c.saved[2];
                     Tensor dout = g[0].dtype() == q.dtype() ? g[0] : g[0].to(q.dtype());
                     TensorList grads;
                     if (is_grad_enabled()) {
                       grads = composite_backward(dout, q, k, v, c.saved[5], p.causal, p.scale);
                     } else {
                       const TensorOptions o = TensorOptions(q.dtype()).device(q.device());
                       grads = {empty(q.sizes(), o), empty(k.sizes(), o), empty(v.sizes(), o)};
                       backend(q.device())
                           .attention_backward(grads[0], grads[1], grads[2], dout.contiguous(), q,
                                               k, v, c.saved[3], c.saved[4], c.saved[5], p);
                     }
                     return TensorList{c.needs(0) ? autograd::sum_to(grads[0], qs) : Tensor(),
                                       c.needs(1) ? autograd::sum_to(grads[1], ks) : Tensor(),
                                       c.needs(2) ? autograd::sum_to(grads[2], vs) : Tensor()};
                   });
  return out;
}

}  // namespace

Tensor scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                         const Tensor& value, const Tensor& attn_mask,
                                         double dropout_p, bool is_causal,
                                         std::optional<double> scale) {
  const Prepared p = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  Tensor attn = safe_softmax(masked_scores(query, key, p.mask, is_causal, p.scale));
  if (dropout_p > 0.0) attn = dropout(attn, dropout_p, true);
  return matmul(attn, value);
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
  if (autocast::active(autocast::Op::scaled_dot_product_attention, query)) {
    autocast::Scope s(autocast::Op::scaled_dot_product_attention, query,
                      {query, key, value, attn_mask});
    return scaled_dot_product_attention(s[0], s[1], s[2], s[3], dropout_p, is_causal, scale);
  }
  const Prepared p = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale);
  if (!fused_applies(query, p, dropout_p)) {
    return scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal,
                                             scale);
  }
  return fused_attention(query, key, value, p, is_causal);
}

Tensor scaled_dot_product_attention_fused(const Tensor& query, const Tensor& key,
                                          const Tensor& value, const Tensor& attn_mask,
                                          bool is_causal, std::optional<double> scale) {
  const Prepared p = prepare(query, key, value, attn_mask, 0.0, is_causal, scale);
  if (!fused_supported(query, p, 0.0)) {
    throw ValueError(op_prefix(kOp) + "the fused kernels cannot run this call (on " +
                     query.device().str() + ", head dims " + std::to_string(p.e) + " and " +
                     std::to_string(p.ev) + ", a mask that requires grad: " +
                     (p.mask.defined() && autograd::requires_grad(p.mask) ? "yes" : "no") +
                     "); use scaled_dot_product_attention, which falls back to the math path");
  }
  return fused_attention(query, key, value, p, is_causal);
}

}  // namespace ember::ops
