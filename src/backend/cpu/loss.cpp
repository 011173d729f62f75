// CPU softmax cross-entropy and nll over contiguous rows: per row a max pass and one pass summing
// exp(x - max) together with the weighted sum of the row (label smoothing), in the accumulation
// precision (float32 for 16-bit floats); the backward writes each row in one pass.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember {

namespace {

using rd::nan_max;

inline int64_t rows_grain(int64_t c) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, 2 * c));
}

[[noreturn]] void target_out_of_bounds(const CrossEntropyParams& p, int64_t t) {
  throw IndexError(std::string("[") + p.op + "] Target " + std::to_string(t) +
                   " is out of bounds.");
}

template <class T>
struct RowArgs {
  const T* x;
  const int64_t* target;
  const T* w;  // null: every class weighs 1
  int64_t m, c;
};

template <class T>
EMBER_CPU_CLONES void cross_entropy_rows(const RowArgs<T>& a, compute_t<T>* loss,
                                         compute_t<T>* row_w, compute_t<T>* lse, compute_t<T> wsum,
                                         const CrossEntropyParams& p, int64_t begin, int64_t end) {
  using A = compute_t<T>;
  const int64_t c = a.c;
  const A eps = static_cast<A>(p.label_smoothing);
  for (int64_t i = begin; i < end; ++i) {
    const T* x = a.x + i * c;
    const int64_t t = a.target[i];
    if (t == p.ignore_index) {
      loss[i] = A(0);
      row_w[i] = A(0);
      lse[i] = A(0);
      continue;
    }
    if (t < 0 || t >= c) target_out_of_bounds(p, t);
    const A wt = a.w ? static_cast<A>(a.w[t]) : A(1);
    row_w[i] = wt;
    if (!p.from_logits) {
      loss[i] = -wt * static_cast<A>(x[t]);
      lse[i] = A(0);
      continue;
    }
    A mx = -std::numeric_limits<A>::infinity();
    for (int64_t j = 0; j < c; ++j) mx = nan_max(mx, static_cast<A>(x[j]));
    A s = 0, wx = 0;
    for (int64_t j = 0; j < c; ++j) {
      const A v = static_cast<A>(x[j]);
      s += rd::softmax_exp<A>(v - mx);
      if (eps != A(0)) wx += (a.w ? static_cast<A>(a.w[j]) : A(1)) * v;
    }
    // An infinite maximum makes the row NaN, as log_softmax does.
    const A l = mx == std::numeric_limits<A>::infinity() ? std::numeric_limits<A>::quiet_NaN()
                                                         : mx + std::log(s);
    lse[i] = l;
    A r = (A(1) - eps) * wt * (l - static_cast<A>(x[t]));
    if (eps != A(0)) r += eps / static_cast<A>(c) * (wsum * l - wx);
    loss[i] = r;
  }
}

template <class T>
EMBER_CPU_CLONES void cross_entropy_backward_rows(const RowArgs<T>& a, T* gx, const compute_t<T>* g,
                                                  int64_t g_stride, const compute_t<T>* lse,
                                                  compute_t<T> wsum, const CrossEntropyParams& p,
                                                  int64_t begin, int64_t end) {
  using A = compute_t<T>;
  const int64_t c = a.c;
  const A eps = static_cast<A>(p.label_smoothing);
  for (int64_t i = begin; i < end; ++i) {
    const T* x = a.x + i * c;
    T* y = gx + i * c;
    const int64_t t = a.target[i];
    if (t == p.ignore_index || t < 0 || t >= c) {
      std::fill(y, y + c, cast<T>(A(0)));
      continue;
    }
    const A gi = g[i * g_stride];
    const A wt = a.w ? static_cast<A>(a.w[t]) : A(1);
    if (!p.from_logits) {
      std::fill(y, y + c, cast<T>(A(0)));
      y[t] = cast<T>(-wt * gi);
      continue;
    }
    // d/dx_j = (1 - e) w_t (p_j - [j = t]) + e / C (W p_j - w_j), times g_i.
    const A l = lse[i];
    const A k1 = (A(1) - eps) * wt + eps / static_cast<A>(c) * wsum;
    const A k2 = eps / static_cast<A>(c);
    for (int64_t j = 0; j < c; ++j) {
      const A pj = rd::softmax_exp<A>(static_cast<A>(x[j]) - l);
      const A wj = a.w ? static_cast<A>(a.w[j]) : A(1);
      y[j] = cast<T>(gi * (k1 * pj - k2 * wj));
    }
    y[t] = cast<T>(static_cast<A>(y[t]) - gi * (A(1) - eps) * wt);
  }
}

template <class T>
RowArgs<T> row_args(const Tensor& input, const Tensor& target, const Tensor& weight) {
  return {static_cast<const T*>(input.data_ptr()), static_cast<const int64_t*>(target.data_ptr()),
          weight.defined() ? static_cast<const T*>(weight.data_ptr()) : nullptr, input.size(0),
          input.size(1)};
}

template <class A>
A weight_total(const Tensor& weight_sum, int64_t c) {
  if (!weight_sum.defined()) return static_cast<A>(c);
  return *static_cast<const A*>(weight_sum.data_ptr());
}

}  // namespace

void CpuBackend::cross_entropy(const Tensor& loss, const Tensor& row_weight, const Tensor& lse,
                               const Tensor& input, const Tensor& target, const Tensor& weight,
                               const Tensor& weight_sum, const CrossEntropyParams& p) {
  const int64_t m = input.size(0);
  if (m == 0) return;
  visit_float_dtype(input.dtype(), p.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const RowArgs<T> a = row_args<T>(input, target, weight);
    const A wsum = weight_total<A>(weight_sum, a.c);
    A* lp = static_cast<A*>(loss.data_ptr());
    A* wp = static_cast<A*>(row_weight.data_ptr());
    A* sp = static_cast<A*>(lse.data_ptr());
    parallel_for(m, rows_grain(a.c), [&](int64_t begin, int64_t end) {
      cross_entropy_rows<T>(a, lp, wp, sp, wsum, p, begin, end);
    });
  });
}

void CpuBackend::cross_entropy_backward(const Tensor& grad_input, const Tensor& grad_rows,
                                        const Tensor& input, const Tensor& lse,
                                        const Tensor& target, const Tensor& weight,
                                        const Tensor& weight_sum, const CrossEntropyParams& p) {
  const int64_t m = input.size(0);
  if (m == 0 || input.size(1) == 0) return;
  visit_float_dtype(input.dtype(), p.op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const RowArgs<T> a = row_args<T>(input, target, weight);
    const A wsum = weight_total<A>(weight_sum, a.c);
    T* gx = static_cast<T*>(grad_input.data_ptr());
    const A* g = static_cast<const A*>(grad_rows.data_ptr());
    const int64_t gs = grad_rows.stride(0);
    const A* sp = static_cast<const A*>(lse.data_ptr());
    parallel_for(m, rows_grain(a.c), [&](int64_t begin, int64_t end) {
      cross_entropy_backward_rows<T>(a, gx, g, gs, sp, wsum, p, begin, end);
    });
  });
}

}  // namespace ember
