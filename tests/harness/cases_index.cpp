// Harness cases: joining, indexing and sorting ops, with naive float64 references that walk
// multi-indices directly (no strides, no kernels).
#include <algorithm>
#include <numeric>

#include "harness/harness.h"

namespace ember::harness {
namespace {

using Idx = std::vector<int64_t>;

int64_t flat(const Shape& s, const Idx& i) {
  int64_t f = 0;
  for (size_t d = 0; d < s.size(); ++d) f = f * s[d] + i[d];
  return f;
}
double get(const Ref& r, const Idx& i) { return r.data[static_cast<size_t>(flat(r.shape, i))]; }
double& put(Ref& r, const Idx& i) { return r.data[static_cast<size_t>(flat(r.shape, i))]; }
Ref zeros_ref(Shape s) {
  Ref r;
  r.data.assign(static_cast<size_t>(s.numel()), 0.0);
  r.shape = std::move(s);
  return r;
}
int64_t wrap(double v, int64_t size) {
  int64_t i = static_cast<int64_t>(v);
  return i < 0 ? i + size : i;
}

// Random int64 (or other integer dtype) values in [lo, hi).
Tensor ints(Shape shape, int64_t lo, int64_t hi, std::mt19937& rng, DType dt = kInt64) {
  std::uniform_int_distribution<int64_t> d(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  for (int64_t& x : v) x = d(rng);
  return tensor(v, Shape{static_cast<int64_t>(v.size())}).reshape(shape).to(dt);
}

// (rows, cols) int64 where each column holds distinct values from [0, n).
Tensor distinct_columns(int64_t rows, int64_t cols, int64_t n, std::mt19937& rng) {
  std::vector<int64_t> v(static_cast<size_t>(rows * cols));
  for (int64_t c = 0; c < cols; ++c) {
    Idx perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int64_t r = 0; r < rows; ++r) v[static_cast<size_t>(r * cols + c)] = perm[r];
  }
  return tensor(v, {rows, cols});
}

Tensor input(Shape s, DType dt, std::mt19937& rng, Fill fill = Fill::Normal) {
  return make_input({std::move(s), fill}, dt, rng);
}

// Stable order of one line of values: ascending, or descending with ties still by position.
Idx stable_order(const std::vector<double>& v, bool descending) {
  Idx order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return descending ? v[a] > v[b] : v[a] < v[b]; });
  return order;
}

// Sorted values and positions along dim of a 2-D reference; keep the first k of each line.
std::vector<Ref> sort_ref(const Ref& x, int64_t dim, bool descending, int64_t k) {
  const int64_t lines = x.shape[1 - dim], n = x.shape[dim];
  Shape s = x.shape;
  s[dim] = k;
  Ref vals = zeros_ref(s), pos = zeros_ref(s);
  for (int64_t l = 0; l < lines; ++l) {
    std::vector<double> line;
    for (int64_t i = 0; i < n; ++i) line.push_back(dim == 1 ? get(x, {l, i}) : get(x, {i, l}));
    Idx order = stable_order(line, descending);
    for (int64_t i = 0; i < k; ++i) {
      Idx at = dim == 1 ? Idx{l, i} : Idx{i, l};
      put(vals, at) = line[order[i]];
      put(pos, at) = static_cast<double>(order[i]);
    }
  }
  return {vals, pos};
}

Ref tri_ref(const Ref& x, int64_t k, bool upper) {
  Ref out = zeros_ref(x.shape);
  for_each_index(x.shape, [&](const Idx& i) {
    int64_t r = i[i.size() - 2], c = i[i.size() - 1];
    bool keep = upper ? c - r >= k : c - r <= k;
    put(out, i) = keep ? get(x, i) : 0.0;
  });
  return out;
}

EMBER_HARNESS_CASES {
  const auto all = all_dtypes();
  const auto numeric = numeric_dtypes();

  // ---- cat / stack ----
  register_case({"cat",
                 all,
                 {{{2, 3}}, {{2, 1}}, {{2, 4}}},
                 [](const TensorList& in) {
                   return TensorList{cat({in[0], in[1], in[2]}, -1), cat({in[0], in[0]}, 0)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref a = zeros_ref({2, 8}), b = zeros_ref({4, 3});
                   for (int64_t r = 0; r < 2; ++r) {
                     int64_t c = 0;
                     for (int t = 0; t < 3; ++t) {
                       for (int64_t j = 0; j < in[t].shape[1]; ++j)
                         put(a, {r, c++}) = get(in[t], {r, j});
                     }
                     for (int64_t j = 0; j < 3; ++j) {
                       put(b, {r, j}) = put(b, {r + 2, j}) = get(in[0], {r, j});
                     }
                   }
                   return std::vector<Ref>{a, b};
                 }});
  register_case({"stack",
                 all,
                 {{{3, 4}}, {{3, 4}}, {{3, 4}}},
                 [](const TensorList& in) { return TensorList{stack(in, 1)}; },
                 [](const std::vector<Ref>& in, DType) {
                   Ref out = zeros_ref({3, 3, 4});
                   for_each_index(out.shape, [&](const Idx& i) {
                     put(out, i) = get(in[static_cast<size_t>(i[1])], {i[0], i[2]});
                   });
                   return std::vector<Ref>{out};
                 }});

  // ---- index_select / gather / scatter ----
  register_case({"index_select",
                 all,
                 {},
                 [](const TensorList& in) {
                   return TensorList{index_select(in[0], 1, in[1]), in[0].index_select(0, in[2])};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Ref &x = in[0], &i1 = in[1], &i0 = in[2];
                   Ref a = zeros_ref({4, i1.numel()}), b = zeros_ref({i0.numel(), 5});
                   for_each_index(a.shape, [&](const Idx& i) {
                     put(a, i) = get(x, {i[0], static_cast<int64_t>(i1.data[i[1]])});
                   });
                   for_each_index(b.shape, [&](const Idx& i) {
                     put(b, i) = get(x, {static_cast<int64_t>(i0.data[i[0]]), i[1]});
                   });
                   return std::vector<Ref>{a, b};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   return TensorList{input({4, 5}, dt, rng), ints({7}, 0, 5, rng),
                                     ints({3}, 0, 4, rng, kInt32)};
                 }});
  register_case({"gather",
                 all,
                 {},
                 [](const TensorList& in) { return TensorList{gather(in[0], 1, in[1])}; },
                 [](const std::vector<Ref>& in, DType) {
                   Ref out = zeros_ref(in[1].shape);
                   for_each_index(out.shape, [&](const Idx& i) {
                     put(out, i) = get(in[0], {i[0], static_cast<int64_t>(get(in[1], i))});
                   });
                   return std::vector<Ref>{out};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   return TensorList{input({4, 5}, dt, rng), ints({3, 7}, 0, 5, rng)};
                 }});
  // Distinct indices along dim: which duplicate wins is unspecified, as in PyTorch.
  register_case({"scatter",
                 all,
                 {},
                 [](const TensorList& in) {
                   return TensorList{scatter(in[0], 0, in[1], in[2]),
                                     in[0].scatter(0, in[1], in[2]), scatter(in[0], 0, in[1], 1)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref a = in[0], c = in[0];
                   for_each_index(in[1].shape, [&](const Idx& i) {
                     Idx to = {static_cast<int64_t>(get(in[1], i)), i[1]};
                     put(a, to) = get(in[2], i);
                     put(c, to) = 1.0;
                   });
                   return std::vector<Ref>{a, a, c};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   return TensorList{input({4, 5}, dt, rng), distinct_columns(3, 5, 4, rng),
                                     input({4, 6}, dt, rng)};
                 }});
  register_case({"scatter_add",
                 all,
                 {},
                 [](const TensorList& in) {
                   Tensor self = in[0].clone();
                   self.scatter_add_(1, in[1], in[2]);
                   return TensorList{scatter_add(in[0], 1, in[1], in[2]), self};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref a = in[0];
                   for_each_index(in[1].shape, [&](const Idx& i) {
                     put(a, {i[0], static_cast<int64_t>(get(in[1], i))}) += get(in[2], i);
                   });
                   return std::vector<Ref>{a, a};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   return TensorList{input({3, 4}, dt, rng, Fill::Small), ints({3, 6}, 0, 4, rng),
                                     input({3, 6}, dt, rng, Fill::Small)};
                 }});

  // ---- advanced indexing ----
  // x[i0, :, i2] (separated: index dims first) and x[:, mask] (adjacent: in place).
  register_case(
      {"index",
       all,
       {},
       [](const TensorList& in) {
         return TensorList{index(in[0], {in[1], Tensor(), in[2]}), in[0].index({Tensor(), in[3]})};
       },
       [](const std::vector<Ref>& in, DType) {
         const Ref &x = in[0], &i0 = in[1], &i2 = in[2], &m = in[3];
         Ref a = zeros_ref({2, 3, 5});
         for_each_index(a.shape, [&](const Idx& i) {
           put(a, i) = get(x, {wrap(get(i0, {i[0], i[1]}), 4), i[2],
                               wrap(i2.data[static_cast<size_t>(i[1])], 3)});
         });
         std::vector<Idx> picks;
         for_each_index(m.shape, [&](const Idx& i) {
           if (get(m, i) != 0) picks.push_back(i);
         });
         Ref b = zeros_ref({4, static_cast<int64_t>(picks.size())});
         for_each_index(b.shape, [&](const Idx& i) {
           put(b, i) = get(x, {i[0], picks[i[1]][0], picks[i[1]][1]});
         });
         return std::vector<Ref>{a, b};
       },
       -1,
       [](DType dt, std::mt19937& rng) {
         return TensorList{input({4, 5, 3}, dt, rng), ints({2, 3}, -4, 4, rng),
                           ints({3}, -3, 3, rng, kInt32),
                           make_input({{5, 3}, Fill::Bool, kBool}, dt, rng)};
       }});
  // x[i0] += v with repeated rows, and x[mask] = scalar.
  register_case({"index_put",
                 all,
                 {},
                 [](const TensorList& in) {
                   Tensor y = in[0].clone();
                   y.index_put_({in[3]}, in[4]);
                   return TensorList{index_put(in[0], {in[1]}, in[2], true), y};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref a = in[0], b = in[0];
                   for (int64_t k = 0; k < in[1].numel(); ++k) {
                     int64_t r = wrap(in[1].data[static_cast<size_t>(k)], 4);
                     for (int64_t c = 0; c < 5; ++c) put(a, {r, c}) += get(in[2], {k, c});
                   }
                   for (size_t k = 0; k < b.data.size(); ++k) {
                     if (in[3].data[k] != 0) b.data[k] = in[4].data[0];
                   }
                   return std::vector<Ref>{a, b};
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   return TensorList{input({4, 5}, dt, rng, Fill::Small), ints({6}, -4, 4, rng),
                                     input({6, 5}, dt, rng, Fill::Small),
                                     make_input({{4, 5}, Fill::Bool, kBool}, dt, rng),
                                     input({}, dt, rng)};
                 }});
  register_case({"masked_select",
                 all,
                 {{{3, 4}}, {{4}, Fill::Bool, kBool}},
                 [](const TensorList& in) { return TensorList{masked_select(in[0], in[1])}; },
                 [](const std::vector<Ref>& in, DType) {
                   Ref out;
                   for_each_index(in[0].shape, [&](const Idx& i) {
                     if (in[1].data[static_cast<size_t>(i[1])] != 0)
                       out.data.push_back(get(in[0], i));
                   });
                   out.shape = Shape{static_cast<int64_t>(out.data.size())};
                   return std::vector<Ref>{out};
                 }});
  register_case({"nonzero",
                 all,
                 {{{3, 4, 2}, Fill::Small}},
                 [](const TensorList& in) { return TensorList{nonzero(in[0])}; },
                 [](const std::vector<Ref>& in, DType) {
                   Ref out;
                   for_each_index(in[0].shape, [&](const Idx& i) {
                     if (get(in[0], i) != 0) {
                       for (int64_t v : i) out.data.push_back(static_cast<double>(v));
                     }
                   });
                   out.shape = Shape{static_cast<int64_t>(out.data.size() / 3), 3};
                   return std::vector<Ref>{out};
                 }});
  register_case(
      {"embedding",
       all,
       {},
       [](const TensorList& in) { return TensorList{embedding(in[0], in[1])}; },
       [](const std::vector<Ref>& in, DType) {
         Ref out = zeros_ref({2, 3, 4});
         for_each_index(out.shape, [&](const Idx& i) {
           put(out, i) = get(in[0], {static_cast<int64_t>(get(in[1], {i[0], i[1]})), i[2]});
         });
         return std::vector<Ref>{out};
       },
       -1,
       [](DType dt, std::mt19937& rng) {
         return TensorList{input({6, 4}, dt, rng), ints({2, 3}, 0, 6, rng)};
       }});
  register_case({"one_hot",
                 {kInt64},
                 {},
                 [](const TensorList& in) {
                   return TensorList{one_hot(in[0], 6), one_hot(in[0])};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   double mx = *std::max_element(in[0].data.begin(), in[0].data.end());
                   std::vector<Ref> out;
                   for (int64_t n : {int64_t(6), static_cast<int64_t>(mx) + 1}) {
                     Ref r = zeros_ref({5, n});
                     for (int64_t k = 0; k < 5; ++k)
                       put(r, {k, static_cast<int64_t>(in[0].data[k])}) = 1;
                     out.push_back(r);
                   }
                   return out;
                 },
                 -1,
                 [](DType, std::mt19937& rng) { return TensorList{ints({5}, 0, 4, rng)}; }});

  // ---- sorting ----
  register_case({"sort",
                 all,
                 {{{4, 6}}},
                 [](const TensorList& in) {
                   auto [v1, i1] = sort(in[0], 1, false, true);
                   auto [v0, i0] = in[0].sort(0, true, true);
                   return TensorList{v1, i1, v0, i0};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   std::vector<Ref> a = sort_ref(in[0], 1, false, 6),
                                    b = sort_ref(in[0], 0, true, 4);
                   return std::vector<Ref>{a[0], a[1], b[0], b[1]};
                 }});
  register_case(
      {"argsort",
       all,
       {{{5, 4}}},
       [](const TensorList& in) {
         return TensorList{argsort(in[0], 0, false, true), in[0].argsort(-1, true, true)};
       },
       [](const std::vector<Ref>& in, DType) {
         return std::vector<Ref>{sort_ref(in[0], 0, false, 5)[1], sort_ref(in[0], 1, true, 4)[1]};
       }});
  // Which of several equal elements topk picks is unspecified: indices are checked through the
  // values they point at.
  register_case({"topk",
                 numeric,
                 {{{4, 7}}},
                 [](const TensorList& in) {
                   auto [v1, i1] = topk(in[0], 3);
                   auto [v0, i0] = in[0].topk(2, 0, false);
                   return TensorList{v1, in[0].gather(1, i1), v0, in[0].gather(0, i0)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref a = sort_ref(in[0], 1, true, 3)[0], b = sort_ref(in[0], 0, false, 2)[0];
                   return std::vector<Ref>{a, a, b, b};
                 }});

  // ---- tril / triu ----
  register_case({"tril",
                 all,
                 {{{2, 4, 5}}},
                 [](const TensorList& in) {
                   return TensorList{tril(in[0]), in[0].tril(-2), tril(in[0], 1)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{tri_ref(in[0], 0, false), tri_ref(in[0], -2, false),
                                           tri_ref(in[0], 1, false)};
                 }});
  register_case({"triu",
                 all,
                 {{{2, 4, 5}}},
                 [](const TensorList& in) {
                   return TensorList{triu(in[0]), in[0].triu(-2), triu(in[0], 3)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{tri_ref(in[0], 0, true), tri_ref(in[0], -2, true),
                                           tri_ref(in[0], 3, true)};
                 }});
}

}  // namespace
}  // namespace ember::harness
