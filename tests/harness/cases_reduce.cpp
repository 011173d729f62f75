// Harness cases: reductions (sum ... any/all), max/min with indices, scans and softmax. Each case
// returns several dim choices at once; references fold plain row-major groups in float64.
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/harness.h"

namespace ember::harness {
namespace {

using Fold = std::function<double(const std::vector<double>&)>;
const double kInf = std::numeric_limits<double>::infinity();

// Groups of elements folded into each output of reducing dims (empty = all), keepdim or not.
Ref fold(const Ref& x, std::vector<int64_t> dims, bool keepdim, const Fold& f) {
  const int64_t nd = static_cast<int64_t>(x.shape.size());
  std::vector<bool> red(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  Shape out_shape, keep_shape;
  for (int64_t i = 0; i < nd; ++i) {
    const bool r = red[static_cast<size_t>(i)];
    keep_shape.push_back(r ? 1 : x.shape[i]);
    if (!r || keepdim) out_shape.push_back(r ? 1 : x.shape[i]);
  }
  std::vector<std::vector<double>> groups(static_cast<size_t>(keep_shape.numel()));
  size_t lin = 0;
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    int64_t o = 0;
    for (int64_t i = 0; i < nd; ++i) {
      o = o * keep_shape[i] + (red[static_cast<size_t>(i)] ? 0 : idx[static_cast<size_t>(i)]);
    }
    groups[static_cast<size_t>(o)].push_back(x.data[lin++]);
  });
  Ref out(out_shape, {});
  for (const auto& g : groups) out.data.push_back(f(g));
  return out;
}

// out[..., i, ...] = f(x[..., 0..i, ...]) along dim (cumulative folds).
Ref running(const Ref& x, int64_t dim, const Fold& f) {
  const int64_t nd = static_cast<int64_t>(x.shape.size());
  dim = dim < 0 ? dim + nd : dim;
  Ref out(x.shape, std::vector<double>(x.data.size()));
  std::vector<int64_t> strides(static_cast<size_t>(nd), 1);
  for (int64_t i = nd - 2; i >= 0; --i) strides[i] = strides[i + 1] * x.shape[i + 1];
  size_t lin = 0;
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    std::vector<double> prefix;
    const int64_t start = static_cast<int64_t>(lin) - idx[static_cast<size_t>(dim)] * strides[dim];
    for (int64_t k = 0; k <= idx[static_cast<size_t>(dim)]; ++k) {
      prefix.push_back(x.data[static_cast<size_t>(start + k * strides[dim])]);
    }
    out.data[lin++] = f(prefix);
  });
  return out;
}

// Softmax along dim from the groups of a running-free formulation.
Ref softmax_ref(const Ref& x, int64_t dim, bool log) {
  const int64_t nd = static_cast<int64_t>(x.shape.size());
  dim = dim < 0 ? dim + nd : dim;
  std::vector<int64_t> strides(static_cast<size_t>(nd), 1);
  for (int64_t i = nd - 2; i >= 0; --i) strides[i] = strides[i + 1] * x.shape[i + 1];
  Ref out(x.shape, std::vector<double>(x.data.size()));
  size_t lin = 0;
  for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t start = static_cast<int64_t>(lin) - idx[static_cast<size_t>(dim)] * strides[dim];
    double m = -kInf, s = 0;
    for (int64_t k = 0; k < x.shape[dim]; ++k) {
      m = std::max(m, x.data[static_cast<size_t>(start + k * strides[dim])]);
    }
    for (int64_t k = 0; k < x.shape[dim]; ++k) {
      s += std::exp(x.data[static_cast<size_t>(start + k * strides[dim])] - m);
    }
    const double v = x.data[lin];
    out.data[lin++] = log ? v - m - std::log(s) : std::exp(v - m) / s;
  });
  return out;
}

double f_sum(const std::vector<double>& v) {
  double s = 0;
  for (double a : v) s += a;
  return s;
}
double f_prod(const std::vector<double>& v) {
  double s = 1;
  for (double a : v) s *= a;
  return s;
}
double f_mean(const std::vector<double>& v) { return f_sum(v) / static_cast<double>(v.size()); }
double f_max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double f_min(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double f_argmax(const std::vector<double>& v) {
  return static_cast<double>(std::max_element(v.begin(), v.end()) - v.begin());
}
double f_argmin(const std::vector<double>& v) {
  return static_cast<double>(std::min_element(v.begin(), v.end()) - v.begin());
}
Fold f_var(int64_t correction) {
  return [correction](const std::vector<double>& v) {
    const double m = f_mean(v);
    double q = 0;
    for (double a : v) q += (a - m) * (a - m);
    return q / std::max(0.0, static_cast<double>(v.size()) - static_cast<double>(correction));
  };
}
Fold f_norm(double p) {
  return [p](const std::vector<double>& v) {
    if (p == kInf || p == -kInf) {
      double r = std::fabs(v[0]);
      for (double a : v) r = p > 0 ? std::max(r, std::fabs(a)) : std::min(r, std::fabs(a));
      return r;
    }
    double s = 0;
    for (double a : v) s += p == 0 ? (a != 0 ? 1.0 : 0.0) : std::pow(std::fabs(a), p);
    return p == 0 ? s : std::pow(s, 1.0 / p);
  };
}
double f_lse(const std::vector<double>& v) {
  const double m = f_max(v);
  double s = 0;
  for (double a : v) s += std::exp(a - m);
  return m + std::log(s);
}
double f_any(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double a) { return a != 0; }) ? 1.0 : 0.0;
}
double f_all(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double a) { return a != 0; }) ? 1.0 : 0.0;
}
double f_last_sum(const std::vector<double>& v) { return f_sum(v); }
double f_last_prod(const std::vector<double>& v) { return f_prod(v); }

const Shape kShape = {3, 4, 5};

// A case whose outputs are the same fold over several (dims, keepdim) choices.
struct DimsChoice {
  std::vector<int64_t> dims;
  bool keepdim;
};

void fold_case(const std::string& name, std::vector<DType> dtypes, Fill fill,
               std::vector<DimsChoice> choices,
               std::function<Tensor(const Tensor&, const std::vector<int64_t>&, bool)> fn,
               Fold ref) {
  register_case({name,
                 std::move(dtypes),
                 {{kShape, fill}},
                 [fn, choices](const TensorList& in) {
                   TensorList out;
                   for (const auto& c : choices) out.push_back(fn(in[0], c.dims, c.keepdim));
                   return out;
                 },
                 [ref, choices](const std::vector<Ref>& in, DType) {
                   std::vector<Ref> out;
                   for (const auto& c : choices) out.push_back(fold(in[0], c.dims, c.keepdim, ref));
                   return out;
                 }});
}

// (values, indices) of max/min along each dim.
void extreme_dim_case(const std::string& name, std::vector<DType> dtypes, bool is_max) {
  register_case({name,
                 std::move(dtypes),
                 {{kShape, Fill::Normal}},
                 [is_max](const TensorList& in) {
                   TensorList out;
                   for (int64_t d : {0, 1, -1}) {
                     auto [v, i] = is_max ? max(in[0], d, d == 1) : min(in[0], d, d == 1);
                     out.push_back(v);
                     out.push_back(i);
                   }
                   return out;
                 },
                 [is_max](const std::vector<Ref>& in, DType) {
                   std::vector<Ref> out;
                   for (int64_t d : {0, 1, -1}) {
                     out.push_back(fold(in[0], {d}, d == 1, is_max ? Fold(f_max) : Fold(f_min)));
                     out.push_back(
                         fold(in[0], {d}, d == 1, is_max ? Fold(f_argmax) : Fold(f_argmin)));
                   }
                   return out;
                 }});
}

EMBER_HARNESS_CASES {
  const auto floats = float_dtypes();
  const auto numeric = numeric_dtypes();
  const auto every = all_dtypes();
  const std::vector<DimsChoice> dim_sets = {
      {{}, false}, {{0}, false}, {{1, 2}, true}, {{-1}, false}, {{2, 0}, false}};

  fold_case(
      "sum", every, Fill::Normal, dim_sets,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return sum(x, d, k); }, f_sum);
  fold_case(
      "mean", floats, Fill::Normal, dim_sets,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return mean(x, d, k); }, f_mean);
  // prod folds one dim (products over all 60 elements leave float16's range).
  fold_case(
      "prod", every, Fill::Normal, {{{0}, false}, {{2}, true}, {{-2}, false}},
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return prod(x, d[0], k); },
      f_prod);
  fold_case(
      "amax", every, Fill::Normal, dim_sets,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return amax(x, d, k); }, f_max);
  fold_case(
      "amin", every, Fill::Normal, dim_sets,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return amin(x, d, k); }, f_min);
  fold_case(
      "max", every, Fill::Normal, {{{}, false}},
      [](const Tensor& x, const std::vector<int64_t>&, bool) { return max(x); }, f_max);
  fold_case(
      "min", every, Fill::Normal, {{{}, false}},
      [](const Tensor& x, const std::vector<int64_t>&, bool) { return min(x); }, f_min);
  extreme_dim_case("max_dim", every, true);
  extreme_dim_case("min_dim", every, false);
  // argmax/argmin: flattened (row-major order of the logical tensor), and along dims.
  for (bool is_max : {true, false}) {
    register_case(
        {is_max ? "argmax" : "argmin",
         numeric,
         {{kShape, Fill::Normal}},
         [is_max](const TensorList& in) {
           auto f =
               is_max
                   ? static_cast<Tensor (*)(const Tensor&, std::optional<int64_t>, bool)>(argmax)
                   : static_cast<Tensor (*)(const Tensor&, std::optional<int64_t>, bool)>(argmin);
           return TensorList{f(in[0], std::nullopt, false), f(in[0], std::nullopt, true),
                             f(in[0], 2, false), f(in[0], 0, true)};
         },
         [is_max](const std::vector<Ref>& in, DType) {
           const Fold f = is_max ? Fold(f_argmax) : Fold(f_argmin);
           return std::vector<Ref>{fold(in[0], {}, false, f), fold(in[0], {}, true, f),
                                   fold(in[0], {2}, false, f), fold(in[0], {0}, true, f)};
         }});
  }
  for (int64_t corr : {1, 0}) {
    const std::string suffix = corr == 1 ? "" : "_correction0";
    fold_case(
        "var" + suffix, floats, Fill::Normal, dim_sets,
        [corr](const Tensor& x, const std::vector<int64_t>& d, bool k) {
          return var(x, d, corr, k);
        },
        f_var(corr));
    fold_case(
        "std" + suffix, floats, Fill::Normal, dim_sets,
        [corr](const Tensor& x, const std::vector<int64_t>& d, bool k) {
          return ember::std(x, d, corr, k);
        },
        [corr](const std::vector<double>& v) { return std::sqrt(f_var(corr)(v)); });
  }
  register_case({"var_mean",
                 floats,
                 {{kShape, Fill::Normal}},
                 [](const TensorList& in) {
                   auto [v, m] = var_mean(in[0], {0, 2}, 1, true);
                   return TensorList{v, m};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{fold(in[0], {0, 2}, true, f_var(1)),
                                           fold(in[0], {0, 2}, true, f_mean)};
                 }});
  for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5}) {
    const std::string name = p == kInf    ? "norm_inf"
                             : p == -kInf ? "norm_neginf"
                                          : "norm_p" + std::to_string(p).substr(0, 3);
    fold_case(
        name, floats, Fill::Normal, dim_sets,
        [p](const Tensor& x, const std::vector<int64_t>& d, bool k) { return norm(x, p, d, k); },
        f_norm(p));
  }
  fold_case(
      "logsumexp", every, Fill::Wide, dim_sets,
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) { return logsumexp(x, d, k); },
      f_lse);
  fold_case(
      "any", every, Fill::Small, {{{}, false}, {{1}, false}, {{2}, true}},
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
        return d.empty() ? any(x) : any(x, d[0], k);
      },
      f_any);
  fold_case(
      "all", every, Fill::Small, {{{}, false}, {{1}, false}, {{2}, true}},
      [](const Tensor& x, const std::vector<int64_t>& d, bool k) {
        return d.empty() ? all(x) : all(x, d[0], k);
      },
      f_all);
  for (bool is_sum : {true, false}) {
    register_case({is_sum ? "cumsum" : "cumprod",
                   every,
                   {{kShape, Fill::Normal}},
                   [is_sum](const TensorList& in) {
                     TensorList out;
                     for (int64_t d : {0, 1, -1}) {
                       out.push_back(is_sum ? cumsum(in[0], d) : cumprod(in[0], d));
                     }
                     return out;
                   },
                   [is_sum](const std::vector<Ref>& in, DType) {
                     std::vector<Ref> out;
                     for (int64_t d : {0, 1, -1}) {
                       out.push_back(
                           running(in[0], d, is_sum ? Fold(f_last_sum) : Fold(f_last_prod)));
                     }
                     return out;
                   }});
  }
  for (bool log : {false, true}) {
    register_case({log ? "log_softmax" : "softmax",
                   floats,
                   {{kShape, Fill::Wide}},
                   [log](const TensorList& in) {
                     TensorList out;
                     for (int64_t d : {0, 1, -1}) {
                       out.push_back(log ? log_softmax(in[0], d) : softmax(in[0], d));
                     }
                     return out;
                   },
                   [log](const std::vector<Ref>& in, DType) {
                     std::vector<Ref> out;
                     for (int64_t d : {0, 1, -1}) out.push_back(softmax_ref(in[0], d, log));
                     return out;
                   }});
  }
}

}  // namespace
}  // namespace ember::harness
