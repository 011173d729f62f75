// CPU reductions (sum, max, var, norms, ...), max/min with indices, and cumulative scans.
// Any strided reduction is first rewritten as outputs x reduced positions; then either each
// output folds contiguous runs with several independent accumulators ("inner"), or blocks of
// adjacent outputs accumulate whole input rows ("outer", contiguous along the outputs).
// A long reduction with few outputs is split into fixed-size chunks whose partials are combined.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "backend/geometry.h"
#include "backend/reduce_checks.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember {

namespace {

constexpr int kMaxDims = 16;
// Elements of one partial when a reduction is split; fixed (not per thread count) so results do
// not depend on how many threads run.
constexpr int64_t kChunk = 65536;
// Adjacent outputs accumulated together in the outer layout (whole rows of up to 4 KiB of
// float32 stream better than short row pieces).
constexpr int64_t kBlock = 1024;
// Independent accumulators over a contiguous run: a loop this long is vectorised by the loop
// vectoriser (a fully unrolled short one is left to SLP, which gives up on selects).
constexpr int kLanes = 32;
// Split the reduced range only when there are fewer independent tasks than this.
constexpr int64_t kFewTasks = 32;

using Geometry = ReduceLayout;

// A multi-index over n dims that tracks two linear offsets as it advances.
struct Walker {
  int n = 0;
  const int64_t* size = nullptr;
  const int64_t* s0 = nullptr;
  const int64_t* s1 = nullptr;
  int64_t idx[kMaxDims];
  int64_t off0 = 0, off1 = 0;

  Walker(int n_, const int64_t* size_, const int64_t* s0_, const int64_t* s1_)
      : n(n_), size(size_), s0(s0_), s1(s1_) {}
  void seek(int64_t linear) {
    off0 = off1 = 0;
    for (int d = n - 1; d >= 0; --d) {
      idx[d] = linear % size[d];
      linear /= size[d];
      off0 += idx[d] * s0[d];
      off1 += idx[d] * s1[d];
    }
  }
  void next() {
    for (int d = n - 1; d >= 0; --d) {
      off0 += s0[d];
      off1 += s1[d];
      if (++idx[d] < size[d]) return;
      off0 -= size[d] * s0[d];
      off1 -= size[d] * s1[d];
      idx[d] = 0;
    }
  }
};

// Calls fn(in_offset, len) for reduced positions [a, b) in order, as runs along the innermost
// reduced dim (consecutive positions of a run are g.rin[nr - 1] elements apart).
template <class Fn>
void walk_reduced(const Geometry& g, int64_t a, int64_t b, Fn&& fn) {
  if (b <= a) return;
  const int64_t len_inner = g.rs[g.nr - 1];
  const int64_t step = g.rin[g.nr - 1];
  Walker w(g.nr - 1, g.rs, g.rin, g.rin);
  w.seek(a / len_inner);
  int64_t inner = a % len_inner;
  for (int64_t pos = a; pos < b;) {
    const int64_t len = std::min(len_inner - inner, b - pos);
    fn(w.off0 + inner * step, len);
    pos += len;
    inner = 0;
    if (pos < b) w.next();
  }
}

template <class F>
inline constexpr bool is_welford_v = false;
template <class C, bool S, class A>
inline constexpr bool is_welford_v<rd::VarOp<C, S, A>> = true;
template <class F>
inline constexpr bool is_lse_v = false;
template <class C, class A>
inline constexpr bool is_lse_v<rd::LogSumExpOp<C, A>> = true;

// Log-sum-exp of a contiguous run per block: a vectorised max, then a vectorised sum of
// exp(x - max) (float exp for float inputs), merged into the running (max, sum).
template <class F, class T>
EMBER_CPU_CLONES typename F::acc_t lse_run(const F& op, const T* x, int64_t n) {
  using C = compute_t<T>;
  constexpr int64_t B = 1024;
  const C inf = std::numeric_limits<C>::infinity();
  typename F::acc_t acc = op.init();
  for (int64_t b0 = 0; b0 < n; b0 += B) {
    const int64_t m = std::min(B, n - b0);
    const T* p = x + b0;
    C mv[kLanes];
    for (int k = 0; k < kLanes; ++k) mv[k] = -inf;
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) mv[k] = rd::nan_max(mv[k], static_cast<C>(p[i + k]));
    }
    for (; i < m; ++i) mv[0] = rd::nan_max(mv[0], static_cast<C>(p[i]));
    C mx = mv[0];
    for (int k = 1; k < kLanes; ++k) mx = rd::nan_max(mx, mv[k]);
    if (mx != mx) return op.combine(acc, {static_cast<double>(mx), static_cast<double>(mx)});
    if (mx == -inf) continue;  // exp of every element is 0
    if (mx == inf) {
      acc = op.combine(acc, {static_cast<double>(mx), 1.0});
      continue;
    }
    C sv[kLanes] = {};
    for (i = 0; i + kLanes <= m; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) sv[k] += rd::softmax_exp<C>(static_cast<C>(p[i + k]) - mx);
    }
    for (; i < m; ++i) sv[0] += rd::softmax_exp<C>(static_cast<C>(p[i]) - mx);
    double sum = 0;
    for (int k = 0; k < kLanes; ++k) sum += static_cast<double>(sv[k]);
    acc = op.combine(acc, {static_cast<double>(mx), sum});
  }
  return acc;
}

// Mean and squared deviations of a contiguous run by two passes per L1-sized block, merged with
// Chan's formula: as exact as two-pass, one trip through memory, and vectorisable.
template <class F, class T>
typename F::acc_t welford_run(const F& op, const T* x, int64_t n) {
  using C = compute_t<T>;
  constexpr int L = kLanes;
  constexpr int64_t B = 512;
  typename F::acc_t acc = op.init();
  for (int64_t b0 = 0; b0 < n; b0 += B) {
    const int64_t m = std::min(B, n - b0);
    const T* p = x + b0;
    double s[L] = {};
    int64_t i = 0;
    for (; i + L <= m; i += L) {
      for (int k = 0; k < L; ++k) s[k] += static_cast<double>(static_cast<C>(p[i + k]));
    }
    for (; i < m; ++i) s[0] += static_cast<double>(static_cast<C>(p[i]));
    double sum = 0;
    for (int k = 0; k < L; ++k) sum += s[k];
    const double mean = sum / static_cast<double>(m);
    double q[L] = {};
    for (i = 0; i + L <= m; i += L) {
      for (int k = 0; k < L; ++k) {
        const double dlt = static_cast<double>(static_cast<C>(p[i + k])) - mean;
        q[k] += dlt * dlt;
      }
    }
    for (; i < m; ++i) {
      const double dlt = static_cast<double>(static_cast<C>(p[i])) - mean;
      q[0] += dlt * dlt;
    }
    double m2 = 0;
    for (int k = 0; k < L; ++k) m2 += q[k];
    acc = op.combine(acc, {mean, m2, static_cast<double>(m)});
  }
  return acc;
}

// Folds n elements s apart; contiguous runs use L independent accumulators so the loop
// vectorises and the additions are spread (better accuracy too).
template <class F, class T>
typename F::acc_t reduce_run(const F& op, const T* x, int64_t n, int64_t s) {
  using A = typename F::acc_t;
  using C = compute_t<T>;
  if (s == 1) {
    if constexpr (is_welford_v<F>) {
      return welford_run(op, x, n);
    } else if constexpr (is_lse_v<F>) {
      return lse_run(op, x, n);
    } else {
      constexpr int L = kLanes;
      if (n >= 2 * L) {
        A acc[L];
        for (int k = 0; k < L; ++k) acc[k] = op.init();
        int64_t i = 0;
        for (; i + L <= n; i += L) {
          for (int k = 0; k < L; ++k) acc[k] = op.reduce(acc[k], static_cast<C>(x[i + k]));
        }
        for (; i < n; ++i) acc[0] = op.reduce(acc[0], static_cast<C>(x[i]));
        for (int w = L / 2; w > 0; w /= 2) {
          for (int k = 0; k < w; ++k) acc[k] = op.combine(acc[k], acc[k + w]);
        }
        return acc[0];
      }
    }
  }
  A a = op.init();
  for (int64_t i = 0; i < n; ++i) a = op.reduce(a, static_cast<C>(x[i * s]));
  return a;
}

// How a reduction's work is cut into parallel items.
struct Plan {
  bool outer;         // blocks of adjacent outputs accumulate rows
  int64_t tasks;      // outputs (inner) or output blocks (outer)
  int64_t width;      // outputs per task
  int64_t n_chunks;   // pieces of the reduced range per task
  int64_t chunk_len;  // reduced positions per piece
};

Plan make_plan(const Geometry& g, bool allow_outer) {
  Plan p;
  p.outer = allow_outer && g.nk > 0 && g.kin[g.nk - 1] == 1 && g.rin[g.nr - 1] != 1;
  if (p.outer) {
    const int64_t k = g.ks[g.nk - 1];
    p.width = std::min(k, kBlock);
    p.tasks = (g.n_out / k) * ((k + kBlock - 1) / kBlock);
  } else {
    p.width = 1;
    p.tasks = g.n_out;
  }
  p.n_chunks = 1;
  p.chunk_len = g.n_red;
  if (p.tasks < kFewTasks && g.n_red * p.width >= 2 * kChunk) {
    p.chunk_len = std::max<int64_t>(1, kChunk / p.width);
    p.n_chunks = (g.n_red + p.chunk_len - 1) / p.chunk_len;
  }
  return p;
}

inline int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, work_per_item));
}

// Runs compute(task, begin, end, acc, &out_offset, &count) over every task and stores the
// results: whole reductions when the plan has one chunk, otherwise partials per (task, chunk)
// combined in chunk order, so results do not depend on the thread count.
template <class A, class Op, class Compute, class Store>
void run_planned(const Plan& pl, int64_t n_red, const Op& op, Compute& compute, Store& store) {
  if (pl.n_chunks == 1) {
    parallel_for(pl.tasks, grain_for(n_red * pl.width), [&](int64_t begin, int64_t end) {
      A acc[kBlock];
      for (int64_t t = begin; t < end; ++t) {
        int64_t off, nb;
        compute(t, 0, n_red, acc, &off, &nb);
        store(acc, off, nb);
      }
    });
    return;
  }
  const int64_t items = pl.tasks * pl.n_chunks;
  std::unique_ptr<A[]> part(new A[static_cast<size_t>(items * pl.width)]);
  std::vector<int64_t> offs(static_cast<size_t>(pl.tasks)), nbs(static_cast<size_t>(pl.tasks));
  parallel_for(items, grain_for(pl.chunk_len * pl.width), [&](int64_t begin, int64_t end) {
    for (int64_t it = begin; it < end; ++it) {
      const int64_t t = it / pl.n_chunks, c = it % pl.n_chunks;
      const int64_t a = c * pl.chunk_len, b = std::min(n_red, a + pl.chunk_len);
      int64_t off, nb;
      compute(t, a, b, part.get() + it * pl.width, &off, &nb);
      if (c == 0) {
        offs[t] = off;
        nbs[t] = nb;
      }
    }
  });
  for (int64_t t = 0; t < pl.tasks; ++t) {
    A* acc = part.get() + t * pl.n_chunks * pl.width;
    for (int64_t c = 1; c < pl.n_chunks; ++c) {
      const A* p = acc + c * pl.width;
      for (int64_t j = 0; j < nbs[t]; ++j) acc[j] = op.combine(acc[j], p[j]);
    }
    store(acc, offs[t], nbs[t]);
  }
}

// ---- reduce -------------------------------------------------------------------------------------

// Column sums of float rows into double accumulators (bias gradients): the generic loop's
// additions in its order, so the same bits, with clones that convert and add 4 or 8 doubles a
// vector instead of SSE2's 2.
EMBER_CPU_CLONES_WIDE void sum_rows_f32(double* __restrict acc, const float* __restrict row,
                                        int64_t rstep, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r, row += rstep) {
    for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<double>(row[j]);
  }
}

template <class F, class T, class O>
void run_reduce(const F& op, const Geometry& g, const T* in, O* out) {
  using A = typename F::acc_t;
  using C = compute_t<T>;
  const Plan pl = make_plan(g, true);
  const int64_t k_inner = pl.outer ? g.ks[g.nk - 1] : 1;
  const int64_t nbk = pl.outer ? (k_inner + kBlock - 1) / kBlock : 1;
  const int64_t rstep = g.rin[g.nr - 1];

  // Accumulates reduced positions [a, b) of task t into acc[0 .. width).
  auto compute = [&](int64_t t, int64_t a, int64_t b, A* acc, int64_t* out_off, int64_t* nb) {
    if (!pl.outer) {
      Walker w(g.nk, g.ks, g.kin, g.kout);
      w.seek(t);
      A r = op.init();
      walk_reduced(g, a, b, [&](int64_t off, int64_t len) {
        r = op.combine(r, reduce_run(op, in + w.off0 + off, len, rstep));
      });
      acc[0] = r;
      *out_off = w.off1;
      *nb = 1;
      return;
    }
    Walker w(g.nk - 1, g.ks, g.kin, g.kout);
    w.seek(t / nbk);
    const int64_t j0 = (t % nbk) * kBlock;
    const int64_t n = std::min(kBlock, k_inner - j0);
    const T* base = in + w.off0 + j0;
    if constexpr (is_welford_v<F>) {
      // Welford per column with the count shared by the block: one division per row.
      double mean[kBlock], m2[kBlock];
      for (int64_t j = 0; j < n; ++j) mean[j] = m2[j] = 0.0;
      double cnt = 0.0;
      walk_reduced(g, a, b, [&](int64_t off, int64_t len) {
        const T* row = base + off;
        for (int64_t r = 0; r < len; ++r, row += rstep) {
          cnt += 1.0;
          const double inv = 1.0 / cnt;
          for (int64_t j = 0; j < n; ++j) {
            const double v = static_cast<double>(static_cast<C>(row[j]));
            const double d = v - mean[j];
            mean[j] += d * inv;
            m2[j] += d * (v - mean[j]);
          }
        }
      });
      for (int64_t j = 0; j < n; ++j) acc[j] = {mean[j], m2[j], cnt};
    } else {
      for (int64_t j = 0; j < n; ++j) acc[j] = op.init();
      walk_reduced(g, a, b, [&](int64_t off, int64_t len) {
        const T* row = base + off;
        if constexpr (std::is_same_v<F, rd::SumOp<float, double>> && std::is_same_v<T, float>) {
          sum_rows_f32(acc, row, rstep, len, n);
        } else {
          for (int64_t r = 0; r < len; ++r, row += rstep) {
            for (int64_t j = 0; j < n; ++j) acc[j] = op.reduce(acc[j], static_cast<C>(row[j]));
          }
        }
      });
    }
    *out_off = w.off1 + j0 * g.kout[g.nk - 1];
    *nb = n;
  };
  const int64_t ostep = pl.outer ? g.kout[g.nk - 1] : 0;
  auto store = [&](const A* acc, int64_t out_off, int64_t nb) {
    for (int64_t j = 0; j < nb; ++j) out[out_off + j * ostep] = cast<O>(op.project(acc[j]));
  };

  if (pl.n_chunks == 1) {
    if (!pl.outer) {
      // One walker per thread range: no index division per output.
      parallel_for(pl.tasks, grain_for(g.n_red), [&](int64_t begin, int64_t end) {
        Walker w(g.nk, g.ks, g.kin, g.kout);
        w.seek(begin);
        for (int64_t o = begin; o < end; ++o, w.next()) {
          A r = op.init();
          walk_reduced(g, 0, g.n_red, [&](int64_t off, int64_t len) {
            r = op.combine(r, reduce_run(op, in + w.off0 + off, len, rstep));
          });
          out[w.off1] = cast<O>(op.project(r));
        }
      });
      return;
    }
  }
  run_planned<A>(pl, g.n_red, op, compute, store);
}

// ---- max/min with index -------------------------------------------------------------------------

// Columns [0, n) of rows row, row + rstep, ... (rows of them): the first extreme of each column.
template <class T, bool IsMax, class I>
void outer_arg_block(const T* row, int64_t rstep, int64_t rows, int64_t n, int64_t base,
                     rd::ArgAcc<compute_t<T>>* acc) {
  using C = compute_t<T>;
  C best[kBlock];
  I bi[kBlock];
  for (int64_t j = 0; j < n; ++j) {
    best[j] = static_cast<C>(row[j]);
    bi[j] = 0;
  }
  row += rstep;
  for (int64_t r = 1; r < rows; ++r, row += rstep) {
    const I ri = static_cast<I>(r);
    for (int64_t j = 0; j < n; ++j) {
      const C v = static_cast<C>(row[j]);
      const bool take = rd::arg_better<C, IsMax>(v, best[j]);
      best[j] = rd::pick(take, v, best[j]);
      bi[j] = take ? ri : bi[j];
    }
  }
  for (int64_t j = 0; j < n; ++j) acc[j] = {best[j], base + static_cast<int64_t>(bi[j])};
}

template <class T, bool IsMax>
void run_arg_reduce(const Geometry& g, const T* in, T* values, int64_t* indices) {
  using C = compute_t<T>;
  using Op = rd::ArgOp<C, IsMax>;
  using A = typename Op::acc_t;
  const Op op;
  const Plan pl = make_plan(g, true);
  const int64_t k_inner = pl.outer ? g.ks[g.nk - 1] : 1;
  const int64_t nbk = pl.outer ? (k_inner + kBlock - 1) / kBlock : 1;
  const int64_t rstep = g.rin[0];  // one reduced dim (or the size-1 placeholder)

  auto compute = [&](int64_t t, int64_t a, int64_t b, A* acc, int64_t* out_off, int64_t* nb) {
    if (!pl.outer) {
      Walker w(g.nk, g.ks, g.kin, g.kout);
      w.seek(t);
      const T* x = in + w.off0;
      A r = op.init();
      if (rstep == 1 && b - a >= 2 * kLanes) {
        // The extreme by a vectorised pass, then the first position holding it.
        using E = rd::ExtremeOp<C, IsMax>;
        const C best = reduce_run(E(), x + a, b - a, 1);
        int64_t i = a;
        if (best != best) {
          while (!(static_cast<C>(x[i]) != static_cast<C>(x[i]))) ++i;
        } else {
          while (!(static_cast<C>(x[i]) == best)) ++i;
        }
        r = {static_cast<C>(x[i]), i};
      } else if (rstep == 1) {
        for (int64_t i = a; i < b; ++i) r = op.reduce(r, static_cast<C>(x[i]), i);
      } else {
        for (int64_t i = a; i < b; ++i) r = op.reduce(r, static_cast<C>(x[i * rstep]), i);
      }
      acc[0] = r;
      *out_off = w.off1;
      *nb = 1;
      return;
    }
    Walker w(g.nk - 1, g.ks, g.kin, g.kout);
    w.seek(t / nbk);
    const int64_t j0 = (t % nbk) * kBlock;
    const int64_t n = std::min(kBlock, k_inner - j0);
    const T* row = in + w.off0 + j0 + a * rstep;
    if (b - a <= INT32_MAX) {
      // Row numbers relative to a fit 32 bits, the width of a float mask: the select vectorises.
      outer_arg_block<T, IsMax, int32_t>(row, rstep, b - a, n, a, acc);
    } else {
      outer_arg_block<T, IsMax, int64_t>(row, rstep, b - a, n, a, acc);
    }
    *out_off = w.off1 + j0 * g.kout[g.nk - 1];
    *nb = n;
  };
  const int64_t ostep = pl.outer ? g.kout[g.nk - 1] : 0;
  auto store = [&](const A* acc, int64_t out_off, int64_t nb) {
    for (int64_t j = 0; j < nb; ++j) {
      values[out_off + j * ostep] = cast<T>(acc[j].value);
      indices[out_off + j * ostep] = acc[j].index;
    }
  };

  run_planned<A>(pl, g.n_red, op, compute, store);
}

// ---- scans --------------------------------------------------------------------------------------

// in and out contiguous, viewed as (outer, n, inner); accumulates in double / int64.
template <class T, ScanOp Op>
void run_scan(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using F = rd::ScanFn<C, Op>;
  using A = typename F::acc_t;
  const F f;
  if (inner == 1) {
    parallel_for(outer, grain_for(n), [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* x = in + o * n;
        T* y = out + o * n;
        A acc = f.init();
        for (int64_t i = 0; i < n; ++i) {
          acc = f.step(acc, static_cast<C>(x[i]));
          y[i] = cast<T>(acc);
        }
      }
    });
    return;
  }
  const int64_t nbk = (inner + kBlock - 1) / kBlock;
  parallel_for(outer * nbk, grain_for(n * std::min(inner, kBlock)),
               [&](int64_t begin, int64_t end) {
                 A acc[kBlock];
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t o = t / nbk, j0 = (t % nbk) * kBlock;
                   const int64_t nb = std::min(kBlock, inner - j0);
                   for (int64_t j = 0; j < nb; ++j) acc[j] = f.init();
                   const T* x = in + o * n * inner + j0;
                   T* y = out + o * n * inner + j0;
                   for (int64_t i = 0; i < n; ++i, x += inner, y += inner) {
                     for (int64_t j = 0; j < nb; ++j) {
                       acc[j] = f.step(acc[j], static_cast<C>(x[j]));
                       y[j] = cast<T>(acc[j]);
                     }
                   }
                 }
               });
}

}  // namespace

void CpuBackend::reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) {
  if (out.numel() == 0) return;
  check_reduce_operands(op, out, in);
  const Geometry g = make_reduce_layout("reduce", out, in);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    visit_reduce(op, [&](auto oc) {
      constexpr ReduceOp O = decltype(oc)::value;
      if constexpr (reduce_float_only(O) && !std::is_floating_point_v<C>) {
        missing("reduce");
      } else {
        using F = reduce_functor_t<O, C>;
        const F f(p.p, p.correction, g.n_red);
        const T* x = static_cast<const T*>(in.data_ptr());
        if constexpr (O == ReduceOp::Any || O == ReduceOp::All) {
          if (out.dtype() == kUInt8) {
            run_reduce(f, g, x, static_cast<uint8_t*>(out.data_ptr()));
          } else {
            run_reduce(f, g, x, static_cast<bool*>(out.data_ptr()));
          }
        } else if constexpr ((O == ReduceOp::Sum || O == ReduceOp::Prod) && std::is_integral_v<T>) {
          if (out.dtype() != in.dtype()) {  // integers and bool into int64
            run_reduce(f, g, x, static_cast<int64_t*>(out.data_ptr()));
          } else {
            run_reduce(f, g, x, static_cast<T*>(out.data_ptr()));
          }
        } else {
          run_reduce(f, g, x, static_cast<T*>(out.data_ptr()));
        }
      }
    });
  });
}

void CpuBackend::reduce_with_index(ReduceOp op, const Tensor& values_in, const Tensor& indices_in,
                                   const Tensor& in, int64_t dim) {
  if (op != ReduceOp::Max && op != ReduceOp::Min) missing("max/min");
  Tensor values = with_reduced_dim(values_in, in, dim);
  Tensor indices = with_reduced_dim(indices_in, in, dim);
  if (values.numel() == 0) return;
  check_reduced_dim_not_empty(in, dim);
  // The kernel writes values and indices at the same offsets; route odd layouts through temps.
  const bool direct = values.strides() == indices.strides() && indices.dtype() == kInt64;
  Tensor v = direct ? values : make_empty(values.sizes(), TensorOptions(values.dtype()));
  Tensor ix = direct ? indices : make_empty(values.sizes(), TensorOptions(kInt64));
  const Geometry g = make_reduce_layout("max/min", v, in, in.dim() > 0 ? dim : -1);
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in.data_ptr());
    T* vp = static_cast<T*>(v.data_ptr());
    int64_t* ip = static_cast<int64_t*>(ix.data_ptr());
    if (op == ReduceOp::Max)
      run_arg_reduce<T, true>(g, x, vp, ip);
    else
      run_arg_reduce<T, false>(g, x, vp, ip);
  });
  if (!direct) {
    Tensor(values).copy_(v);
    Tensor(indices).copy_(ix);
  }
}

void CpuBackend::scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) {
  if (out.numel() == 0) return;
  const Tensor x = in.dtype() == out.dtype() ? in.contiguous() : in.to(out.dtype()).contiguous();
  Tensor y = out.is_contiguous() ? out : make_empty(out.sizes(), TensorOptions(out.dtype()));
  const auto [outer, n, inner] = split_at_dim(x.sizes(), dim);
  // Structured bindings captured by copy: clang before 16 cannot capture them by reference.
  visit_dtype(out.dtype(), [&, outer = outer, n = n, inner = inner](auto tag) {
    using T = typename decltype(tag)::type;
    const T* xp = static_cast<const T*>(x.data_ptr());
    T* yp = static_cast<T*>(y.data_ptr());
    if (op == ScanOp::CumSum)
      run_scan<T, ScanOp::CumSum>(xp, yp, outer, n, inner);
    else
      run_scan<T, ScanOp::CumProd>(xp, yp, outer, n, inner);
  });
  if (!y.is_same(out)) Tensor(out).copy_(y);
}

}  // namespace ember
