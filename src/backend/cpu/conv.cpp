// CPU im2col / col2im for convolution: row copies with zero-filled borders (memcpy-like when the
// stride is 1), col2im accumulating each image plane in the compute type, one plane per task.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/window_range.h"
#include "core/dispatch.h"
#include "ember/parallel.h"

namespace ember {

namespace {

using cpu::valid_range;

inline int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, work));
}

// One col row: tap (ki, kj) of every window over one plane.
template <class T>
void im2col_row(T* dst, const T* plane, const Window2d& g, int64_t ki, int64_t kj) {
  int64_t w0, w1;
  valid_range(g.in_w, g.out_w, g.sw, g.pw, kj * g.dw, w0, w1);
  for (int64_t oh = 0; oh < g.out_h; ++oh, dst += g.out_w) {
    const int64_t h = oh * g.sh - g.ph + ki * g.dh;
    if (h < 0 || h >= g.in_h || w0 == w1) {
      std::fill(dst, dst + g.out_w, T(0));
      continue;
    }
    const int64_t base = h * g.in_w - g.pw + kj * g.dw;  // input index of ow = 0
    std::fill(dst, dst + w0, T(0));
    if (g.sw == 1) {
      std::memcpy(dst + w0, plane + base + w0, static_cast<size_t>(w1 - w0) * sizeof(T));
    } else {
      for (int64_t ow = w0; ow < w1; ++ow) dst[ow] = plane[base + ow * g.sw];
    }
    std::fill(dst + w1, dst + g.out_w, T(0));
  }
}

// Stride 1 with out_w == in_w ("same" padding, the common 3x3 pad-1 case): the input element
// under tap (ki, kj) of output position o = oh * W + ow is o + shift of the plane, so one tap's
// whole block is one shifted copy of the rows it covers; only the columns the tap moves outside
// the row (|kj * dw - pw| per row) and the rows outside the image are zeros.
bool flat_taps(const Window2d& g) { return g.sh == 1 && g.sw == 1 && g.out_w == g.in_w; }

// The part of a flat tap that stays inside the image: output positions [o0, o1) (whole rows
// [oh0, oh1), less the columns that fall off the first and last of them), the input offset
// `shift`, and the columns [w0, w1) inside the row.
struct FlatTap {
  int64_t oh0, oh1, w0, w1, shift, o0, o1;
  FlatTap(const Window2d& g, int64_t ki, int64_t kj) {
    cpu::valid_range(g.in_h, g.out_h, 1, g.ph, ki * g.dh, oh0, oh1);
    cpu::valid_range(g.in_w, g.out_w, 1, g.pw, kj * g.dw, w0, w1);
    const int64_t dc = kj * g.dw - g.pw;  // column offset of the tap
    shift = (ki * g.dh - g.ph) * g.in_w + dc;
    const int64_t len = g.out_h * g.out_w;
    o0 = std::min(len, oh0 * g.out_w + std::max<int64_t>(0, -dc));
    o1 = std::clamp(oh1 * g.out_w - std::max<int64_t>(0, dc), o0, len);
  }
};

template <class T>
void im2col_flat(T* dst, const T* plane, const Window2d& g, int64_t ki, int64_t kj) {
  const FlatTap t(g, ki, kj);
  const int64_t len = g.out_h * g.out_w, W = g.out_w;
  std::fill(dst, dst + t.o0, T(0));
  if (t.o1 > t.o0) {
    std::memcpy(dst + t.o0, plane + t.o0 + t.shift, static_cast<size_t>(t.o1 - t.o0) * sizeof(T));
  }
  std::fill(dst + t.o1, dst + len, T(0));
  // The copy wrapped into the neighbouring row where the tap leaves the row.
  for (int64_t oh = t.oh0; oh < t.oh1; ++oh) {
    for (int64_t ow = 0; ow < t.w0; ++ow) dst[oh * W + ow] = T(0);
    for (int64_t ow = t.w1; ow < W; ++ow) dst[oh * W + ow] = T(0);
  }
}

template <class T>
void im2col_impl(T* col, const T* in, const Window2d& g) {
  const int64_t taps = g.kh * g.kw, len = g.out_h * g.out_w;
  const bool flat = flat_taps(g);
  parallel_for(g.planes * taps, grain_for(len), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t p = r / taps, t = r % taps;
      const T* plane = in + p * g.in_h * g.in_w;
      if (flat) {
        im2col_flat(col + r * len, plane, g, t / g.kw, t % g.kw);
      } else {
        im2col_row(col + r * len, plane, g, t / g.kw, t % g.kw);
      }
    }
  });
}

// Adds every col row of one plane back onto the plane (acc, in the compute type). With flat
// taps, each tap is one shifted add over the rows it covers, after the entries of the columns it
// moves outside the row are zeroed in col (scratch: col2im's caller owns and discards it).
template <class T, class C>
void col2im_plane(C* acc, T* col, const Window2d& g) {
  const int64_t len = g.out_h * g.out_w;
  if (flat_taps(g)) {
    const int64_t W = g.out_w;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* src = col + (ki * g.kw + kj) * len;
        const FlatTap t(g, ki, kj);
        for (int64_t oh = t.oh0; oh < t.oh1; ++oh) {
          for (int64_t ow = 0; ow < t.w0; ++ow) src[oh * W + ow] = T(0);
          for (int64_t ow = t.w1; ow < W; ++ow) src[oh * W + ow] = T(0);
        }
        C* dst = acc + t.shift;
        for (int64_t o = t.o0; o < t.o1; ++o) dst[o] += static_cast<C>(src[o]);
      }
    }
    return;
  }
  for (int64_t ki = 0; ki < g.kh; ++ki) {
    for (int64_t kj = 0; kj < g.kw; ++kj) {
      const T* src = col + (ki * g.kw + kj) * len;
      int64_t w0, w1;
      valid_range(g.in_w, g.out_w, g.sw, g.pw, kj * g.dw, w0, w1);
      for (int64_t oh = 0; oh < g.out_h; ++oh, src += g.out_w) {
        const int64_t h = oh * g.sh - g.ph + ki * g.dh;
        if (h < 0 || h >= g.in_h) continue;
        C* dst = acc + h * g.in_w;
        const int64_t base = kj * g.dw - g.pw;
        if (g.sw == 1) {
          for (int64_t ow = w0; ow < w1; ++ow) dst[base + ow] += static_cast<C>(src[ow]);
        } else {
          for (int64_t ow = w0; ow < w1; ++ow) dst[base + ow * g.sw] += static_cast<C>(src[ow]);
        }
      }
    }
  }
}

template <class T>
void col2im_impl(T* in, T* col, const Window2d& g) {
  using C = compute_t<T>;
  const int64_t area = g.in_h * g.in_w, rows = g.kh * g.kw * g.out_h * g.out_w;
  parallel_for(g.planes, grain_for(rows + area), [&](int64_t begin, int64_t end) {
    std::vector<C> scratch;
    for (int64_t p = begin; p < end; ++p) {
      T* plane = in + p * area;
      if constexpr (std::is_same_v<T, C>) {
        std::fill(plane, plane + area, T(0));
        col2im_plane<T, C>(plane, col + p * rows, g);
      } else {
        scratch.assign(static_cast<size_t>(area), C(0));
        col2im_plane<T, C>(scratch.data(), col + p * rows, g);
        for (int64_t i = 0; i < area; ++i) plane[i] = static_cast<T>(scratch[i]);
      }
    }
  });
}

}  // namespace

void CpuBackend::im2col(const Tensor& col, const Tensor& in, const Window2d& g) {
  if (col.numel() == 0) return;
  visit_float_dtype(in.dtype(), "im2col", [&](auto tag) {
    using T = typename decltype(tag)::type;
    im2col_impl(col.data_ptr<T>(), in.data_ptr<T>(), g);
  });
}

void CpuBackend::col2im(const Tensor& in, const Tensor& col, const Window2d& g) {
  if (in.numel() == 0) return;
  visit_float_dtype(in.dtype(), "col2im", [&](auto tag) {
    using T = typename decltype(tag)::type;
    col2im_impl(in.data_ptr<T>(), col.data_ptr<T>(), g);
  });
}

}  // namespace ember
