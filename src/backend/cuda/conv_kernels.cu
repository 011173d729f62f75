// Convolution and pooling kernels: grid-stride loops with one output element per thread and the
// fastest index along W, so neighbouring threads read and write neighbouring addresses. The
// backwards gather (each input element sums the outputs that read it): no atomics, and the same
// summation order on every run.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include <limits>

#include "backend/cuda/conv_kernels.h"
#include "backend/cuda/kernel_utils.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

__device__ inline int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_step() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// col[(p, ki, kj), (oh, ow)] = in[p, oh * sh - ph + ki * dh, ow * sw - pw + kj * dw] or 0.
template <class E>
__global__ void im2col_kernel(E* col, const E* in, Window2d g) {
  const int64_t len = g.out_h * g.out_w, taps = g.kh * g.kw;
  const int64_t n = g.planes * taps * len;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t ow = i % g.out_w;
    int64_t t = i / g.out_w;
    const int64_t oh = t % g.out_h;
    t /= g.out_h;
    const int64_t kj = t % g.kw;
    t /= g.kw;
    const int64_t ki = t % g.kh;
    const int64_t p = t / g.kh;
    const int64_t h = oh * g.sh - g.ph + ki * g.dh, w = ow * g.sw - g.pw + kj * g.dw;
    const bool inside = h >= 0 && h < g.in_h && w >= 0 && w < g.in_w;
    col[i] = inside ? in[(p * g.in_h + h) * g.in_w + w] : E(0);
  }
}

// in[p, h, w] = sum over the taps (ki, kj) whose window position (oh, ow) lands on (h, w).
template <class T>
__global__ void col2im_kernel(T* in, const T* col, Window2d g) {
  using C = compute_t<T>;
  const int64_t len = g.out_h * g.out_w;
  const int64_t n = g.planes * g.in_h * g.in_w;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t w = i % g.in_w;
    const int64_t h = (i / g.in_w) % g.in_h;
    const int64_t p = i / (g.in_w * g.in_h);
    const T* plane = col + p * g.kh * g.kw * len;
    C acc = 0;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t hs = h + g.ph - ki * g.dh;  // oh * sh
      if (hs < 0 || hs % g.sh != 0) continue;
      const int64_t oh = hs / g.sh;
      if (oh >= g.out_h) continue;
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const int64_t ws = w + g.pw - kj * g.dw;
        if (ws < 0 || ws % g.sw != 0) continue;
        const int64_t ow = ws / g.sw;
        if (ow >= g.out_w) continue;
        acc += cast<C>(plane[(ki * g.kw + kj) * len + oh * g.out_w + ow]);
      }
    }
    in[i] = cast<T>(acc);
  }
}

template <class T>
__global__ void max_pool_kernel(T* out, int64_t* indices, const T* in, Window2d g) {
  using C = compute_t<T>;
  const int64_t n = g.planes * g.out_h * g.out_w;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t p = i / (g.out_w * g.out_h);
    const T* x = in + p * g.in_h * g.in_w;
    int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
    const int64_t h_end = h0 + (g.kh - 1) * g.dh + 1, w_end = w0 + (g.kw - 1) * g.dw + 1;
    const int64_t h1 = h_end < g.in_h ? h_end : g.in_h, w1 = w_end < g.in_w ? w_end : g.in_w;
    while (h0 < 0) h0 += g.dh;
    while (w0 < 0) w0 += g.dw;
    C best = -std::numeric_limits<C>::infinity();
    int64_t at = h0 * g.in_w + w0;
    for (int64_t h = h0; h < h1; h += g.dh) {
      for (int64_t w = w0; w < w1; w += g.dw) {
        const C v = cast<C>(x[h * g.in_w + w]);
        if (max_pool_takes(v, best)) {
          best = v;
          at = h * g.in_w + w;
        }
      }
    }
    out[i] = cast<T>(best);
    indices[i] = at;
  }
}

template <class T>
__global__ void max_pool_backward_kernel(T* grad_in, const T* grad_out, const int64_t* indices,
                                         Window2d g) {
  using C = compute_t<T>;
  const int64_t len = g.out_h * g.out_w;
  const int64_t n = g.planes * g.in_h * g.in_w;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t w = i % g.in_w;
    const int64_t h = (i / g.in_w) % g.in_h;
    const int64_t p = i / (g.in_w * g.in_h);
    const int64_t self = h * g.in_w + w;
    const OutRange rh = covering_outputs(h, (g.kh - 1) * g.dh + 1, g.sh, g.ph, g.out_h);
    const OutRange rw = covering_outputs(w, (g.kw - 1) * g.dw + 1, g.sw, g.pw, g.out_w);
    const T* gy = grad_out + p * len;
    const int64_t* ix = indices + p * len;
    C acc = 0;
    for (int64_t oh = rh.o0; oh < rh.o1; ++oh) {
      for (int64_t ow = rw.o0; ow < rw.o1; ++ow) {
        if (ix[oh * g.out_w + ow] == self) acc += cast<C>(gy[oh * g.out_w + ow]);
      }
    }
    grad_in[i] = cast<T>(acc);
  }
}

template <class T>
__global__ void avg_pool_kernel(T* out, const T* in, Window2d g, AvgPool2dParams prm) {
  using C = compute_t<T>;
  const int64_t n = g.planes * g.out_h * g.out_w;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t ow = i % g.out_w;
    const int64_t oh = (i / g.out_w) % g.out_h;
    const int64_t p = i / (g.out_w * g.out_h);
    const T* x = in + p * g.in_h * g.in_w;
    const AvgWindow a = avg_window(g, prm, oh, ow);
    C s = 0;
    for (int64_t h = a.h0; h < a.h1; ++h) {
      for (int64_t w = a.w0; w < a.w1; ++w) s += cast<C>(x[h * g.in_w + w]);
    }
    out[i] = cast<T>(s / static_cast<C>(a.divisor));
  }
}

template <class T>
__global__ void avg_pool_backward_kernel(T* grad_in, const T* grad_out, Window2d g,
                                         AvgPool2dParams prm) {
  using C = compute_t<T>;
  const int64_t len = g.out_h * g.out_w;
  const int64_t n = g.planes * g.in_h * g.in_w;
  for (int64_t i = first_index(); i < n; i += grid_step()) {
    const int64_t w = i % g.in_w;
    const int64_t h = (i / g.in_w) % g.in_h;
    const int64_t p = i / (g.in_w * g.in_h);
    const OutRange rh = prm.adaptive ? adaptive_covering(h, g.out_h, g.in_h)
                                     : covering_outputs(h, g.kh, g.sh, g.ph, g.out_h);
    const OutRange rw = prm.adaptive ? adaptive_covering(w, g.out_w, g.in_w)
                                     : covering_outputs(w, g.kw, g.sw, g.pw, g.out_w);
    const T* gy = grad_out + p * len;
    C acc = 0;
    for (int64_t oh = rh.o0; oh < rh.o1; ++oh) {
      for (int64_t ow = rw.o0; ow < rw.o1; ++ow) {
        const AvgWindow a = avg_window(g, prm, oh, ow);
        if (h < a.h0 || h >= a.h1 || w < a.w0 || w >= a.w1) continue;
        acc += cast<C>(gy[oh * g.out_w + ow]) / static_cast<C>(a.divisor);
      }
    }
    grad_in[i] = cast<T>(acc);
  }
}

template <class F>
cudaError_t by_float_dtype(DType dtype, const char* op, F&& f) {
  return visit_float_dtype(dtype, op, [&](auto tag) -> cudaError_t {
    f(tag);
    return cudaGetLastError();
  });
}

}  // namespace

cudaError_t im2col(void* col, const void* in, int elem_size, const Window2d& g,
                   cudaStream_t stream) {
  const int64_t n = g.planes * g.kh * g.kw * g.out_h * g.out_w;
  if (n <= 0) return cudaSuccess;
  auto launch = [&](auto tag) {
    using E = decltype(tag);
    simt::launch(im2col_kernel<E>, grid_for(n), dim3(kBlock), 0, stream, static_cast<E*>(col),
                 static_cast<const E*>(in), g);
    return cudaGetLastError();
  };
  switch (elem_size) {
    case 2:
      return launch(uint16_t{});
    case 4:
      return launch(uint32_t{});
    case 8:
      return launch(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t col2im(DType dtype, void* in, const void* col, const Window2d& g, cudaStream_t stream) {
  const int64_t n = g.planes * g.in_h * g.in_w;
  if (n <= 0) return cudaSuccess;
  return by_float_dtype(dtype, "col2im", [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(col2im_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(in),
                 static_cast<const T*>(col), g);
  });
}

cudaError_t max_pool2d(DType dtype, void* out, int64_t* indices, const void* in, const Window2d& g,
                       cudaStream_t stream) {
  const int64_t n = g.planes * g.out_h * g.out_w;
  if (n <= 0) return cudaSuccess;
  return by_float_dtype(dtype, "max_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(max_pool_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(out),
                 indices, static_cast<const T*>(in), g);
  });
}

cudaError_t max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                                const int64_t* indices, const Window2d& g, cudaStream_t stream) {
  const int64_t n = g.planes * g.in_h * g.in_w;
  if (n <= 0) return cudaSuccess;
  return by_float_dtype(dtype, "max_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(max_pool_backward_kernel<T>, grid_for(n), dim3(kBlock), 0, stream,
                 static_cast<T*>(grad_in), static_cast<const T*>(grad_out), indices, g);
  });
}

cudaError_t avg_pool2d(DType dtype, void* out, const void* in, const Window2d& g,
                       const AvgPool2dParams& p, cudaStream_t stream) {
  const int64_t n = g.planes * g.out_h * g.out_w;
  if (n <= 0) return cudaSuccess;
  return by_float_dtype(dtype, "avg_pool2d", [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(avg_pool_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(out),
                 static_cast<const T*>(in), g, p);
  });
}

cudaError_t avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Window2d& g,
                                const AvgPool2dParams& p, cudaStream_t stream) {
  const int64_t n = g.planes * g.in_h * g.in_w;
  if (n <= 0) return cudaSuccess;
  return by_float_dtype(dtype, "avg_pool2d_backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(avg_pool_backward_kernel<T>, grid_for(n), dim3(kBlock), 0, stream,
                 static_cast<T*>(grad_in), static_cast<const T*>(grad_out), g, p);
  });
}

}  // namespace ember::cuda_kernels
