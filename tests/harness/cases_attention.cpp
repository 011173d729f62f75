// Harness cases: scaled dot-product attention against a naive float64 loop over (batch, query,
// key): the fused kernels (what the op runs without dropout) and the math path (matmul, masks,
// softmax, matmul), on odd lengths, broadcast and padding masks, fully masked rows and head dims
// up to 128.
#include <cmath>

#include "ember/nn/functional/activation.h"
#include "harness/harness.h"
#include "ops/nn_ops.h"

namespace ember::harness {
namespace {

namespace F = nn::functional;

Tensor input(Shape s, DType dt, std::mt19937& rng, Fill fill = Fill::Normal) {
  return make_input({std::move(s), fill}, dt, rng);
}

// mask(b, i, j): +0 / -inf / additive value for batch b, query i, key j.
using MaskFn = std::function<double(int64_t, int64_t, int64_t)>;

// q (B, L, E), k (B, S, E), v (B, S, Ev) flattened over leading batch dims.
Ref attention_ref(const Ref& q, const Ref& k, const Ref& v, double scale, const MaskFn& mask) {
  const size_t nd = q.shape.size();
  const int64_t l = q.shape[nd - 2], e = q.shape[nd - 1], s = k.shape[nd - 2], ev = v.shape[nd - 1];
  const int64_t b = q.numel() / (l * e);
  Shape out_shape = q.shape;
  out_shape[nd - 1] = ev;
  std::vector<double> out;
  for (int64_t bi = 0; bi < b; ++bi) {
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> sc(static_cast<size_t>(s));
      double m = -INFINITY;
      for (int64_t j = 0; j < s; ++j) {
        double d = 0;
        for (int64_t x = 0; x < e; ++x) {
          d += q.data[static_cast<size_t>((bi * l + i) * e + x)] *
               k.data[static_cast<size_t>((bi * s + j) * e + x)];
        }
        sc[static_cast<size_t>(j)] = d * scale + (mask ? mask(bi, i, j) : 0.0);
        m = std::max(m, sc[static_cast<size_t>(j)]);
      }
      if (m == -INFINITY) {  // every key masked: 0, as PyTorch
        for (int64_t y = 0; y < ev; ++y) out.push_back(0.0);
        continue;
      }
      double z = 0;
      for (double& x : sc) z += (x = std::exp(x - m));
      for (int64_t y = 0; y < ev; ++y) {
        double acc = 0;
        for (int64_t j = 0; j < s; ++j) {
          acc +=
              sc[static_cast<size_t>(j)] / z * v.data[static_cast<size_t>((bi * s + j) * ev + y)];
        }
        out.push_back(acc);
      }
    }
  }
  return Ref(out_shape, out);
}

EMBER_HARNESS_CASES {
  register_case({"sdpa",
                 float_dtypes(),
                 {{{2, 3, 4}}, {{2, 5, 4}}, {{2, 5, 3}}},
                 [](const TensorList& in) {
                   return TensorList{F::scaled_dot_product_attention(in[0], in[1], in[2])};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{attention_ref(in[0], in[1], in[2], 0.5, {})};
                 }});
  register_gradcheck("sdpa");

  // Batch (1, 2) and an explicit scale.
  register_case({"sdpa_scale",
                 float_dtypes(),
                 {{{1, 2, 3, 4}}, {{1, 2, 3, 4}}, {{1, 2, 3, 2}}},
                 [](const TensorList& in) {
                   return TensorList{
                       F::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, false, 0.3)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{attention_ref(in[0], in[1], in[2], 0.3, {})};
                 }});
  register_gradcheck("sdpa_scale");

  // Query i attends to keys j <= i (top-left aligned when L != S, as PyTorch).
  for (auto [name, l, s] :
       {std::tuple{"sdpa_causal", 4, 4}, std::tuple{"sdpa_causal_rect", 3, 5}}) {
    const int64_t L = l, S = s;
    register_case({name,
                   float_dtypes(),
                   {{{2, L, 3}}, {{2, S, 3}}, {{2, S, 2}}},
                   [](const TensorList& in) {
                     return TensorList{
                         F::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true)};
                   },
                   [](const std::vector<Ref>& in, DType) {
                     return std::vector<Ref>{attention_ref(
                         in[0], in[1], in[2], 1 / std::sqrt(3.0),
                         [](int64_t, int64_t i, int64_t j) { return j <= i ? 0.0 : -INFINITY; })};
                   }});
    register_gradcheck(name);
  }

  // Boolean mask (L, S), true = may attend; every query keeps at least one key.
  register_case({"sdpa_bool_mask",
                 float_dtypes(),
                 {},
                 [](const TensorList& in) {
                   return TensorList{F::scaled_dot_product_attention(in[0], in[1], in[2], in[3])};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Ref m = in[3];
                   return std::vector<Ref>{
                       attention_ref(in[0], in[1], in[2], 0.5, [m](int64_t, int64_t i, int64_t j) {
                         return m.data[static_cast<size_t>(i * 5 + j)] != 0 ? 0.0 : -INFINITY;
                       })};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   std::vector<bool> keep(15);
                   std::bernoulli_distribution coin(0.6);
                   for (size_t i = 0; i < keep.size(); ++i) keep[i] = coin(rng) || i % 5 == i / 5;
                   std::vector<uint8_t> bytes(keep.begin(), keep.end());
                   Tensor mask = tensor(bytes, {3, 5}).to(kBool);
                   return TensorList{input({2, 3, 4}, dt, rng), input({2, 5, 4}, dt, rng),
                                     input({2, 5, 3}, dt, rng), mask};
                 }});
  register_gradcheck("sdpa_bool_mask", GradCheck{{0, 1, 2}});

  // Additive float mask broadcast over the batch.
  register_case({"sdpa_float_mask",
                 float_dtypes(),
                 {{{2, 3, 4}}, {{2, 5, 4}}, {{2, 5, 3}}, {{3, 5}}},
                 [](const TensorList& in) {
                   return TensorList{F::scaled_dot_product_attention(in[0], in[1], in[2], in[3])};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Ref m = in[3];
                   return std::vector<Ref>{
                       attention_ref(in[0], in[1], in[2], 0.5, [m](int64_t, int64_t i, int64_t j) {
                         return m.data[static_cast<size_t>(i * 5 + j)];
                       })};
                 }});
  register_gradcheck("sdpa_float_mask");

  // ---- the fused kernels and the math path side by side -------------------------------------
  // Both outputs against the float64 reference: q (2, 2, L, E), k (2, 2, S, E), v (2, 2, S, Ev)
  // with L != S, neither a multiple of a tile, head dims 8, 64 and 128.
  for (auto [name, l, s, e, ev, causal] :
       {std::tuple{"sdpa_fused_odd", 7, 9, 8, 5, false},
        std::tuple{"sdpa_fused_causal_odd", 9, 7, 8, 6, true},
        std::tuple{"sdpa_fused_head64", 33, 17, 64, 64, false},
        std::tuple{"sdpa_fused_head128_causal", 17, 33, 128, 128, true}}) {
    const int64_t L = l, S = s, E = e, EV = ev;
    const bool C = causal;
    register_case({name,
                   float_dtypes(),
                   {{{2, 2, L, E}}, {{2, 2, S, E}}, {{2, 2, S, EV}}},
                   [C](const TensorList& in) {
                     return TensorList{
                         ops::scaled_dot_product_attention_fused(in[0], in[1], in[2], {}, C, {}),
                         ops::scaled_dot_product_attention_math(in[0], in[1], in[2], {}, 0.0, C,
                                                                std::nullopt)};
                   },
                   [E, C](const std::vector<Ref>& in, DType) {
                     MaskFn causal_mask;
                     if (C) {
                       causal_mask = [](int64_t, int64_t i, int64_t j) {
                         return j <= i ? 0.0 : -INFINITY;
                       };
                     }
                     const Ref r = attention_ref(
                         in[0], in[1], in[2], 1 / std::sqrt(static_cast<double>(E)), causal_mask);
                     return std::vector<Ref>{r, r};
                   }});
  }
  register_gradcheck("sdpa_fused_odd", GradCheck{{}, {0}});
  register_gradcheck("sdpa_fused_causal_odd", GradCheck{{}, {0}});

  // Key padding: a bool mask (N, 1, 1, S) broadcast over heads and queries; batch 1 keeps only
  // its first 3 keys. And a float mask (N, 1, L, S) broadcast over the heads.
  constexpr int64_t kL = 5, kS = 11, kE = 6;
  register_case({"sdpa_fused_padding_mask",
                 float_dtypes(),
                 {},
                 [](const TensorList& in) {
                   return TensorList{ops::scaled_dot_product_attention_fused(in[0], in[1], in[2],
                                                                             in[3], false, {}),
                                     ops::scaled_dot_product_attention_math(
                                         in[0], in[1], in[2], in[3], 0.0, false, std::nullopt)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Ref m = in[3];
                   const Ref r = attention_ref(
                       in[0], in[1], in[2], 1 / std::sqrt(static_cast<double>(kE)),
                       [m](int64_t b, int64_t, int64_t j) {  // b = n * 2 + head
                         return m.data[static_cast<size_t>(b / 2 * kS + j)] != 0 ? 0.0 : -INFINITY;
                       });
                   return std::vector<Ref>{r, r};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   std::vector<uint8_t> keep(2 * kS);
                   for (int64_t j = 0; j < kS; ++j) {
                     keep[static_cast<size_t>(j)] = 1;
                     keep[static_cast<size_t>(kS + j)] = j < 3;
                   }
                   Tensor mask = tensor(keep, {2, 1, 1, kS}).to(kBool);
                   return TensorList{input({2, 2, kL, kE}, dt, rng), input({2, 2, kS, kE}, dt, rng),
                                     input({2, 2, kS, 4}, dt, rng), mask};
                 }});
  register_gradcheck("sdpa_fused_padding_mask", GradCheck{{0, 1, 2}, {0}});

  register_case(
      {"sdpa_fused_float_mask",
       float_dtypes(),
       {{{2, 2, kL, kE}}, {{2, 2, kS, kE}}, {{2, 2, kS, 3}}, {{2, 1, kL, kS}}},
       [](const TensorList& in) {
         return TensorList{
             ops::scaled_dot_product_attention_fused(in[0], in[1], in[2], in[3], false, 0.4),
             ops::scaled_dot_product_attention_math(in[0], in[1], in[2], in[3], 0.0, false, 0.4)};
       },
       [](const std::vector<Ref>& in, DType) {
         const Ref m = in[3];
         const Ref r =
             attention_ref(in[0], in[1], in[2], 0.4, [m](int64_t b, int64_t i, int64_t j) {
               return m.data[static_cast<size_t>((b / 2 * kL + i) * kS + j)];
             });
         return std::vector<Ref>{r, r};
       }});
  register_gradcheck("sdpa_fused_float_mask", GradCheck{{0, 1, 2}, {0}});

  // A fully masked query row gives 0 (and no NaN in the gradients), as PyTorch.
  register_case({"sdpa_fused_masked_row",
                 float_dtypes(),
                 {},
                 [](const TensorList& in) {
                   return TensorList{ops::scaled_dot_product_attention_fused(in[0], in[1], in[2],
                                                                             in[3], false, {}),
                                     ops::scaled_dot_product_attention_math(
                                         in[0], in[1], in[2], in[3], 0.0, false, std::nullopt)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Ref m = in[3];
                   const Ref r =
                       attention_ref(in[0], in[1], in[2], 0.5, [m](int64_t, int64_t i, int64_t j) {
                         return m.data[static_cast<size_t>(i * 5 + j)] != 0 ? 0.0 : -INFINITY;
                       });
                   return std::vector<Ref>{r, r};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   std::vector<uint8_t> keep(15, 1);
                   for (size_t j = 5; j < 10; ++j) keep[j] = 0;  // query 1 sees nothing
                   keep[2] = keep[13] = 0;
                   Tensor mask = tensor(keep, {3, 5}).to(kBool);
                   return TensorList{input({2, 3, 4}, dt, rng), input({2, 5, 4}, dt, rng),
                                     input({2, 5, 3}, dt, rng), mask};
                 }});
  register_gradcheck("sdpa_fused_masked_row", GradCheck{{0, 1, 2}});
}

}  // namespace
}  // namespace ember::harness
