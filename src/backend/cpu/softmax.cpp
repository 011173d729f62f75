// CPU softmax and log_softmax: per row a max pass, a pass summing exp(x - max) and a writing
// pass, computed in float32 for the 16-bit floats, with an exp the compiler vectorises.
#include <algorithm>
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "backend/geometry.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember {

namespace {

// Columns handled together when softmax runs along a non-innermost dim.
constexpr int64_t kBlock = 1024;
// Exps summed in compute precision before being added to a double total (long rows stay exact).
constexpr int64_t kSumBlock = 2048;

using rd::nan_max;

inline int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, work));
}

// One contiguous row of n elements.
template <class T, bool Log>
EMBER_CPU_CLONES void softmax_row(const T* x, T* y, int64_t n) {
  using C = compute_t<T>;
  constexpr int L = 32;  // long enough to stay a loop the vectoriser takes
  // Exps can be kept in y (and scaled later) only when y holds compute precision.
  constexpr bool kStore = !Log && std::is_same_v<T, C>;

  C mv[L];
  for (int k = 0; k < L; ++k) mv[k] = -std::numeric_limits<C>::infinity();
  int64_t i = 0;
  for (; i + L <= n; i += L) {
    for (int k = 0; k < L; ++k) mv[k] = nan_max(mv[k], static_cast<C>(x[i + k]));
  }
  for (; i < n; ++i) mv[0] = nan_max(mv[0], static_cast<C>(x[i]));
  C m = mv[0];
  for (int k = 1; k < L; ++k) m = nan_max(m, mv[k]);

  double total = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kSumBlock) {
    const int64_t b1 = std::min(n, b0 + kSumBlock);
    C sv[L] = {};
    for (i = b0; i + L <= b1; i += L) {
      for (int k = 0; k < L; ++k) {
        const C e = rd::softmax_exp<C>(static_cast<C>(x[i + k]) - m);
        sv[k] += e;
        if constexpr (kStore) y[i + k] = e;
      }
    }
    for (; i < b1; ++i) {
      const C e = rd::softmax_exp<C>(static_cast<C>(x[i]) - m);
      sv[0] += e;
      if constexpr (kStore) y[i] = e;
    }
    C s = 0;
    for (int k = 0; k < L; ++k) s += sv[k];
    total += static_cast<double>(s);
  }

  if constexpr (Log) {
    const C ls = static_cast<C>(std::log(total));
    for (i = 0; i < n; ++i) y[i] = cast<T>((static_cast<C>(x[i]) - m) - ls);
  } else if constexpr (kStore) {
    const C inv = static_cast<C>(1.0 / total);
    for (i = 0; i < n; ++i) y[i] = y[i] * inv;
  } else {
    const C inv = static_cast<C>(1.0 / total);
    for (i = 0; i < n; ++i) y[i] = cast<T>(rd::softmax_exp<C>(static_cast<C>(x[i]) - m) * inv);
  }
}

// Softmax along the middle dim of (outer, n, inner) for columns [j0, j0 + nb) of one outer.
template <class T, bool Log>
EMBER_CPU_CLONES void softmax_columns(const T* x, T* y, int64_t n, int64_t inner, int64_t nb) {
  using C = compute_t<T>;
  constexpr bool kStore = !Log && std::is_same_v<T, C>;
  C mx[kBlock], sm[kBlock];
  for (int64_t j = 0; j < nb; ++j) {
    mx[j] = -std::numeric_limits<C>::infinity();
    sm[j] = C(0);
  }
  const T* row = x;
  for (int64_t i = 0; i < n; ++i, row += inner) {
    for (int64_t j = 0; j < nb; ++j) mx[j] = nan_max(mx[j], static_cast<C>(row[j]));
  }
  row = x;
  T* out = y;
  for (int64_t i = 0; i < n; ++i, row += inner, out += inner) {
    for (int64_t j = 0; j < nb; ++j) {
      const C e = rd::softmax_exp<C>(static_cast<C>(row[j]) - mx[j]);
      sm[j] += e;
      if constexpr (kStore) out[j] = e;
    }
  }
  for (int64_t j = 0; j < nb; ++j) sm[j] = Log ? std::log(sm[j]) : C(1) / sm[j];
  row = x;
  out = y;
  for (int64_t i = 0; i < n; ++i, row += inner, out += inner) {
    for (int64_t j = 0; j < nb; ++j) {
      if constexpr (Log) {
        out[j] = cast<T>((static_cast<C>(row[j]) - mx[j]) - sm[j]);
      } else if constexpr (kStore) {
        out[j] = out[j] * sm[j];
      } else {
        out[j] = cast<T>(rd::softmax_exp<C>(static_cast<C>(row[j]) - mx[j]) * sm[j]);
      }
    }
  }
}

template <class T, bool Log>
void run_softmax(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  if (inner == 1) {
    parallel_for(outer, grain_for(3 * n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) softmax_row<T, Log>(x + o * n, y + o * n, n);
    });
    return;
  }
  const int64_t nbk = (inner + kBlock - 1) / kBlock;
  parallel_for(
      outer * nbk, grain_for(3 * n * std::min(inner, kBlock)), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t o = t / nbk, j0 = (t % nbk) * kBlock;
          const int64_t off = o * n * inner + j0;
          softmax_columns<T, Log>(x + off, y + off, n, inner, std::min(kBlock, inner - j0));
        }
      });
}

}  // namespace

void CpuBackend::softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) {
  if (out.numel() == 0) return;
  if (!is_floating_point(out.dtype())) {
    throw TypeError(std::string(log ? "[log_softmax]" : "[softmax]") +
                    " not implemented for dtype " + std::string(dtype_name(out.dtype())));
  }
  const Tensor x = in.dtype() == out.dtype() ? in.contiguous() : in.to(out.dtype()).contiguous();
  Tensor y = out.is_contiguous() ? out : make_empty(out.sizes(), TensorOptions(out.dtype()));
  const auto [outer, n, inner] = split_at_dim(x.sizes(), dim);
  // Structured bindings captured by copy: clang before 16 cannot capture them by reference.
  visit_float_dtype(out.dtype(), log ? "log_softmax" : "softmax",
                    [&, outer = outer, n = n, inner = inner](auto tag) {
                      using T = typename decltype(tag)::type;
                      const T* xp = static_cast<const T*>(x.data_ptr());
                      T* yp = static_cast<T*>(y.data_ptr());
                      if (log)
                        run_softmax<T, true>(xp, yp, outer, n, inner);
                      else
                        run_softmax<T, false>(xp, yp, outer, n, inner);
                    });
  if (!y.is_same(out)) Tensor(out).copy_(y);
}

}  // namespace ember
