// Sliding-window geometry of convolution and pooling over contiguous (planes, H, W) images, and
// the window bounds every backend uses (PyTorch's rules), written once for host and device.
#pragma once

#include <cstdint>

#include "ember/macros.h"

namespace ember {

// planes = N * C images of in_h x in_w; out_h x out_w window positions; window (kh, kw) placed at
// (o * stride - pad) with taps every dilation elements.
struct Window2d {
  int64_t planes = 0;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// Average pooling: the window's divisor, or adaptive windows (kernel, stride and padding unused).
struct AvgPool2dParams {
  bool count_include_pad = true;
  int64_t divisor_override = 0;  // 0: none
  bool adaptive = false;
};

// Adaptive pooling's window of output o along a dim of in elements split in out: [start, end).
EMBER_HD inline int64_t adaptive_start(int64_t o, int64_t out, int64_t in) {
  return (o * in) / out;
}
EMBER_HD inline int64_t adaptive_end(int64_t o, int64_t out, int64_t in) {
  return ((o + 1) * in + out - 1) / out;
}

// The input rows [h0, h1) x columns [w0, w1) an average-pool output reads, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};

EMBER_HD inline AvgWindow avg_window(const Window2d& g, const AvgPool2dParams& p, int64_t oh,
                                     int64_t ow) {
  AvgWindow a;
  if (p.adaptive) {
    a.h0 = adaptive_start(oh, g.out_h, g.in_h);
    a.h1 = adaptive_end(oh, g.out_h, g.in_h);
    a.w0 = adaptive_start(ow, g.out_w, g.in_w);
    a.w1 = adaptive_end(ow, g.out_w, g.in_w);
    a.divisor = (a.h1 - a.h0) * (a.w1 - a.w0);
    return a;
  }
  int64_t h0 = oh * g.sh - g.ph, w0 = ow * g.sw - g.pw;
  int64_t h1 = h0 + g.kh < g.in_h + g.ph ? h0 + g.kh : g.in_h + g.ph;
  int64_t w1 = w0 + g.kw < g.in_w + g.pw ? w0 + g.kw : g.in_w + g.pw;
  const int64_t padded = (h1 - h0) * (w1 - w0);
  a.h0 = h0 > 0 ? h0 : 0;
  a.w0 = w0 > 0 ? w0 : 0;
  a.h1 = h1 < g.in_h ? h1 : g.in_h;
  a.w1 = w1 < g.in_w ? w1 : g.in_w;
  a.divisor = p.divisor_override    ? p.divisor_override
              : p.count_include_pad ? padded
                                    : (a.h1 - a.h0) * (a.w1 - a.w0);
  return a;
}

// Max pooling keeps the first maximum of a window, and the first NaN over any number.
template <class C>
EMBER_HD inline bool max_pool_takes(C v, C best) {
  return (v > best) | ((v != v) & (best == best));
}

// The output positions [o0, o1) along one dim whose window (extent taps spaced `dilation`, placed
// at o * stride - pad) can cover input position i.
struct OutRange {
  int64_t o0, o1;
};
EMBER_HD inline OutRange covering_outputs(int64_t i, int64_t extent, int64_t stride, int64_t pad,
                                          int64_t out) {
  const int64_t p = i + pad;
  const int64_t o0 = p < extent ? 0 : (p - extent) / stride + 1;
  const int64_t o1 = p / stride + 1;
  return {o0, o1 < out ? o1 : out};
}

// Adaptive pooling: the outputs whose window contains input position i.
EMBER_HD inline OutRange adaptive_covering(int64_t i, int64_t out, int64_t in) {
  const int64_t o0 = (i * out) / in;
  const int64_t o1 = ((i + 1) * out + in - 1) / in;
  return {o0, o1 < out ? o1 : out};
}

}  // namespace ember
