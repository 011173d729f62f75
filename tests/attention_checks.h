// Checks of scaled_dot_product_attention shared by the CPU suite (test_attention.cpp) and the
// emulated CUDA one (sim/test_cuda_attention.cpp): the fused kernels against the math path run in
// float64 on the host, forward and gradients, in every floating dtype.
#pragma once

#include <cmath>
#include <string>

#include "ember/ember.h"
#include "ops/nn_ops.h"
#include "test_util.h"

namespace ember_test {

enum class MaskKind { None, Causal, Bool, Float };

struct AttentionCase {
  ember::Shape batch;  // leading dims of q, k and v
  int64_t l, s, e, ev;
  MaskKind mask = MaskKind::None;
};

// Allowed max |a - b| / (1 + |b|) for a result computed in dt.
inline double attention_tolerance(ember::DType dt) {
  switch (dt) {
    case ember::kBFloat16:
      return 3e-2;
    case ember::kFloat16:
      return 5e-3;
    case ember::kFloat32:
      return 1e-4;
    default:
      return 1e-10;
  }
}

inline double max_rel_error(const ember::Tensor& got, const ember::Tensor& want) {
  const ember::Tensor g = got.cpu().to(ember::kFloat64), w = want.cpu().to(ember::kFloat64);
  EXPECT_EQ(g.sizes(), w.sizes());
  const ember::Tensor err = (g - w).abs() / (w.abs() + 1.0);
  return err.numel() ? err.max().item<double>() : 0.0;
}

// Runs the fused kernels (or, with fused = false, the op with its own choice of path) on device
// in dtype dt and the math path in float64 on the host from the same (rounded) values; compares
// the outputs and the gradients of q, k and v.
inline void check_attention(const AttentionCase& c, ember::DType dt, const std::string& device,
                            bool fused = true) {
  using namespace ember;
  namespace F = nn::functional;
  auto shape = [&](int64_t a, int64_t b) {
    Shape s = c.batch;
    s.push_back(a);
    s.push_back(b);
    return s;
  };
  const Device dev(device);
  // Values rounded to dt first, so both sides see the same inputs.
  const Tensor q0 = randn(shape(c.l, c.e)).to(dt).to(kFloat64);
  const Tensor k0 = randn(shape(c.s, c.e)).to(dt).to(kFloat64);
  const Tensor v0 = randn(shape(c.s, c.ev)).to(dt).to(kFloat64);
  const Tensor g0 = randn(shape(c.l, c.ev)).to(dt).to(kFloat64);
  Tensor mask0;
  if (c.mask == MaskKind::Bool) {  // key padding per batch row: row b keeps its first s - b keys
    Tensor keep = rand({c.batch[0], 1, 1, c.s}) > 0.2;
    mask0 = keep;
  } else if (c.mask == MaskKind::Float) {
    mask0 = randn({c.l, c.s}).to(dt).to(kFloat64);
  }
  const bool causal = c.mask == MaskKind::Causal;

  Tensor q = q0.to(dt).to(dev).clone().requires_grad_(),
         k = k0.to(dt).to(dev).clone().requires_grad_(),
         v = v0.to(dt).to(dev).clone().requires_grad_();
  Tensor mask = mask0.defined() ? mask0.to(mask0.dtype() == kBool ? kBool : dt).to(dev) : mask0;
  Tensor out = fused ? ops::scaled_dot_product_attention_fused(q, k, v, mask, causal, std::nullopt)
                     : F::scaled_dot_product_attention(q, k, v, mask, 0.0, causal);
  out.backward(g0.to(dt).to(dev));

  Tensor qr = q0.clone().requires_grad_(), kr = k0.clone().requires_grad_(),
         vr = v0.clone().requires_grad_();
  Tensor ref = ops::scaled_dot_product_attention_math(qr, kr, vr, mask0, 0.0, causal, std::nullopt);
  ref.backward(g0);

  const double tol = attention_tolerance(dt);
  const std::string what = std::string(dtype_name(dt)) + " on " + device;
  EXPECT_EQ(out.dtype(), dt);
  EXPECT_EQ(out.device(), dev);
  EXPECT_EQ(k.grad().device(), dev);
  EXPECT_LE(max_rel_error(out, ref), tol) << "output, " << what;
  EXPECT_LE(max_rel_error(q.grad(), qr.grad()), tol) << "dq, " << what;
  EXPECT_LE(max_rel_error(k.grad(), kr.grad()), tol) << "dk, " << what;
  EXPECT_LE(max_rel_error(v.grad(), vr.grad()), tol) << "dv, " << what;
}

// Bad input names the op and the problem.
inline void check_attention_errors(const std::string& device) {
  using namespace ember;
  namespace F = nn::functional;
  const TensorOptions o = TensorOptions().device(Device(device));
  const Tensor q = randn({2, 3, 4}, o), k = randn({2, 5, 4}, o), v = randn({2, 5, 6}, o);
  const std::string op = "[scaled_dot_product_attention] ";
  expect_error<TypeError>([&] { F::scaled_dot_product_attention(q, k.to(kFloat64), v); },
                          op + "Expected query, key, and value to have the same dtype");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, randn({2, 5, 3}, o), v);
      },
      op + "query [2, 3, 4], key [2, 5, 3] and value [2, 5, 6] must share");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, k, randn({2, 4, 6}, o));
      },
      "must share the embedding dim");
  expect_error<ValueError>([&] { F::scaled_dot_product_attention(randn({4}, o), k, v); },
                           op + "expected query, key and value of at least 2 dims");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, randn({3, 5, 4}, o), randn({3, 5, 6}, o));
      },
      op + "the batch dims of query [2, 3, 4], key [3, 5, 4] and value [3, 5, 6] do not");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, k, v, ones({3, 4}, o.dtype(kBool)));
      },
      op + "attn_mask [3, 4] does not broadcast to the attention scores [2, 3, 5]");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, k, v, ones({3, 3, 5}, o));
      },
      "does not broadcast");
  expect_error<TypeError>(
      [&] {
        F::scaled_dot_product_attention(q, k, v, ones({3, 5}, o.dtype(kInt64)));
      },
      op + "attn_mask must be bool or floating");
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, k, v, ones({3, 5}, o), 0.0, true);
      },
      op + "Explicit attn_mask should not be set when is_causal=True");
  expect_error<TypeError>(
      [&] { F::scaled_dot_product_attention(q.to(kInt64), k.to(kInt64), v.to(kInt64)); },
      op + "expected floating point");
}

}  // namespace ember_test
