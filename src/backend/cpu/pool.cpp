// CPU max / average pooling and their backwards, one image plane per task. Max pooling finds the
// value and its index in one pass; the backwards scatter over the plane they own (no races).
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/window_range.h"
#include "core/dispatch.h"
#include "ember/parallel.h"
#include "kernels/reduce_ops.h"

namespace ember {

namespace {

inline int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, work));
}

// Windows that tile the input (kernel == stride, no padding, dilation 1, floor mode), one output
// row: each window's taps in window order with the same compare as the generic loop, so the first
// maximum wins and NaN propagates. The winning tap is kept as a small int and turned into the
// input index afterwards. x points at the row's first input row, `first` is its index in the plane.
EMBER_CPU_CLONES_WIDE void max_pool_tiled_row(const float* __restrict x, int64_t in_w, int64_t kh,
                                              int64_t kw, int64_t out_w, float* __restrict y,
                                              int64_t* __restrict at, int32_t* __restrict tap,
                                              int64_t first) {
  for (int64_t ow = 0; ow < out_w; ++ow) {
    const float* w = x + ow * kw;
    float best = -std::numeric_limits<float>::infinity();
    int32_t t = 0;
    for (int64_t i = 0; i < kh; ++i) {
      for (int64_t j = 0; j < kw; ++j) {
        const float v = w[i * in_w + j];
        const bool take = max_pool_takes(v, best);
        best = rd::pick(take, v, best);
        t = take ? static_cast<int32_t>(i * kw + j) : t;
      }
    }
    y[ow] = best;
    tap[ow] = t;
  }
  for (int64_t ow = 0; ow < out_w; ++ow) {
    const int64_t t = tap[ow];
    at[ow] = first + ow * kw + (t / kw) * in_w + t % kw;
  }
}

// The 2 x 2 case over a whole plane (one call per plane, not per row), vectorised along each
// output row (stride-2 loads of its two input rows). The first tap starts the window:
// max_pool_takes(v, -inf) fails only for v == -inf, which leaves the same best. The selects go
// through rd::pick (bit masks), which the vectoriser accepts where a float ?: becomes a branch.
// No AVX-512 clone: a CNN's rows are short (14, 7 outputs), below 16 lanes.
EMBER_CPU_CLONES void max_pool_plane_2x2(const float* __restrict x, int64_t in_w, int64_t out_h,
                                         int64_t out_w, float* __restrict y, int64_t* __restrict at,
                                         int32_t* __restrict tap) {
  for (int64_t oh = 0; oh < out_h; ++oh) {
    const float* __restrict r0 = x + 2 * oh * in_w;
    const float* __restrict r1 = r0 + in_w;
    float* __restrict yr = y + oh * out_w;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      float best = r0[2 * ow];
      int32_t t = 0;
      const float v1 = r0[2 * ow + 1], v2 = r1[2 * ow], v3 = r1[2 * ow + 1];
      bool take = max_pool_takes(v1, best);
      best = rd::pick(take, v1, best);
      t = take ? 1 : t;
      take = max_pool_takes(v2, best);
      best = rd::pick(take, v2, best);
      t = take ? 2 : t;
      take = max_pool_takes(v3, best);
      best = rd::pick(take, v3, best);
      t = take ? 3 : t;
      yr[ow] = best;
      tap[oh * out_w + ow] = t;
    }
  }
  // Tap t of output (oh, ow) is input (2 oh + t / 2, 2 ow + t % 2).
  for (int64_t oh = 0; oh < out_h; ++oh) {
    int64_t* __restrict ar = at + oh * out_w;
    const int32_t* __restrict tr = tap + oh * out_w;
    const int64_t first = 2 * oh * in_w;
    for (int64_t ow = 0; ow < out_w; ++ow) {
      const int64_t t = tr[ow];
      ar[ow] = first + 2 * ow + (t >> 1) * in_w + (t & 1);
    }
  }
}

bool tiles_input(const Window2d& g) {
  return g.kh == g.sh && g.kw == g.sw && g.ph == 0 && g.pw == 0 && g.dh == 1 && g.dw == 1 &&
         g.out_h * g.kh <= g.in_h && g.out_w * g.kw <= g.in_w;
}

void max_pool_tiled(float* out, int64_t* idx, const float* in, const Window2d& g) {
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  parallel_for(g.planes, grain_for(len * g.kh * g.kw), [&](int64_t begin, int64_t end) {
    const bool two = g.kh == 2 && g.kw == 2;
    std::vector<int32_t> tap(static_cast<size_t>(two ? len : g.out_w));
    for (int64_t p = begin; p < end; ++p) {
      if (two) {
        max_pool_plane_2x2(in + p * area, g.in_w, g.out_h, g.out_w, out + p * len, idx + p * len,
                           tap.data());
        continue;
      }
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        const int64_t first = oh * g.kh * g.in_w;
        max_pool_tiled_row(in + p * area + first, g.in_w, g.kh, g.kw, g.out_w,
                           out + p * len + oh * g.out_w, idx + p * len + oh * g.out_w, tap.data(),
                           first);
      }
    }
  });
}

// Row by row: every tap of the window sweeps the whole output row, keeping the running maxima
// in best[] and their indices in the index row. Taps run in window order, so the first maximum
// wins as in a per-window loop, and the inner loop is a branch-free pass along memory.
template <class T>
void max_pool_impl(T* out, int64_t* idx, const T* in, const Window2d& g) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  parallel_for(g.planes, grain_for(len * g.kh * g.kw), [&](int64_t begin, int64_t end) {
    std::vector<C> best(static_cast<size_t>(g.out_w));
    for (int64_t p = begin; p < end; ++p) {
      const T* x = in + p * area;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        T* y = out + p * len + oh * g.out_w;
        int64_t* at = idx + p * len + oh * g.out_w;
        int64_t h0 = oh * g.sh - g.ph;
        while (h0 < 0) h0 += g.dh;
        // PyTorch's index for a window without a taken element: its first tap inside the input.
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          int64_t w0 = ow * g.sw - g.pw;
          while (w0 < 0) w0 += g.dw;
          at[ow] = h0 * g.in_w + w0;
        }
        std::fill(best.begin(), best.end(), -std::numeric_limits<C>::infinity());
        C* b = best.data();
        for (int64_t i = 0; i < g.kh; ++i) {
          const int64_t h = oh * g.sh - g.ph + i * g.dh;
          if (h < 0 || h >= g.in_h) continue;
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t o0, o1;
            cpu::valid_range(g.in_w, g.out_w, g.sw, g.pw, j * g.dw, o0, o1);
            const int64_t base = h * g.in_w + j * g.dw - g.pw;  // input index of ow = 0
            for (int64_t ow = o0; ow < o1; ++ow) {
              const int64_t k = base + ow * g.sw;
              const C v = static_cast<C>(x[k]);
              const bool take = max_pool_takes(v, b[ow]);
              b[ow] = rd::pick(take, v, b[ow]);
              at[ow] ^= (at[ow] ^ k) & -static_cast<int64_t>(take);
            }
          }
        }
        for (int64_t ow = 0; ow < g.out_w; ++ow) y[ow] = static_cast<T>(b[ow]);
      }
    }
  });
}

template <class T>
void max_pool_backward_impl(T* gin, const T* gout, const int64_t* idx, const Window2d& g) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  parallel_for(g.planes, grain_for(len + area), [&](int64_t begin, int64_t end) {
    // Overlapping windows can send several outputs to one input: the 16-bit floats sum in float.
    std::vector<C> acc(std::is_same_v<T, C> ? 0 : static_cast<size_t>(area));
    for (int64_t p = begin; p < end; ++p) {
      const T* gy = gout + p * len;
      const int64_t* ix = idx + p * len;
      T* gx = gin + p * area;
      if constexpr (std::is_same_v<T, C>) {
        std::fill(gx, gx + area, T(0));
        for (int64_t i = 0; i < len; ++i) gx[ix[i]] += gy[i];
      } else {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t i = 0; i < len; ++i) acc[static_cast<size_t>(ix[i])] += static_cast<C>(gy[i]);
        for (int64_t i = 0; i < area; ++i) gx[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
      }
    }
  });
}

template <class T>
void avg_pool_impl(T* out, const T* in, const Window2d& g, const AvgPool2dParams& prm) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  const int64_t per_out =
      prm.adaptive ? std::max<int64_t>(area / std::max<int64_t>(len, 1), 1) : g.kh * g.kw;
  parallel_for(g.planes, grain_for(len * per_out), [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* x = in + p * area;
      T* y = out + p * len;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const AvgWindow a = avg_window(g, prm, oh, ow);
          C s = 0;
          for (int64_t h = a.h0; h < a.h1; ++h) {
            const T* row = x + h * g.in_w;
            for (int64_t w = a.w0; w < a.w1; ++w) s += static_cast<C>(row[w]);
          }
          y[oh * g.out_w + ow] = static_cast<T>(s / static_cast<C>(a.divisor));
        }
      }
    }
  });
}

template <class T>
void avg_pool_backward_impl(T* gin, const T* gout, const Window2d& g, const AvgPool2dParams& prm) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  parallel_for(g.planes, grain_for(len + area), [&](int64_t begin, int64_t end) {
    std::vector<C> acc(static_cast<size_t>(area));
    for (int64_t p = begin; p < end; ++p) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* gy = gout + p * len;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          const AvgWindow a = avg_window(g, prm, oh, ow);
          const C v = static_cast<C>(gy[oh * g.out_w + ow]) / static_cast<C>(a.divisor);
          for (int64_t h = a.h0; h < a.h1; ++h) {
            C* row = acc.data() + h * g.in_w;
            for (int64_t w = a.w0; w < a.w1; ++w) row[w] += v;
          }
        }
      }
      T* gx = gin + p * area;
      for (int64_t i = 0; i < area; ++i) gx[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
    }
  });
}

}  // namespace

void CpuBackend::max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in,
                            const Window2d& g) {
  if (out.numel() == 0) return;
  visit_float_dtype(in.dtype(), "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      if (tiles_input(g)) {
        max_pool_tiled(out.data_ptr<T>(), indices.data_ptr<int64_t>(), in.data_ptr<T>(), g);
        return;
      }
    }
    max_pool_impl(out.data_ptr<T>(), indices.data_ptr<int64_t>(), in.data_ptr<T>(), g);
  });
}

void CpuBackend::max_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out,
                                     const Tensor& indices, const Window2d& g) {
  if (grad_in.numel() == 0) return;
  visit_float_dtype(grad_in.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool_backward_impl(grad_in.data_ptr<T>(), grad_out.data_ptr<T>(),
                           indices.data_ptr<int64_t>(), g);
  });
}

void CpuBackend::avg_pool2d(const Tensor& out, const Tensor& in, const Window2d& g,
                            const AvgPool2dParams& p) {
  if (out.numel() == 0) return;
  visit_float_dtype(in.dtype(), p.adaptive ? "adaptive_avg_pool2d" : "avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_impl(out.data_ptr<T>(), in.data_ptr<T>(), g, p);
  });
}

void CpuBackend::avg_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out,
                                     const Window2d& g, const AvgPool2dParams& p) {
  if (grad_in.numel() == 0) return;
  visit_float_dtype(grad_in.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool_backward_impl(grad_in.data_ptr<T>(), grad_out.data_ptr<T>(), g, p);
  });
}

}  // namespace ember
