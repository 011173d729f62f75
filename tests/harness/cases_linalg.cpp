// Harness cases: mm, bmm, matmul (batched, broadcast, vector forms), addmm, linear, dot, outer,
// against a naive float64 matrix product written from the numpy definition.
#include "harness/harness.h"

namespace ember::harness {
namespace {

// Integer results wrap to the dtype's width, as integer matmul does.
double wrap(double v, DType t) {
  switch (t) {
    case kUInt8:
      return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case kInt8:
      return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case kInt32:
      return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    default:
      return v;
  }
}

Ref wrapped(Ref r, DType t) {
  for (double& v : r.data) v = wrap(v, t);
  return r;
}

// numpy matmul: a 1-D left operand is a row, a 1-D right operand a column (both removed from
// the result); leading dims broadcast.
Ref ref_matmul(const Ref& a, const Ref& b) {
  const bool va = a.shape.size() == 1, vb = b.shape.size() == 1;
  const Ref a2(va ? Shape{1, a.shape[0]} : a.shape, a.data);
  const Ref b2(vb ? Shape{b.shape[0], 1} : b.shape, b.data);
  const size_t ra = a2.shape.size(), rb = b2.shape.size();
  const int64_t n = a2.shape[ra - 2], k = a2.shape[ra - 1], m = b2.shape[rb - 1];
  const Shape batch = broadcast_shapes(Shape(a2.shape.begin(), a2.shape.end() - 2),
                                       Shape(b2.shape.begin(), b2.shape.end() - 2));
  Shape full = batch;
  full.push_back(n);
  full.push_back(m);
  Ref out(full, {});
  for_each_index(full, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> ia(idx.begin(), idx.end() - 2), ib = ia;
    const int64_t i = idx[idx.size() - 2], j = idx.back();
    ia.push_back(i);
    ia.push_back(0);
    ib.push_back(0);
    ib.push_back(j);
    double s = 0;
    for (int64_t p = 0; p < k; ++p) {
      ia.back() = p;
      ib[ib.size() - 2] = p;
      s += a2.at(ia) * b2.at(ib);
    }
    out.data.push_back(s);
  });
  Shape shape = batch;
  if (!va) shape.push_back(n);
  if (!vb) shape.push_back(m);
  out.shape = shape;
  return out;
}

// The transpose of a 2-D reference.
Ref ref_t(const Ref& w) {
  const int64_t r = w.shape[0], c = w.shape[1];
  Ref out(Shape{c, r}, std::vector<double>(static_cast<size_t>(r * c)));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) out.data[j * r + i] = w.data[i * c + j];
  return out;
}

using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;

void product_case(const std::string& name, std::vector<DType> dtypes, Shape sa, Shape sb, Fn2 fn) {
  register_case({name,
                 std::move(dtypes),
                 {{sa}, {sb}},
                 [fn](const TensorList& in) { return TensorList{fn(in[0], in[1])}; },
                 [](const std::vector<Ref>& in, DType dt) {
                   return std::vector<Ref>{wrapped(ref_matmul(in[0], in[1]), dt)};
                 }});
}

EMBER_HARNESS_CASES {
  const auto numeric = numeric_dtypes();

  product_case("mm", numeric, {5, 7}, {7, 4},
               [](const Tensor& a, const Tensor& b) { return mm(a, b); });
  product_case("bmm", numeric, {3, 4, 5}, {3, 5, 2},
               [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
  product_case("matmul", numeric, {2, 1, 3, 4}, {5, 4, 6},
               [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  product_case("matmul_fold", numeric, {2, 3, 6}, {6, 5},
               [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  product_case("dot", numeric, {9}, {9},
               [](const Tensor& a, const Tensor& b) { return dot(a, b); });

  // Vector forms: (2, 3, 4) @ (4) and (4) @ (2, 4, 3).
  register_case({"matmul_vector",
                 numeric,
                 {{{2, 3, 4}}, {{4}}, {{2, 4, 3}}},
                 [](const TensorList& in) {
                   return TensorList{matmul(in[0], in[1]), matmul(in[1], in[2])};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   return std::vector<Ref>{wrapped(ref_matmul(in[0], in[1]), dt),
                                           wrapped(ref_matmul(in[1], in[2]), dt)};
                 }});

  // beta * input (broadcast row) + alpha * (a @ b); integer dtypes take integer scalars.
  register_case({"addmm",
                 numeric,
                 {{{4}}, {{3, 5}}, {{5, 4}}},
                 [](const TensorList& in) {
                   const bool fp = is_floating_point(in[0].dtype());
                   return TensorList{addmm(in[0], in[1], in[2], fp ? Scalar(0.5) : Scalar(2),
                                           fp ? Scalar(-1.5) : Scalar(-3))};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   const bool fp = is_floating_point(dt);
                   const double beta = fp ? 0.5 : 2, alpha = fp ? -1.5 : -3;
                   Ref p = ref_matmul(in[1], in[2]);
                   Ref out = ref_binary(in[0], p,
                                        [=](double x, double y) { return beta * x + alpha * y; });
                   return std::vector<Ref>{wrapped(out, dt)};
                 }});

  // x (2, 3, 5) @ weight (4, 5)^T + bias (4), and the same without bias.
  register_case({"linear",
                 numeric,
                 {{{2, 3, 5}}, {{4, 5}}, {{4}}},
                 [](const TensorList& in) {
                   return TensorList{linear(in[0], in[1], in[2]), linear(in[0], in[1])};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   Ref p = ref_matmul(in[0], ref_t(in[1]));
                   Ref with_bias = ref_binary(p, in[2], [](double x, double y) { return x + y; });
                   return std::vector<Ref>{wrapped(with_bias, dt), wrapped(p, dt)};
                 }});

  // A bias over the output features is fused into the CUDA product (cuBLASLt's bias epilogue):
  // a square product (rows == features) tells a bias added along the wrong axis from the right
  // one, rows != features makes it read past the vector; the second output has no bias at all.
  for (const auto& [name, x_shape, w_shape] :
       {std::tuple<const char*, Shape, Shape>{"linear_square", {6, 3}, {6, 3}},
        {"linear_rows", {1, 13}, {8, 13}},
        {"linear_one_feature", {5, 4}, {1, 4}}}) {
    register_case({name,
                   numeric,
                   {{x_shape}, {w_shape}, {{w_shape[0]}}},
                   [](const TensorList& in) {
                     return TensorList{linear(in[0], in[1], in[2]), linear(in[0], in[1])};
                   },
                   [](const std::vector<Ref>& in, DType dt) {
                     Ref p = ref_matmul(in[0], ref_t(in[1]));
                     Ref with_bias = ref_binary(p, in[2], [](double x, double y) { return x + y; });
                     return std::vector<Ref>{wrapped(with_bias, dt), wrapped(p, dt)};
                   }});
  }

  // addmm with beta == 1: a broadcast row (m) or (1, m) is a fusable bias, a full (n, m) input
  // is not; alpha still scales the product only.
  register_case(
      {"addmm_bias",
       numeric,
       {{{4}}, {{1, 4}}, {{3, 4}}, {{3, 5}}, {{5, 4}}},
       [](const TensorList& in) {
         const Scalar alpha = is_floating_point(in[0].dtype()) ? Scalar(-1.5) : Scalar(-3);
         TensorList out;
         for (size_t i = 0; i < 3; ++i) out.push_back(addmm(in[i], in[3], in[4], 1, alpha));
         return out;
       },
       [](const std::vector<Ref>& in, DType dt) {
         const double alpha = is_floating_point(dt) ? -1.5 : -3;
         Ref p = ref_matmul(in[3], in[4]);
         std::vector<Ref> out;
         for (size_t i = 0; i < 3; ++i) {
           out.push_back(wrapped(
               ref_binary(in[i], p, [=](double x, double y) { return x + alpha * y; }), dt));
         }
         return out;
       }});

  register_case({"outer",
                 all_dtypes(),
                 {{{4}}, {{3}}},
                 [](const TensorList& in) { return TensorList{outer(in[0], in[1])}; },
                 [](const std::vector<Ref>& in, DType dt) {
                   const Ref col(Shape{in[0].shape[0], 1}, in[0].data);
                   Ref out = ref_binary(col, in[1], [](double x, double y) { return x * y; });
                   return std::vector<Ref>{wrapped(out, dt)};
                 }});
}

}  // namespace
}  // namespace ember::harness
