// Normalisation and dropout math, written once for host and device (EMBER_HD): the CPU and CUDA
// kernels of batch_norm, layer_norm, group_norm, rms_norm and dropout share it.
//
// Every normalisation sees its (contiguous) input as (batch, channels, inner) and keeps one
// (mean, rstd) pair per statistic:
//   layer_norm / rms_norm: (rows, normalized numel, 1), one statistic per row
//   group_norm:            (N, C, HW), one per (n, group): contiguous rows of C/G * HW elements
//   batch_norm:            (N, C, HW), one per channel over (N, HW)
// Statistics are float32 (float64 for float64 inputs); weight and bias are indexed by channel.
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/macros.h"
#include "kernels/cast.h"
#include "kernels/philox.h"
#include "kernels/random_ops.h"
#include "kernels/reduce_ops.h"

namespace ember {

struct NormParams {
  int64_t batch = 1, channels = 1, inner = 1;
  int64_t groups = 1;        // row statistics: per (batch, group)
  bool per_channel = false;  // statistics per channel over (batch, inner) (batch norm)
  bool rms = false;          // no mean: rstd = 1 / sqrt(mean(x^2) + eps)
  // Batch norm: the statistics are the batch's own (training), so the input gradient flows
  // through them; false: fixed running statistics (evaluation).
  bool batch_stats = true;
  double eps = 1e-5;
  double momentum = 0.1;  // running-statistic update (batch norm in training)

  EMBER_HD int64_t numel() const { return batch * channels * inner; }
  EMBER_HD int64_t stats() const { return per_channel ? channels : batch * groups; }
  // Elements behind one statistic.
  EMBER_HD int64_t stat_size() const {
    return per_channel ? batch * inner : channels / groups * inner;
  }
  // The statistic of element (b, c, *).
  EMBER_HD int64_t stat_of(int64_t b, int64_t c) const {
    return per_channel ? c : b * groups + c / (channels / groups);
  }
};

namespace nrm {

// The float type statistics and sums are kept in.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class A>
using Welford = rd::VarOp<A, false, A>;

// rstd from a biased variance (or mean square for rms).
template <class A>
EMBER_HD inline A rstd_of(A var, double eps) {
  return A(1) / std::sqrt(var + static_cast<A>(eps));
}

// Mean and rstd from a Welford accumulator (rms: m2 is unused, mean holds mean(x^2)).
template <class A>
EMBER_HD inline void finish_stats(const rd::WelfordAcc<A>& a, double eps, bool rms, A& mean,
                                  A& rstd) {
  if (rms) {
    mean = A(0);
    rstd = rstd_of<A>(a.mean, eps);
  } else {
    mean = a.mean;
    rstd = rstd_of<A>(a.n > A(0) ? a.m2 / a.n : A(0), eps);
  }
}

// running = (1 - momentum) * running + momentum * batch, with the unbiased variance.
template <class A>
EMBER_HD inline void update_running(A mean, A var_biased, A n, double momentum, A& running_mean,
                                    A& running_var) {
  const A m = static_cast<A>(momentum);
  const A unbiased = n > A(1) ? var_biased * n / (n - A(1)) : var_biased;
  running_mean = (A(1) - m) * running_mean + m * mean;
  running_var = (A(1) - m) * running_var + m * unbiased;
}

// y = (x - mean) * rstd * w + b.
template <class A>
EMBER_HD inline A normalize(A x, A mean, A rstd, A w, A b) {
  return (x - mean) * rstd * w + b;
}

// Two sums at once (the backward's sum of g and of g * xhat).
template <class A>
struct Sum2 {
  A a, b;
};
template <class A>
struct Sum2Op {
  using acc_t = Sum2<A>;
  EMBER_HD acc_t init() const { return {A(0), A(0)}; }
  EMBER_HD acc_t combine(acc_t x, acc_t y) const { return {x.a + y.a, x.b + y.b}; }
};

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w; the mean term is absent for
// rms. With fixed statistics (batch norm in evaluation) dx = rstd * g.
template <class A>
EMBER_HD inline A grad_input(A g, A xhat, A rstd, A mean_g, A mean_gx, bool rms, bool batch_stats) {
  if (!batch_stats) return rstd * g;
  return rstd * (g - (rms ? A(0) : mean_g) - xhat * mean_gx);
}

// ---- dropout ------------------------------------------------------------------------------------

// Elements of one Philox block, laid out as bernoulli's: element i comes from block i / per.
template <class T>
EMBER_HD constexpr int dropout_per_block() {
  return rnd::per_block<RandomOp::Bernoulli, T>();
}

// Whether element j of a block is kept: bernoulli(1 - p)'s draw for the same element.
template <class T>
EMBER_HD inline bool dropout_keep(const philox::Words& w, int j, double keep_prob) {
  return rnd::bernoulli_unit<T>(w, j) < keep_prob;
}

}  // namespace nrm
}  // namespace ember
