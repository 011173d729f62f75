// Harness cases: losses (cross_entropy and nll_loss through the fused family, the element-wise
// losses composed of ops), with naive float64 references written from PyTorch's definitions.
#include <cmath>

#include "ember/nn/functional/loss.h"
#include "harness/harness.h"

namespace ember::harness {
namespace {

namespace F = nn::functional;

constexpr int64_t kIgnore = -100;

Tensor ints(Shape shape, int64_t lo, int64_t hi, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> d(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  for (int64_t& x : v) x = d(rng);
  return tensor(v, Shape{static_cast<int64_t>(v.size())}).reshape(shape);
}

// Class indices in [0, c) with every third position replaced by ignore (when given).
Tensor targets(Shape shape, int64_t c, std::mt19937& rng, std::optional<int64_t> ignore = {}) {
  Tensor t = ints(std::move(shape), 0, c, rng);
  if (!ignore) return t;
  std::vector<int64_t> v = t.to_vector<int64_t>();
  for (size_t i = 0; i < v.size(); i += 3) v[i] = *ignore;
  return tensor(v, Shape{static_cast<int64_t>(v.size())}).reshape(t.sizes());
}

Tensor input(Shape s, DType dt, std::mt19937& rng, Fill fill = Fill::Normal) {
  return make_input({std::move(s), fill}, dt, rng);
}

// Per-row losses and target weights of class-index cross-entropy (from_logits) or nll on input
// (N, C, d...) seen as rows (n, d...) of C classes.
struct RowLoss {
  std::vector<double> loss, weight;
};
RowLoss rows_ref(const Ref& x, const Ref& t, const Ref* w, int64_t ignore, double ls,
                 bool from_logits) {
  const int64_t n = x.shape.size() == 1 ? 1 : x.shape[0];
  const int64_t c = x.shape.size() == 1 ? x.shape[0] : x.shape[1];
  const int64_t inner = x.numel() / std::max<int64_t>(1, n * c);
  RowLoss r;
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t s = 0; s < inner; ++s) {
      auto at = [&](int64_t k) { return x.data[static_cast<size_t>((b * c + k) * inner + s)]; };
      const int64_t tg = static_cast<int64_t>(t.data[static_cast<size_t>(b * inner + s)]);
      if (tg == ignore) {
        r.loss.push_back(0);
        r.weight.push_back(0);
        continue;
      }
      auto wc = [&](int64_t k) { return w ? w->data[static_cast<size_t>(k)] : 1.0; };
      double lse = 0;
      if (from_logits) {
        double m = -INFINITY;
        for (int64_t k = 0; k < c; ++k) m = std::max(m, at(k));
        double sum = 0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(at(k) - m);
        lse = m + std::log(sum);
      }
      double smooth = 0;
      for (int64_t k = 0; k < c; ++k) smooth += wc(k) * (lse - at(k));
      r.loss.push_back((1 - ls) * wc(tg) * (lse - at(tg)) + ls / static_cast<double>(c) * smooth);
      r.weight.push_back(wc(tg));
    }
  }
  return r;
}

// none (target's shape), sum and mean (divided by the summed target weights).
std::vector<Ref> reductions(const RowLoss& r, const Shape& none_shape) {
  double s = 0, ws = 0;
  for (size_t i = 0; i < r.loss.size(); ++i) {
    s += r.loss[i];
    ws += r.weight[i];
  }
  return {Ref(none_shape, r.loss), Ref({}, {s}), Ref({}, {s / ws})};
}

std::vector<Ref> reductions(const std::vector<double>& l, const Shape& shape) {
  double s = 0;
  for (double v : l) s += v;
  return {Ref(shape, l), Ref({}, {s}), Ref({}, {s / static_cast<double>(l.size())})};
}

// Runs a loss with each reduction: none, sum, mean.
template <class Opt, class Fn>
TensorList three(Fn fn, Opt o) {
  return {fn(o.reduction("none")), fn(o.reduction("sum")), fn(o.reduction("mean"))};
}

// Class-index cross-entropy / nll case over input shape x, c classes.
void class_case(const std::string& name, Shape x, bool with_weight, std::optional<int64_t> ignore,
                double ls, bool from_logits) {
  const int64_t c = x.size() == 1 ? x[0] : x[1];
  Shape ts;
  if (x.size() > 1) {
    ts.push_back(x[0]);
    for (size_t d = 2; d < x.size(); ++d) ts.push_back(x[d]);
  }
  const int64_t ig = ignore.value_or(kIgnore);
  register_case(
      {name,
       float_dtypes(),
       {},
       [=](const TensorList& in) {
         Tensor w = with_weight ? in[2] : Tensor();
         if (from_logits) {
           auto o = F::CrossEntropyFuncOptions().weight(w).ignore_index(ig).label_smoothing(ls);
           return three([&](const auto& oo) { return F::cross_entropy(in[0], in[1], oo); }, o);
         }
         auto o = F::NLLLossFuncOptions().weight(w).ignore_index(ig);
         return three([&](const auto& oo) { return F::nll_loss(in[0], in[1], oo); }, o);
       },
       [=](const std::vector<Ref>& in, DType) {
         RowLoss r = rows_ref(in[0], in[1], with_weight ? &in[2] : nullptr, ig, ls, from_logits);
         return reductions(r, ts);
       },
       -1,
       [=](DType dt, std::mt19937& rng) {
         TensorList in{input(x, dt, rng), targets(ts, c, rng, ignore)};
         if (with_weight) in.push_back(input({c}, dt, rng, Fill::Positive));
         return in;
       }});
  register_gradcheck(name, GradCheck{{0}});
}

EMBER_HARNESS_CASES {
  // ---- cross_entropy with class indices (fused kernel) ----
  class_case("cross_entropy", {6, 5}, false, {}, 0.0, true);
  class_case("cross_entropy_weight", {7, 4}, true, {}, 0.0, true);
  class_case("cross_entropy_ignore", {9, 5}, true, kIgnore, 0.0, true);
  class_case("cross_entropy_ignore_index", {6, 3}, false, 1, 0.0, true);
  class_case("cross_entropy_smoothing", {6, 5}, false, {}, 0.2, true);
  class_case("cross_entropy_smoothing_weight", {9, 4}, true, kIgnore, 0.1, true);
  class_case("cross_entropy_spatial", {2, 4, 3, 2}, true, kIgnore, 0.15, true);
  class_case("cross_entropy_unbatched", {5}, false, {}, 0.0, true);
  class_case("cross_entropy_wide", {3, 40}, true, {}, 0.1, true);     // full-warp rows
  class_case("cross_entropy_long", {1, 1030}, false, {}, 0.0, true);  // a block per row
  // ---- nll_loss (the same family on log-probabilities) ----
  class_case("nll_loss", {6, 5}, false, {}, 0.0, false);
  class_case("nll_loss_weight_ignore", {9, 4}, true, kIgnore, 0.0, false);
  class_case("nll_loss_spatial", {2, 3, 2, 2}, true, kIgnore, 0.0, false);

  // ---- cross_entropy with class probabilities (composed) ----
  register_case(
      {"cross_entropy_probs",
       float_dtypes(),
       {},
       [](const TensorList& in) {
         auto o = F::CrossEntropyFuncOptions().weight(in[2]).label_smoothing(0.1);
         return three([&](const auto& oo) { return F::cross_entropy(in[0], in[1], oo); }, o);
       },
       [](const std::vector<Ref>& in, DType) {
         const Ref &x = in[0], &t = in[1], &w = in[2];
         const int64_t n = x.shape[0], c = x.shape[1], inner = x.shape[2];
         std::vector<double> l;
         for (int64_t b = 0; b < n; ++b) {
           for (int64_t s = 0; s < inner; ++s) {
             auto at = [&](const Ref& r, int64_t k) {
               return r.data[static_cast<size_t>((b * c + k) * inner + s)];
             };
             double m = -INFINITY, sum = 0, v = 0;
             for (int64_t k = 0; k < c; ++k) m = std::max(m, at(x, k));
             for (int64_t k = 0; k < c; ++k) sum += std::exp(at(x, k) - m);
             for (int64_t k = 0; k < c; ++k) {
               const double tk = at(t, k) * 0.9 + 0.1 / static_cast<double>(c);
               v -= w.data[static_cast<size_t>(k)] * tk * (at(x, k) - m - std::log(sum));
             }
             l.push_back(v);
           }
         }
         return reductions(l, {n, inner});
       },
       -1,
       [](DType dt, std::mt19937& rng) {
         Tensor t = softmax(input({3, 4, 2}, kFloat64, rng), 1).to(dt);
         return TensorList{input({3, 4, 2}, dt, rng), t, input({4}, dt, rng, Fill::Positive)};
       }});
  register_gradcheck("cross_entropy_probs", GradCheck{{0, 1}});

  // ---- element-wise losses ----
  auto pair_case = [](const std::string& name, Fill tfill,
                      std::function<Tensor(const Tensor&, const Tensor&, const std::string&)> fn,
                      std::function<double(double, double)> f) {
    register_case({name,
                   float_dtypes(),
                   {{{3, 5}}, {{3, 5}, tfill}},
                   [fn](const TensorList& in) {
                     return TensorList{fn(in[0], in[1], "none"), fn(in[0], in[1], "sum"),
                                       fn(in[0], in[1], "mean")};
                   },
                   [f](const std::vector<Ref>& in, DType) {
                     return reductions(ref_binary(in[0], in[1], f).data, in[0].shape);
                   }});
    register_gradcheck(name);
  };
  pair_case(
      "mse_loss", Fill::Normal,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::mse_loss(a, b, F::MSELossFuncOptions().reduction(r));
      },
      [](double a, double b) { return (a - b) * (a - b); });
  pair_case(
      "l1_loss", Fill::Normal,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::l1_loss(a, b, F::L1LossFuncOptions().reduction(r));
      },
      [](double a, double b) { return std::fabs(a - b); });
  pair_case(
      "smooth_l1_loss", Fill::Normal,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::smooth_l1_loss(a, b, F::SmoothL1LossFuncOptions().reduction(r).beta(0.5));
      },
      [](double a, double b) {
        const double d = std::fabs(a - b);
        return d < 0.5 ? 0.5 * d * d / 0.5 : d - 0.25;
      });
  pair_case(
      "huber_loss", Fill::Normal,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::huber_loss(a, b, F::HuberLossFuncOptions().reduction(r).delta(0.7));
      },
      [](double a, double b) {
        const double d = std::fabs(a - b);
        return d < 0.7 ? 0.5 * d * d : 0.7 * (d - 0.35);
      });
  pair_case(
      "kl_div", Fill::Positive,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::kl_div(a, b, F::KLDivFuncOptions().reduction(r));
      },
      [](double a, double b) { return b * (std::log(b) - a); });
  pair_case(
      "kl_div_log_target", Fill::Normal,
      [](const Tensor& a, const Tensor& b, const std::string& r) {
        return F::kl_div(a, b, F::KLDivFuncOptions().reduction(r).log_target(true));
      },
      [](double a, double b) { return std::exp(b) * (b - a); });

  register_case({"kl_div_batchmean",
                 float_dtypes(),
                 {{{4, 3}}, {{4, 3}, Fill::Positive}},
                 [](const TensorList& in) {
                   return TensorList{
                       F::kl_div(in[0], in[1], F::KLDivFuncOptions().reduction("batchmean"))};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   double s = 0;
                   for (size_t i = 0; i < in[0].data.size(); ++i) {
                     const double t = in[1].data[i];
                     s += t * (std::log(t) - in[0].data[i]);
                   }
                   return std::vector<Ref>{Ref({}, {s / 4})};
                 }});
  register_gradcheck("kl_div_batchmean");

  register_case(
      {"binary_cross_entropy",
       float_dtypes(),
       {},
       [](const TensorList& in) {
         auto o = F::BinaryCrossEntropyFuncOptions().weight(in[2]);
         return three([&](const auto& oo) { return F::binary_cross_entropy(in[0], in[1], oo); }, o);
       },
       [](const std::vector<Ref>& in, DType) {
         Ref l = ref_ternary(in[0], in[1], in[2], [](double x, double t, double w) {
           return -w *
                  (t * std::max(std::log(x), -100.0) + (1 - t) * std::max(std::log(1 - x), -100.0));
         });
         return reductions(l.data, l.shape);
       },
       -1,
       [](DType dt, std::mt19937& rng) {
         Tensor x = sigmoid(input({4, 3}, kFloat64, rng)).to(dt);
         Tensor t = (input({4, 3}, kFloat64, rng, Fill::Unit) * 0.5 + 0.5).to(dt);
         return TensorList{x, t, input({3}, dt, rng, Fill::Positive)};
       }});
  register_gradcheck("binary_cross_entropy", GradCheck{{0, 1}});

  register_case(
      {"binary_cross_entropy_with_logits",
       float_dtypes(),
       {},
       [](const TensorList& in) {
         auto o = F::BinaryCrossEntropyWithLogitsFuncOptions().weight(in[2]).pos_weight(in[3]);
         TensorList r = three(
             [&](const auto& oo) { return F::binary_cross_entropy_with_logits(in[0], in[1], oo); },
             o);
         r.push_back(F::binary_cross_entropy_with_logits(in[0], in[1]));
         return r;
       },
       [](const std::vector<Ref>& in, DType) {
         auto loss = [](double x, double t, double w, double pw) {
           const double ls = -std::log1p(std::exp(-x));  // log sigmoid(x)
           const double lns = -std::log1p(std::exp(x));  // log (1 - sigmoid(x))
           return -w * (pw * t * ls + (1 - t) * lns);
         };
         std::vector<double> l, plain;
         for_each_index(in[0].shape, [&](const std::vector<int64_t>& i) {
           l.push_back(loss(in[0].at(i), in[1].at(i), in[2].at(i), in[3].at(i)));
           plain.push_back(loss(in[0].at(i), in[1].at(i), 1, 1));
         });
         std::vector<Ref> r = reductions(l, in[0].shape);
         r.push_back(reductions(plain, in[0].shape)[2]);
         return r;
       },
       -1,
       [](DType dt, std::mt19937& rng) {
         Tensor t = (input({4, 3}, kFloat64, rng, Fill::Unit) * 0.5 + 0.5).to(dt);
         return TensorList{input({4, 3}, dt, rng, Fill::Wide), t,
                           input({4, 1}, dt, rng, Fill::Positive),
                           input({3}, dt, rng, Fill::Positive)};
       }});
  register_gradcheck("binary_cross_entropy_with_logits", GradCheck{{0, 1, 2, 3}});
}

}  // namespace
}  // namespace ember::harness
