// Harness cases: conv1d, conv2d (strides, padding, dilation, groups, depthwise, 1x1, "same",
// unbatched), conv_transpose2d, max/avg pooling (ceil_mode, count_include_pad, divisor) and
// adaptive average pooling, against naive float64 loops written from PyTorch's definitions.
#include <limits>

#include "harness/harness.h"

namespace ember::harness {
namespace {

namespace F = nn::functional;

struct Conv {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int64_t oh = -1, ow = -1;  // output size; -1: from symmetric padding
};

// x (N, C, H, W) or (C, H, W), w (O, C / g, kh, kw), b (O) or empty.
Ref ref_conv2d(const Ref& x0, const Ref& w, const Ref* b, Conv c) {
  const bool batched = x0.shape.size() == 4;
  const Shape xs = batched ? x0.shape : Shape{1, x0.shape[0], x0.shape[1], x0.shape[2]};
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t O = w.shape[0], cg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t og = O / c.groups;
  const int64_t OH = c.oh >= 0 ? c.oh : (H + 2 * c.ph - c.dh * (kh - 1) - 1) / c.sh + 1;
  const int64_t OW = c.ow >= 0 ? c.ow : (W + 2 * c.pw - c.dw * (kw - 1) - 1) / c.sw + 1;
  Ref y(batched ? Shape{N, O, OH, OW} : Shape{O, OH, OW},
        std::vector<double>(static_cast<size_t>(N * O * OH * OW)));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = b ? b->data[o] : 0.0;
          const int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t h = i * c.sh - c.ph + a * c.dh, ww = j * c.sw - c.pw + e * c.dw;
                if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
                const int64_t ch = g * cg + ci;
                s += x0.data[((n * C + ch) * H + h) * W + ww] *
                     w.data[((o * cg + ci) * kh + a) * kw + e];
              }
          y.data[((n * O + o) * OH + i) * OW + j] = s;
        }
  (void)C;
  return y;
}

// x (N, C_in, H, W), w (C_in, C_out / g, kh, kw): every input element scatters its products.
Ref ref_conv_transpose2d(const Ref& x, const Ref& w, const Ref* b, Conv c, int64_t oph,
                         int64_t opw) {
  const int64_t N = x.shape[0], Ci = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t cog = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  const int64_t Co = cog * c.groups, cig = Ci / c.groups;
  const int64_t OH = (H - 1) * c.sh - 2 * c.ph + c.dh * (kh - 1) + oph + 1;
  const int64_t OW = (W - 1) * c.sw - 2 * c.pw + c.dw * (kw - 1) + opw + 1;
  Ref y(Shape{N, Co, OH, OW}, std::vector<double>(static_cast<size_t>(N * Co * OH * OW)));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Co; ++co)
      for (int64_t i = 0; i < OH * OW; ++i)
        y.data[(n * Co + co) * OH * OW + i] = b ? b->data[co] : 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ci = 0; ci < Ci; ++ci)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t ww = 0; ww < W; ++ww)
          for (int64_t q = 0; q < cog; ++q)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t oh = h * c.sh - c.ph + a * c.dh, ow = ww * c.sw - c.pw + e * c.dw;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                const int64_t co = (ci / cig) * cog + q;
                y.data[((n * Co + co) * OH + oh) * OW + ow] +=
                    x.data[((n * Ci + ci) * H + h) * W + ww] *
                    w.data[((ci * cog + q) * kh + a) * kw + e];
              }
  return y;
}

struct Pool {
  int64_t kh, kw, sh, sw, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil = false, count_include_pad = true;
  int64_t divisor = 0;
};

int64_t pool_out(int64_t in, int64_t k, int64_t p, int64_t s, int64_t d, bool ceil) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;
  return out;
}

// Returns {values, indices}; a 3-D input is one unbatched image stack.
std::vector<Ref> ref_max_pool(const Ref& x, const Pool& p) {
  const size_t r = x.shape.size();
  const int64_t H = x.shape[r - 2], W = x.shape[r - 1], planes = x.numel() / (H * W);
  const int64_t OH = pool_out(H, p.kh, p.ph, p.sh, p.dh, p.ceil);
  const int64_t OW = pool_out(W, p.kw, p.pw, p.sw, p.dw, p.ceil);
  Shape s = x.shape;
  s[r - 2] = OH;
  s[r - 1] = OW;
  Ref v(s, {}), ix(s, {});
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t at = -1;
        for (int64_t a = 0; a < p.kh; ++a)
          for (int64_t e = 0; e < p.kw; ++e) {
            const int64_t h = i * p.sh - p.ph + a * p.dh, w = j * p.sw - p.pw + e * p.dw;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const double val = x.data[(q * H + h) * W + w];
            if (at < 0 || val > best) {
              best = val;
              at = h * W + w;
            }
          }
        v.data.push_back(best);
        ix.data.push_back(static_cast<double>(at));
      }
  return {v, ix};
}

Ref ref_avg_pool(const Ref& x, const Pool& p) {
  const size_t r = x.shape.size();
  const int64_t H = x.shape[r - 2], W = x.shape[r - 1], planes = x.numel() / (H * W);
  const int64_t OH = pool_out(H, p.kh, p.ph, p.sh, 1, p.ceil);
  const int64_t OW = pool_out(W, p.kw, p.pw, p.sw, 1, p.ceil);
  Shape s = x.shape;
  s[r - 2] = OH;
  s[r - 1] = OW;
  Ref y(s, {});
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        double sum = 0;
        int64_t inside = 0, padded = 0;
        for (int64_t a = 0; a < p.kh; ++a)
          for (int64_t e = 0; e < p.kw; ++e) {
            const int64_t h = i * p.sh - p.ph + a, w = j * p.sw - p.pw + e;
            // Window positions past the padding do not count (ceil_mode's last window).
            if (h >= H + p.ph || w >= W + p.pw) continue;
            ++padded;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            ++inside;
            sum += x.data[(q * H + h) * W + w];
          }
        const double div = p.divisor ? p.divisor : p.count_include_pad ? padded : inside;
        y.data.push_back(sum / div);
      }
  return y;
}

Ref ref_adaptive_avg(const Ref& x, int64_t OH, int64_t OW) {
  const size_t r = x.shape.size();
  const int64_t H = x.shape[r - 2], W = x.shape[r - 1], planes = x.numel() / (H * W);
  Shape s = x.shape;
  s[r - 2] = OH;
  s[r - 1] = OW;
  Ref y(s, {});
  for (int64_t q = 0; q < planes; ++q)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        // PyTorch: start = floor(i * H / OH), end = ceil((i + 1) * H / OH).
        const int64_t h0 = (i * H) / OH, h1 = ((i + 1) * H + OH - 1) / OH;
        const int64_t w0 = (j * W) / OW, w1 = ((j + 1) * W + OW - 1) / OW;
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += x.data[(q * H + h) * W + w];
        y.data.push_back(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
  return y;
}

// A conv1d reference through the 2-d one (H = 1).
Ref ref_conv1d(const Ref& x, const Ref& w, const Ref* b, int64_t s, int64_t p, int64_t d,
               int64_t groups, int64_t pad_left = -1, int64_t out = -1) {
  const bool batched = x.shape.size() == 3;
  Ref x4 = x, w4 = w;
  x4.shape =
      batched ? Shape{x.shape[0], x.shape[1], 1, x.shape[2]} : Shape{x.shape[0], 1, x.shape[1]};
  w4.shape = Shape{w.shape[0], w.shape[1], 1, w.shape[2]};
  Conv c{1, s, 0, pad_left >= 0 ? pad_left : p, 1, d, groups, 1, -1};
  if (out >= 0) c.ow = out;
  Ref y = ref_conv2d(x4, w4, b, c);
  y.shape = batched ? Shape{y.shape[0], y.shape[1], y.shape[3]} : Shape{y.shape[0], y.shape[2]};
  return y;
}

void conv_case(const std::string& name, std::vector<InputSpec> inputs,
               std::function<TensorList(const TensorList&)> run,
               std::function<std::vector<Ref>(const std::vector<Ref>&, DType)> ref) {
  register_case({name, float_dtypes(), std::move(inputs), std::move(run), std::move(ref)});
  register_gradcheck(name);
}

EMBER_HARNESS_CASES {
  // ---- conv2d ----
  conv_case(
      "conv2d", {{{2, 3, 5, 4}}, {{4, 3, 3, 3}}, {{4}}},
      [](const TensorList& in) { return TensorList{F::conv2d(in[0], in[1], in[2], 1, 1)}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv2d(in[0], in[1], &in[2], Conv{1, 1, 1, 1})};
      });
  // Strides, asymmetric padding and dilation, two groups, no bias.
  conv_case(
      "conv2d_strided_grouped", {{{2, 4, 7, 6}}, {{6, 2, 3, 2}}},
      [](const TensorList& in) {
        return TensorList{F::conv2d(in[0], in[1], {}, {2, 1}, {1, 0}, {1, 2}, 2)};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv2d(in[0], in[1], nullptr, Conv{2, 1, 1, 0, 1, 2, 2})};
      });
  conv_case(
      "conv2d_depthwise", {{{2, 3, 5, 5}}, {{3, 1, 3, 3}}, {{3}}},
      [](const TensorList& in) { return TensorList{F::conv2d(in[0], in[1], in[2], 2, 1, 1, 3)}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv2d(in[0], in[1], &in[2], Conv{2, 2, 1, 1, 1, 1, 3})};
      });
  conv_case(
      "conv2d_pointwise", {{{2, 3, 4, 3}}, {{5, 3, 1, 1}}, {{5}}},
      [](const TensorList& in) { return TensorList{F::conv2d(in[0], in[1], in[2])}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv2d(in[0], in[1], &in[2], Conv{})};
      });
  conv_case(
      "conv2d_unbatched", {{{3, 5, 4}}, {{2, 3, 2, 2}}, {{2}}},
      [](const TensorList& in) {
        return TensorList{F::conv2d(in[0], in[1], in[2], 1, {1, 0})};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv2d(in[0], in[1], &in[2], Conv{1, 1, 1, 0})};
      });
  // "same" with even kernels and dilation: the odd extra padding goes bottom/right.
  conv_case(
      "conv2d_same", {{{1, 2, 5, 6}}, {{3, 2, 4, 2}}, {{3}}},
      [](const TensorList& in) {
        return TensorList{F::conv2d(in[0], in[1], in[2], 1, "same", {1, 3})};
      },
      [](const std::vector<Ref>& in, DType) {
        // totals: 3 rows (1 top, 2 bottom), 3 columns (1 left, 2 right)
        return std::vector<Ref>{ref_conv2d(in[0], in[1], &in[2], Conv{1, 1, 1, 1, 1, 3, 1, 5, 6})};
      });

  // ---- conv1d ----
  conv_case(
      "conv1d", {{{2, 4, 9}}, {{6, 2, 3}}, {{6}}},
      [](const TensorList& in) { return TensorList{F::conv1d(in[0], in[1], in[2], 2, 1, 1, 2)}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_conv1d(in[0], in[1], &in[2], 2, 1, 1, 2)};
      });
  conv_case(
      "conv1d_same_unbatched", {{{3, 7}}, {{2, 3, 4}}},
      [](const TensorList& in) { return TensorList{F::conv1d(in[0], in[1], {}, 1, "same", 2)}; },
      [](const std::vector<Ref>& in, DType) {
        // total padding 6: 3 left, 3 right
        return std::vector<Ref>{ref_conv1d(in[0], in[1], nullptr, 1, 3, 2, 1)};
      });

  // ---- conv_transpose2d ----
  conv_case(
      "conv_transpose2d", {{{2, 4, 3, 4}}, {{4, 2, 3, 3}}, {{4}}},
      [](const TensorList& in) {
        return TensorList{F::conv_transpose2d(in[0], in[1], in[2], 2, 1, {1, 0}, 2)};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{
            ref_conv_transpose2d(in[0], in[1], &in[2], Conv{2, 2, 1, 1, 1, 1, 2}, 1, 0)};
      });
  conv_case(
      "conv_transpose2d_dilated", {{{1, 2, 3, 3}}, {{2, 3, 2, 3}}},
      [](const TensorList& in) {
        return TensorList{F::conv_transpose2d(in[0], in[1], {}, 1, {0, 1}, 0, 1, 2)};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{
            ref_conv_transpose2d(in[0], in[1], nullptr, Conv{1, 1, 0, 1, 2, 2, 1}, 0, 0)};
      });

  // ---- pooling ----
  conv_case(
      "max_pool2d", {{{2, 3, 7, 6}}},
      [](const TensorList& in) {
        auto [v, i] = F::max_pool2d_with_indices(in[0], 3, 2, 1);
        return TensorList{v, i};
      },
      [](const std::vector<Ref>& in, DType) {
        return ref_max_pool(in[0], Pool{3, 3, 2, 2, 1, 1});
      });
  conv_case(
      "max_pool2d_ceil_dilated", {{{2, 8, 7}}},
      [](const TensorList& in) {
        auto [v, i] = F::max_pool2d_with_indices(in[0], {3, 2}, nn::ExpandingArray<2>{2, 2}, {1, 1},
                                                 {2, 1}, true);
        return TensorList{v, i};
      },
      [](const std::vector<Ref>& in, DType) {
        Pool p{3, 2, 2, 2, 1, 1, 2, 1};
        p.ceil = true;
        return ref_max_pool(in[0], p);
      });
  // Windows that tile the input (kernel == stride, no padding): the CPU's row kernel, for 2 x 2
  // and for other kernels, with odd sizes whose last row and column belong to no window.
  conv_case(
      "max_pool2d_tiled", {{{2, 3, 7, 9}}},
      [](const TensorList& in) {
        auto [v, i] = F::max_pool2d_with_indices(in[0], 2, 2);
        return TensorList{v, i};
      },
      [](const std::vector<Ref>& in, DType) {
        return ref_max_pool(in[0], Pool{2, 2, 2, 2});
      });
  conv_case(
      "max_pool2d_tiled_3x2", {{{1, 2, 10, 9}}},
      [](const TensorList& in) {
        auto [v, i] = F::max_pool2d_with_indices(in[0], {3, 2}, nn::ExpandingArray<2>{3, 2});
        return TensorList{v, i};
      },
      [](const std::vector<Ref>& in, DType) {
        return ref_max_pool(in[0], Pool{3, 2, 3, 2});
      });
  // Overlapping windows (stride 1): the backward adds several gradients into one element.
  conv_case(
      "max_pool2d_overlapping", {{{1, 2, 5, 5}}},
      [](const TensorList& in) { return TensorList{F::max_pool2d(in[0], 3, 1)}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_max_pool(in[0], Pool{3, 3, 1, 1})[0]};
      });
  conv_case(
      "max_pool1d", {{{2, 3, 9}}},
      [](const TensorList& in) { return TensorList{F::max_pool1d(in[0], 3, 2, 1)}; },
      [](const std::vector<Ref>& in, DType) {
        Ref x = in[0];
        x.shape = Shape{2, 3, 1, 9};
        Ref y = ref_max_pool(x, Pool{1, 3, 1, 2, 0, 1})[0];
        y.shape = Shape{2, 3, y.shape[3]};
        return std::vector<Ref>{y};
      });
  conv_case(
      "avg_pool2d", {{{2, 3, 7, 6}}},
      [](const TensorList& in) { return TensorList{F::avg_pool2d(in[0], 3, 2, 1)}; },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_avg_pool(in[0], Pool{3, 3, 2, 2, 1, 1})};
      });
  conv_case(
      "avg_pool2d_ceil_exclude_pad", {{{2, 2, 7, 6}}},
      [](const TensorList& in) {
        return TensorList{
            F::avg_pool2d(in[0], {3, 2}, nn::ExpandingArray<2>{2, 3}, {1, 1}, true, false)};
      },
      [](const std::vector<Ref>& in, DType) {
        Pool p{3, 2, 2, 3, 1, 1};
        p.ceil = true;
        p.count_include_pad = false;
        return std::vector<Ref>{ref_avg_pool(in[0], p)};
      });
  conv_case(
      "avg_pool2d_divisor_unbatched", {{{3, 6, 5}}},
      [](const TensorList& in) {
        return TensorList{F::avg_pool2d(in[0], 2, 1, 1, false, true, 3)};
      },
      [](const std::vector<Ref>& in, DType) {
        Pool p{2, 2, 1, 1, 1, 1};
        p.divisor = 3;
        return std::vector<Ref>{ref_avg_pool(in[0], p)};
      });
  conv_case(
      "avg_pool1d", {{{2, 3, 8}}},
      [](const TensorList& in) { return TensorList{F::avg_pool1d(in[0], 3, 2, 1)}; },
      [](const std::vector<Ref>& in, DType) {
        Ref x = in[0];
        x.shape = Shape{2, 3, 1, 8};
        Ref y = ref_avg_pool(x, Pool{1, 3, 1, 2, 0, 1});
        y.shape = Shape{2, 3, y.shape[3]};
        return std::vector<Ref>{y};
      });
  conv_case(
      "adaptive_avg_pool2d", {{{2, 3, 7, 5}}},
      [](const TensorList& in) {
        return TensorList{F::adaptive_avg_pool2d(in[0], {3, 2}), F::adaptive_avg_pool2d(in[0], 1)};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_adaptive_avg(in[0], 3, 2), ref_adaptive_avg(in[0], 1, 1)};
      });
  conv_case(
      "adaptive_avg_pool2d_upsample_unbatched", {{{2, 3, 4}}},
      [](const TensorList& in) {
        return TensorList{F::adaptive_avg_pool2d(in[0], {5, 6})};
      },
      [](const std::vector<Ref>& in, DType) {
        return std::vector<Ref>{ref_adaptive_avg(in[0], 5, 6)};
      });
}

}  // namespace
}  // namespace ember::harness
