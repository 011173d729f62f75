// CPU max / average pooling and their backwards, one image plane per task. Max pooling finds the
// value and its index in one pass; the backwards scatter over the plane they own (no races).
#include <algorithm>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
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
    std::vector<C> acc(static_cast<size_t>(area));
    for (int64_t p = begin; p < end; ++p) {
      std::fill(acc.begin(), acc.end(), C(0));
      const T* gy = gout + p * len;
      const int64_t* ix = idx + p * len;
      for (int64_t i = 0; i < len; ++i) acc[static_cast<size_t>(ix[i])] += static_cast<C>(gy[i]);
      T* gx = gin + p * area;
      for (int64_t i = 0; i < area; ++i) gx[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
    }
  });
}

template <class T>
void avg_pool_impl(T* out, const T* in, const Window2d& g, const AvgPool2dParams& prm) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, len = g.out_h * g.out_w;
  const int64_t per_out = prm.adaptive ? std::max<int64_t>(area / std::max<int64_t>(len, 1), 1)
                                       : g.kh * g.kw;
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
void avg_pool_backward_impl(T* gin, const T* gout, const Window2d& g,
                            const AvgPool2dParams& prm) {
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
