// Harness cases: batch_norm (training, with the running-statistic update, and evaluation),
// layer_norm (short rows and long rows), group_norm, rms_norm and embedding with padding_idx,
// against naive two-pass float64 references.
#include <cmath>
#include <vector>

#include "ember/nn/functional/norm.h"
#include "harness/harness.h"

namespace ember::harness {
namespace {

namespace F = nn::functional;

// Input seen as (batch, channels, inner); statistics per channel, or per (batch, group).
struct Geo {
  int64_t batch, channels, inner;
  int64_t groups = 1;
  bool per_channel = false;
  bool rms = false;
  int64_t stat(int64_t b, int64_t c) const {
    return per_channel ? c : b * groups + c / (channels / groups);
  }
  int64_t stats() const { return per_channel ? channels : batch * groups; }
};

struct Stats {
  std::vector<double> mean, var, count;
};

Stats stats_ref(const Ref& x, const Geo& g) {
  Stats s{std::vector<double>(g.stats()), std::vector<double>(g.stats()),
          std::vector<double>(g.stats())};
  auto each = [&](auto&& fn) {
    for (int64_t b = 0; b < g.batch; ++b)
      for (int64_t c = 0; c < g.channels; ++c)
        for (int64_t k = 0; k < g.inner; ++k) {
          fn(g.stat(b, c), x.data[static_cast<size_t>((b * g.channels + c) * g.inner + k)]);
        }
  };
  each([&](int64_t i, double v) {
    s.mean[i] += g.rms ? 0.0 : v;
    s.count[i] += 1;
  });
  for (size_t i = 0; i < s.mean.size(); ++i) s.mean[i] /= s.count[i];
  each([&](int64_t i, double v) { s.var[i] += (v - s.mean[i]) * (v - s.mean[i]); });
  for (size_t i = 0; i < s.var.size(); ++i) s.var[i] /= s.count[i];
  return s;
}

// y = (x - mean) / sqrt(var + eps) * w + b, w and b per channel (null: none).
Ref apply_ref(const Ref& x, const Geo& g, const Stats& s, const Ref* w, const Ref* b, double eps) {
  Ref y(x.shape, std::vector<double>(x.data.size()));
  for (int64_t bi = 0; bi < g.batch; ++bi)
    for (int64_t c = 0; c < g.channels; ++c)
      for (int64_t k = 0; k < g.inner; ++k) {
        const size_t i = static_cast<size_t>((bi * g.channels + c) * g.inner + k);
        const int64_t st = g.stat(bi, c);
        double v = (x.data[i] - s.mean[st]) / std::sqrt(s.var[st] + eps);
        if (w) v *= w->data[static_cast<size_t>(c)];
        if (b) v += b->data[static_cast<size_t>(c)];
        y.data[i] = v;
      }
  return y;
}

Geo channel_geo(const Shape& s) {
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  return {s[0], s[1], inner, 1, true};
}

constexpr double kEps = 1e-5;
constexpr double kMomentum = 0.1;

void batch_norm_train_case(const char* name, Shape xs) {
  const int64_t c = xs[1];
  register_case({name,
                 float_dtypes(),
                 {{xs}, {{c}}, {{c}}, {{c}}, {{c}, Fill::Positive}},
                 [](const TensorList& in) {
                   Tensor rm = in[3].clone(), rv = in[4].clone();
                   Tensor y = F::batch_norm(in[0], rm, rv, in[1], in[2], true, kMomentum, kEps);
                   return TensorList{y, rm, rv};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Geo g = channel_geo(in[0].shape);
                   const Stats s = stats_ref(in[0], g);
                   Ref rm = in[3], rv = in[4];
                   for (size_t i = 0; i < rm.data.size(); ++i) {
                     const double n = s.count[i];
                     rm.data[i] = (1 - kMomentum) * rm.data[i] + kMomentum * s.mean[i];
                     rv.data[i] = (1 - kMomentum) * rv.data[i] + kMomentum * s.var[i] * n / (n - 1);
                   }
                   return std::vector<Ref>{apply_ref(in[0], g, s, &in[1], &in[2], kEps), rm, rv};
                 }});
  register_gradcheck(name, GradCheck{{0, 1, 2}, {0}});
}

EMBER_HARNESS_CASES {
  const std::vector<DType> floats = float_dtypes();

  // (N, C, L): a block per channel; (N, C): the coalesced column path on a device.
  batch_norm_train_case("batch_norm_train", {4, 3, 5});
  batch_norm_train_case("batch_norm1d_train", {8, 5});

  register_case({"batch_norm_eval",
                 floats,
                 {{{3, 4, 2, 3}}, {{4}}, {{4}}, {{4}}, {{4}, Fill::Positive}},
                 [](const TensorList& in) {
                   return TensorList{
                       F::batch_norm(in[0], in[3], in[4], in[1], in[2], false, kMomentum, kEps),
                       F::batch_norm(in[0], in[3], in[4], {}, {}, false, kMomentum, kEps)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   const Geo g = channel_geo(in[0].shape);
                   const Stats s{in[3].data, in[4].data, {}};
                   return std::vector<Ref>{apply_ref(in[0], g, s, &in[1], &in[2], kEps),
                                           apply_ref(in[0], g, s, nullptr, nullptr, kEps)};
                 }});
  register_gradcheck("batch_norm_eval", GradCheck{{0, 1, 2}, {}});

  // Rows of 6 x 4 (a warp per row on a device) and of 140 (a block per row).
  for (auto [name, xs, ns] :
       {std::tuple<const char*, Shape, Shape>{"layer_norm", {3, 2, 6, 4}, {6, 4}},
        {"layer_norm_long_rows", {2, 140}, {140}}}) {
    const std::vector<int64_t> nshape(ns.begin(), ns.end());
    register_case({name,
                   floats,
                   {{xs}, {ns}, {ns}},
                   [nshape](const TensorList& in) {
                     return TensorList{F::layer_norm(in[0], nshape, in[1], in[2], kEps),
                                       F::layer_norm(in[0], nshape, {}, {}, kEps)};
                   },
                   [nshape](const std::vector<Ref>& in, DType) {
                     int64_t n = 1;
                     for (int64_t d : nshape) n *= d;
                     const Geo g{in[0].numel() / n, n, 1};
                     const Stats s = stats_ref(in[0], g);
                     return std::vector<Ref>{apply_ref(in[0], g, s, &in[1], &in[2], kEps),
                                             apply_ref(in[0], g, s, nullptr, nullptr, kEps)};
                   }});
    register_gradcheck(name);
  }

  register_case({"group_norm",
                 floats,
                 {{{2, 6, 5}}, {{6}}, {{6}}},
                 [](const TensorList& in) {
                   return TensorList{F::group_norm(in[0], 3, in[1], in[2], kEps),
                                     F::group_norm(in[0], 2, {}, {}, kEps)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Geo g3{2, 6, 5, 3}, g2{2, 6, 5, 2};
                   return std::vector<Ref>{
                       apply_ref(in[0], g3, stats_ref(in[0], g3), &in[1], &in[2], kEps),
                       apply_ref(in[0], g2, stats_ref(in[0], g2), nullptr, nullptr, kEps)};
                 }});
  register_gradcheck("group_norm");

  register_case({"rms_norm",
                 floats,
                 {{{4, 3, 10}}, {{10}}},
                 [](const TensorList& in) {
                   return TensorList{F::rms_norm(in[0], {10}, in[1], kEps),
                                     F::rms_norm(in[0], {3, 10}, {}, kEps)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   std::vector<Ref> out;
                   for (int64_t n : {10, 30}) {
                     Geo g{in[0].numel() / n, n, 1};
                     g.rms = true;
                     Stats s = stats_ref(in[0], g);
                     // mean(x^2) = var about zero.
                     for (auto& v : s.var) v = 0;
                     for (int64_t r = 0; r < g.batch; ++r) {
                       for (int64_t j = 0; j < n; ++j) {
                         const double v = in[0].data[static_cast<size_t>(r * n + j)];
                         s.var[static_cast<size_t>(r)] += v * v / static_cast<double>(n);
                       }
                     }
                     out.push_back(
                         apply_ref(in[0], g, s, n == 10 ? &in[1] : nullptr, nullptr, kEps));
                   }
                   return out;
                 }});
  register_gradcheck("rms_norm");

  // Forward only: by design the padding row's analytical gradient (zero) differs from finite
  // differences; test_nn_norm checks it.
  register_case({"embedding_padding_idx",
                 floats,
                 {},
                 [](const TensorList& in) {
                   return TensorList{F::embedding(in[1], in[0], 2), F::embedding(in[2], in[0], -1)};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   std::vector<Ref> out;
                   for (int k : {1, 2}) {
                     const Ref& idx = in[static_cast<size_t>(k)];
                     Ref o({idx.shape[0], idx.shape[1], 4},
                           std::vector<double>(static_cast<size_t>(idx.numel() * 4)));
                     for (int64_t i = 0; i < idx.numel(); ++i) {
                       const auto row = static_cast<int64_t>(idx.data[static_cast<size_t>(i)]);
                       for (int64_t j = 0; j < 4; ++j) {
                         o.data[static_cast<size_t>(i * 4 + j)] =
                             in[0].data[static_cast<size_t>(row * 4 + j)];
                       }
                     }
                     out.push_back(o);
                   }
                   return out;
                 },
                 -1,
                 [](DType dt, std::mt19937& rng) {
                   std::uniform_int_distribution<int64_t> d(0, 5);
                   std::vector<int64_t> a(6), b(6);
                   for (auto& v : a) v = d(rng);
                   for (auto& v : b) v = d(rng);
                   return TensorList{make_input({{6, 4}}, dt, rng),
                                     tensor(a, Shape{6}).reshape({2, 3}),
                                     tensor(b, Shape{6}).reshape({3, 2}).to(kInt32)};
                 }});
}

}  // namespace
}  // namespace ember::harness
