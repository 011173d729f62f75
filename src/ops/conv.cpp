// Convolution and pooling: argument checks, the backend's direct kernels where it has them (cuDNN
// on CUDA devices), else im2col + the backend's batched gemm (one gemm per group, batched over
// samples); pooling through the backend's window kernels; each with its derivative recorded as
// one node. The entry points of ops/nn_ops.h, behind nn::functional.
#include <algorithm>
#include <array>
#include <mutex>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "ember/backends.h"
#include "ember/parallel.h"
#include "ops/autocast.h"
#include "ops/nn_ops.h"
#include "ops/op_utils.h"

namespace ember::ops {

namespace {

using Pair = std::array<int64_t, 2>;

using autograd::GradContext;

// Elements of im2col scratch per chunk of samples (larger batches run in chunks).
constexpr int64_t kColBudget = int64_t{1} << 25;

// ---- convolution geometry -----------------------------------------------------------------------

// A 2-d convolution: input (n, c, h, w), weight (o, c / groups, kh, kw), output (n, o, oh, ow).
// win describes one sample's images (planes = c); its pads are the top/left ones.
struct ConvShape {
  int64_t n = 0, c = 0, h = 0, w = 0, o = 0, oh = 0, ow = 0, groups = 1;
  Window2d win;
  const char* op = "conv2d";  // the public op, for errors

  int64_t taps() const { return win.kh * win.kw; }
  int64_t len() const { return oh * ow; }
  // Rows of one group's column matrix, and output channels per group.
  int64_t kg() const { return c / groups * taps(); }
  int64_t og() const { return o / groups; }
  // 1x1 kernel, stride 1, no padding: the input is its own column matrix.
  bool pointwise() const {
    return win.kh == 1 && win.kw == 1 && win.sh == 1 && win.sw == 1 && win.ph == 0 && win.pw == 0 &&
           oh == h && ow == w;
  }
  int64_t chunk() const {
    const int64_t per = std::max<int64_t>(c * taps() * len(), 1);
    return std::clamp<int64_t>(kColBudget / per, 1, std::max<int64_t>(n, 1));
  }
  // Whether for_sample_chunks hands out one sample at a time on dev.
  bool one_sample_chunks(Device dev) const { return dev.is_cpu() || chunk() == 1; }
  Window2d window(int64_t samples) const {
    Window2d g = win;
    g.planes = samples * c;
    return g;
  }
};

// The column matrix (samples, c * kh * kw, oh * ow) of contiguous x (samples, c, h, w).
Tensor columns(const Tensor& x, const ConvShape& s) {
  const int64_t samples = x.size(0);
  if (s.pointwise()) return x.view({samples, s.c, s.len()});
  Tensor col =
      make_empty({samples, s.c * s.taps(), s.len()}, x.dtype(), x.device(), false, "conv2d");
  backend(x.device()).im2col(col, x, s.window(samples));
  return col;
}

// Whether the bias can ride in the gemms of one sample: a row of ones appended to the column
// matrix, the bias appended to the weight as one more column. Then conv forward adds the bias
// inside its gemm (no pass writes it into y first) and the weight gradient's gemm yields the
// bias gradient as its extra column (no separate reduction over gy). Needs a column matrix of
// its own (not the input itself, as for 1x1 kernels), one group and one-sample chunks.
bool folds_bias(const ConvShape& s, Device dev) {
  return s.groups == 1 && !s.pointwise() && s.kg() > 0 && s.one_sample_chunks(dev);
}

// One sample's column matrix (1, kg + 1, oh * ow) with the row of ones last.
Tensor columns_with_ones(const Tensor& x1, const ConvShape& s) {
  Tensor col = make_empty({1, s.kg() + 1, s.len()}, x1.dtype(), x1.device(), false, "conv2d");
  backend(x1.device()).im2col(col.narrow(1, 0, s.kg()), x1, s.window(1));
  col.narrow(1, s.kg(), 1).fill_(1.0);
  return col;
}

// y (samples, o, L) = W_g @ col_g for every group g (+ beta * y).
void gemm_forward(const Tensor& y, const Tensor& w2, const Tensor& col, const ConvShape& s,
                  double beta) {
  const int64_t samples = y.size(0), og = s.og(), kg = s.kg();
  Backend& be = backend(y.device());
  for (int64_t g = 0; g < s.groups; ++g) {
    be.gemm(y.narrow(1, g * og, og),
            w2.narrow(0, g * og, og).unsqueeze(0).expand({samples, og, kg}),
            col.narrow(1, g * kg, kg), 1.0, beta);
  }
}

// Runs fn(state, n0, count) over the samples and returns each worker's state (a tensor fn may
// set) in sample order. On the CPU each thread takes a range of samples and runs them one at a
// time, so a sample's column matrix stays in cache between im2col and its gemm (which then runs
// single-threaded inside the parallel region). A device takes chunks as large as the column
// budget allows.
template <class Fn>
std::vector<Tensor> for_sample_chunks(const ConvShape& s, Device dev, Fn&& fn) {
  // The slices taken here must not record views of saved leaves (grad mode is per thread).
  NoGradGuard no_grad;
  std::vector<std::pair<int64_t, Tensor>> states;
  if (dev.is_cpu() && s.n > 1) {
    std::mutex m;
    parallel_for(s.n, 1, [&](int64_t begin, int64_t end) {
      NoGradGuard worker_no_grad;
      Tensor state;
      for (int64_t i = begin; i < end; ++i) fn(state, i, int64_t{1});
      std::lock_guard<std::mutex> lock(m);
      states.emplace_back(begin, std::move(state));
    });
    std::sort(states.begin(), states.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  } else {
    Tensor state;
    for (int64_t n0 = 0; n0 < s.n; n0 += s.chunk()) {
      fn(state, n0, std::min(s.chunk(), s.n - n0));
    }
    states.emplace_back(0, std::move(state));
  }
  std::vector<Tensor> out;
  for (auto& st : states) out.push_back(std::move(st.second));
  return out;
}

// Contiguous x (n, c, h, w), w (o, c / groups, kh, kw), optional bias (o) -> (n, o, oh, ow).
Tensor conv_forward(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvShape& s) {
  Tensor y = make_empty({s.n, s.o, s.oh, s.ow}, x.dtype(), x.device(), false, "conv2d");
  if (y.numel() == 0) return y;
  if (!x.device().is_cpu() && s.kg() > 0 && backends::cudnn::enabled() &&
      backends::cudnn::is_available()) {
    // The bias goes in first and the convolution adds to it (beta = 1).
    if (bias.defined()) y.copy_(bias.view({1, s.o, 1, 1}).expand(y.sizes()));
    const double beta = bias.defined() ? 1.0 : 0.0;
    if (backend(x.device()).conv2d_forward(s.op, y, x, w, s.win, s.groups, beta)) return y;
  }
  const Tensor w2 = w.view({s.o, s.kg()});
  // (o, kg + 1): the weight with the bias as its last column, for one-sample chunks.
  const Tensor wb =
      bias.defined() && folds_bias(s, x.device()) ? cat({w2, bias.view({s.o, 1})}, 1) : Tensor();
  for_sample_chunks(s, x.device(), [&](Tensor&, int64_t n0, int64_t nc) {
    Tensor y3 = y.narrow(0, n0, nc).view({nc, s.o, s.len()});
    if (wb.defined()) {
      backend(x.device())
          .gemm(y3, wb.unsqueeze(0), columns_with_ones(x.narrow(0, n0, 1), s), 1.0, 0.0);
      return;
    }
    if (bias.defined()) y3.copy_(bias.view({1, s.o, 1}).expand({nc, s.o, s.len()}));
    if (s.kg() == 0) {
      if (!bias.defined()) y3.zero_();
      return;
    }
    gemm_forward(y3, w2, columns(x.narrow(0, n0, nc), s), s, bias.defined() ? 1.0 : 0.0);
  });
  return y;
}

// The gradient of conv_forward's input: gcol_g = W_g^T @ gy_g, then col2im. gy contiguous.
Tensor conv_backward_input(const Tensor& gy, const Tensor& w, const ConvShape& s) {
  Tensor gx = make_empty({s.n, s.c, s.h, s.w}, gy.dtype(), gy.device(), false, "conv2d");
  if (gx.numel() == 0) return gx;
  if (s.o == 0 || s.len() == 0) return gx.zero_();
  Backend& be = backend(gy.device());
  if (be.conv2d_backward_input(s.op, gx, gy, w, s.win, s.groups)) return gx;
  const Tensor w2 = w.view({s.o, s.kg()});
  const int64_t og = s.og(), kg = s.kg();
  for_sample_chunks(s, gy.device(), [&](Tensor&, int64_t n0, int64_t nc) {
    const Tensor gy3 = gy.narrow(0, n0, nc).view({nc, s.o, s.len()});
    Tensor gxc = gx.narrow(0, n0, nc);
    Tensor gcol = s.pointwise() ? gxc.view({nc, s.c, s.len()})
                                : make_empty({nc, s.c * s.taps(), s.len()}, gy.dtype(), gy.device(),
                                             false, "conv2d");
    for (int64_t g = 0; g < s.groups; ++g) {
      be.gemm(gcol.narrow(1, g * kg, kg),
              w2.narrow(0, g * og, og).t().unsqueeze(0).expand({nc, kg, og}),
              gy3.narrow(1, g * og, og), 1.0, 0.0);
    }
    if (!s.pointwise()) be.col2im(gxc, gcol, s.window(nc));
  });
  return gx;
}

// The gradients of conv_forward's weight (sum over samples of gy_g @ col_g^T) and, when
// with_bias, of its bias (gy summed over samples and positions). gy, x contiguous. Each worker
// accumulates its samples into its own (o, kg) partial — (o, kg + 1) with the bias gradient as
// the last column where folds_bias — and the partials are summed.
std::pair<Tensor, Tensor> conv_backward_weight(const Tensor& gy, const Tensor& x,
                                               const ConvShape& s, bool with_bias) {
  const Shape wshape{s.o, s.c / s.groups, s.win.kh, s.win.kw};
  const auto bias_grad = [&] { return with_bias ? gy.sum({0, 2, 3}) : Tensor(); };
  if (s.n == 0 || s.len() == 0 || s.kg() == 0 || s.o == 0) {
    return {zeros(wshape, TensorOptions(gy.dtype()).device(gy.device())), bias_grad()};
  }
  Backend& be = backend(gy.device());
  if (!gy.device().is_cpu() && backends::cudnn::enabled() && backends::cudnn::is_available()) {
    Tensor gw = make_empty(wshape, gy.dtype(), gy.device(), false, s.op);
    if (be.conv2d_backward_weight(s.op, gw, gy, x, s.win, s.groups)) return {gw, bias_grad()};
  }
  const int64_t og = s.og(), kg = s.kg();
  // Whether the partials carry the bias gradient as their last column.
  const bool fold = with_bias && folds_bias(s, gy.device());
  const std::vector<Tensor> partials =
      for_sample_chunks(s, gy.device(), [&](Tensor& acc, int64_t n0, int64_t nc) {
        const Tensor gy3 = gy.narrow(0, n0, nc).view({nc, s.o, s.len()});
        if (nc == 1) {
          // Accumulate straight into the worker's partial (beta = 1 after its first sample).
          const bool first = !acc.defined();
          if (fold) {  // one-sample chunks only
            if (first) acc = make_empty({1, s.o, kg + 1}, gy.dtype(), gy.device(), false, "conv2d");
            be.gemm(acc, gy3, columns_with_ones(x.narrow(0, n0, 1), s).transpose(1, 2), 1.0,
                    first ? 0.0 : 1.0);
            return;
          }
          const Tensor col = columns(x.narrow(0, n0, nc), s);
          if (first) acc = make_empty({1, s.o, kg}, gy.dtype(), gy.device(), false, "conv2d");
          for (int64_t g = 0; g < s.groups; ++g) {
            be.gemm(acc.narrow(1, g * og, og), gy3.narrow(1, g * og, og),
                    col.narrow(1, g * kg, kg).transpose(1, 2), 1.0, first ? 0.0 : 1.0);
          }
          return;
        }
        const Tensor col = columns(x.narrow(0, n0, nc), s);
        Tensor part = make_empty({nc, s.o, kg}, gy.dtype(), gy.device(), false, "conv2d");
        for (int64_t g = 0; g < s.groups; ++g) {
          be.gemm(part.narrow(1, g * og, og), gy3.narrow(1, g * og, og),
                  col.narrow(1, g * kg, kg).transpose(1, 2), 1.0, 0.0);
        }
        Tensor summed = part.sum({0}, true);
        acc = acc.defined() ? acc + summed : summed;
      });
  Tensor total;
  for (const Tensor& p : partials) {
    if (p.defined()) total = total.defined() ? total + p : p;
  }
  if (fold) {
    return {total.narrow(2, 0, kg).contiguous().view(wshape),
            total.select(2, kg).view({s.o}).contiguous()};
  }
  return {total.view(wshape), bias_grad()};
}

// ---- argument checks ----------------------------------------------------------------------------

std::string tuple_str(const Pair& a) {
  return "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ")";
}

void check_floating(const char* op, const Tensor& t) {
  if (!is_floating_point(t.dtype())) {
    throw NotImplementedError(op_prefix(op) + "not implemented for dtype " +
                              std::string(dtype_name(t.dtype())));
  }
}

// The checks every convolution makes; returns the device. transposed: weight (c_in, o / groups).
Device check_conv(const char* op, const Tensor& x, const Tensor& w, const Tensor& bias,
                  int64_t dims, const int64_t* stride, const int64_t* padding,
                  const int64_t* dilation, int64_t groups, bool transposed) {
  if (!x.defined() || !w.defined())
    throw ValueError(op_prefix(op) + "input and weight must be defined");
  const Device dev = common_device(op, {&x, &w, &bias});
  if (x.dim() != dims + 1 && x.dim() != dims + 2) {
    throw ValueError(op_prefix(op) + "Expected " + std::to_string(dims + 1) + "D (unbatched) or " +
                     std::to_string(dims + 2) + "D (batched) input to " + op +
                     ", but got input of size: " + shape_str(x));
  }
  if (w.dim() != dims + 2) {
    throw ValueError(op_prefix(op) + "Expected " + std::to_string(dims + 2) +
                     "-dimensional weight for " + std::to_string(dims + 2) + "-dimensional input " +
                     shape_str(x) + ", but got " + std::to_string(w.dim()) +
                     "-dimensional weight of size " + shape_str(w) + " instead");
  }
  check_floating(op, x);
  if (x.dtype() != w.dtype()) {
    throw TypeError(op_prefix(op) + "Input type (" + std::string(dtype_name(x.dtype())) +
                    ") and weight type (" + std::string(dtype_name(w.dtype())) +
                    ") should be the same");
  }
  if (bias.defined() && bias.dtype() != x.dtype()) {
    throw TypeError(op_prefix(op) + "Input type (" + std::string(dtype_name(x.dtype())) +
                    ") and bias type (" + std::string(dtype_name(bias.dtype())) +
                    ") should be the same");
  }
  for (int64_t i = 0; i < dims; ++i) {
    if (stride[i] <= 0) throw ValueError(op_prefix(op) + "non-positive stride is not supported");
    if (padding[i] < 0) throw ValueError(op_prefix(op) + "negative padding is not supported");
    if (dilation[i] <= 0) throw ValueError(op_prefix(op) + "dilation should be greater than zero");
  }
  if (groups <= 0) throw ValueError(op_prefix(op) + "non-positive groups is not supported");
  const Tensor x4 = x.dim() == dims + 1 ? x.unsqueeze(0) : x;
  const int64_t in_ch = transposed ? w.size(0) : w.size(1) * groups;
  if (w.size(0) % groups != 0) {
    throw ValueError(op_prefix(op) + "Given groups=" + std::to_string(groups) +
                     ", expected weight to be divisible by " + std::to_string(groups) +
                     " at dimension 0, but got weight of size " + shape_str(w) + " instead");
  }
  if (x4.size(1) != in_ch) {
    throw ValueError(op_prefix(op) + "Given " + (transposed ? "transposed=1, " : "") +
                     "groups=" + std::to_string(groups) + ", weight of size " + shape_str(w) +
                     ", expected input" + shape_str(x4) + " to have " + std::to_string(in_ch) +
                     " channels, but got " + std::to_string(x4.size(1)) + " channels instead");
  }
  const int64_t out_ch = transposed ? w.size(1) * groups : w.size(0);
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_ch)) {
    throw ValueError(op_prefix(op) + "Given weight of size " + shape_str(w) +
                     ", expected bias to be 1-dimensional with " + std::to_string(out_ch) +
                     " elements, but got bias of size " + shape_str(bias) + " instead");
  }
  return dev;
}

// ---- convolution with autograd ------------------------------------------------------------------

// x (n, c, h, w): output sizes from the total padding per dim (pad_top + pad_bottom).
ConvShape conv_shape(const char* op, const Tensor& x, const Tensor& w, int64_t groups,
                     const std::array<int64_t, 2>& stride, const std::array<int64_t, 2>& pad_lo,
                     const std::array<int64_t, 2>& pad_total, const std::array<int64_t, 2>& dil,
                     int64_t spatial_dims) {
  ConvShape s;
  s.n = x.size(0);
  s.c = x.size(1);
  s.h = x.size(2);
  s.w = x.size(3);
  s.o = w.size(0);
  s.groups = groups;
  Window2d& g = s.win;
  g.in_h = s.h;
  g.in_w = s.w;
  g.kh = w.size(2);
  g.kw = w.size(3);
  g.sh = stride[0];
  g.sw = stride[1];
  g.ph = pad_lo[0];
  g.pw = pad_lo[1];
  g.dh = dil[0];
  g.dw = dil[1];
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  const int64_t ph = s.h + pad_total[0], pw = s.w + pad_total[1];
  if (ph < eh || pw < ew) {
    std::ostringstream m;
    m << op_prefix(op) << "Calculated padded input size per channel: (";
    if (spatial_dims == 2) m << ph << " x ";
    m << pw << "). Kernel size: (";
    if (spatial_dims == 2) m << eh << " x ";
    m << ew << "). Kernel size can't be greater than actual input size";
    throw ValueError(m.str());
  }
  s.oh = (ph - eh) / g.sh + 1;
  s.ow = (pw - ew) / g.sw + 1;
  g.out_h = s.oh;
  g.out_w = s.ow;
  return s;
}

// x, w: 4-d (batched) tensors that passed check_conv.
Tensor conv2d_impl(const Tensor& x, const Tensor& w, const Tensor& bias, const ConvShape& s) {
  Tensor y = autograd::no_grad([&] {
    return conv_forward(x.contiguous(), w.contiguous(), bias.defined() ? bias.contiguous() : bias,
                        s);
  });
  if (!autograd::needs_grad({&x, &w, &bias})) return y;
  autograd::record("ConvolutionBackward0", {x, w, bias}, {y}, {x, w},
                   [s](const TensorList& g, const GradContext& c) {
                     const Tensor gy = g[0].contiguous();
                     Tensor gx, gw, gb;
                     if (c.needs(0)) gx = conv_backward_input(gy, c.saved[1].contiguous(), s);
                     if (c.needs(1)) {
                       std::tie(gw, gb) =
                           conv_backward_weight(gy, c.saved[0].contiguous(), s, c.needs(2));
                     } else if (c.needs(2)) {
                       gb = gy.sum({0, 2, 3});
                     }
                     return TensorList{gx, gw, gb};
                   });
  return y;
}

// Shared by conv1d and conv2d: x batched or not, spatial dims 1 (as H = 1) or 2.
Tensor conv_nd(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
               int64_t dims, std::array<int64_t, 2> stride, std::array<int64_t, 2> pad_lo,
               std::array<int64_t, 2> pad_total, std::array<int64_t, 2> dil, int64_t groups) {
  const bool batched = input.dim() == dims + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor w = weight;
  if (dims == 1) {
    x = x.unsqueeze(2);
    w = w.unsqueeze(2);
  }
  ConvShape s = conv_shape(op, x, w, groups, stride, pad_lo, pad_total, dil, dims);
  s.op = op;
  Tensor y = conv2d_impl(x, w, bias, s);
  if (dims == 1) y = y.squeeze(2);
  return batched ? y : y.squeeze(0);
}

// "same"/"valid" padding: returns (pad_lo, pad_total) per dim.
void string_padding(const char* op, const std::string& mode, const Tensor& w, int64_t dims,
                    const int64_t* stride, const int64_t* dil, std::array<int64_t, 2>& lo,
                    std::array<int64_t, 2>& total) {
  lo = {0, 0};
  total = {0, 0};
  if (mode == "valid") return;
  if (mode != "same") {
    throw ValueError(op_prefix(op) + "Invalid padding string '" + mode +
                     "', should be one of {'valid', 'same'}");
  }
  for (int64_t i = 0; i < dims; ++i) {
    if (stride[i] != 1) {
      throw ValueError(op_prefix(op) + "padding='same' is not supported for strided convolutions");
    }
  }
  for (int64_t i = 0; i < dims; ++i) {
    const size_t d = static_cast<size_t>(2 - dims + i);
    const int64_t t = dil[i] * (w.size(w.dim() - dims + i) - 1);
    total[d] = t;
    lo[d] = t / 2;
  }
}

// ---- pooling ------------------------------------------------------------------------------------

// PyTorch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  const int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The input as (n, c, h, w) with the pooling checks; batched tells how to shape the result.
Tensor pool_input(const char* op, const Tensor& input, bool& batched) {
  if (!input.defined()) throw ValueError(op_prefix(op) + "input must be defined");
  bool ok = input.dim() == 3 || input.dim() == 4;
  for (int64_t d = 1; ok && d < input.dim(); ++d) ok = input.size(d) != 0;
  if (!ok) {
    throw ValueError(op_prefix(op) + "Expected 3D or 4D (batch mode) tensor with optional 0 dim " +
                     "batch size for input, but got: " + shape_str(input));
  }
  check_floating(op, input);
  batched = input.dim() == 4;
  return batched ? input : input.unsqueeze(0);
}

Window2d pool_window(const char* op, const Tensor& x, Pair k, Pair s, Pair p, Pair d, bool ceil,
                     bool is_max) {
  if (k[0] <= 0 || k[1] <= 0) {
    throw ValueError(op_prefix(op) + "kernel size should be greater than zero, but got kH: " +
                     std::to_string(k[0]) + " kW: " + std::to_string(k[1]));
  }
  if (s[0] <= 0 || s[1] <= 0) {
    throw ValueError(op_prefix(op) + "stride should be greater than zero, but got dH: " +
                     std::to_string(s[0]) + " dW: " + std::to_string(s[1]));
  }
  if (d[0] <= 0 || d[1] <= 0) {
    throw ValueError(op_prefix(op) + "dilation should be greater than zero, but got dilationH: " +
                     std::to_string(d[0]) + " dilationW: " + std::to_string(d[1]));
  }
  for (int i = 0; i < 2; ++i) {
    if (p[i] < 0 || p[i] > k[i] / 2) {
      throw ValueError(op_prefix(op) + "pad should be at most half of " +
                       (is_max ? "effective " : "") + "kernel size, but got pad=" +
                       std::to_string(p[i]) + ", kernel_size=" + std::to_string(k[i]) +
                       (is_max ? " and dilation=" + std::to_string(d[i]) : std::string()));
    }
  }
  Window2d g;
  g.planes = x.size(0) * x.size(1);
  g.in_h = x.size(2);
  g.in_w = x.size(3);
  g.kh = k[0];
  g.kw = k[1];
  g.sh = s[0];
  g.sw = s[1];
  g.ph = p[0];
  g.pw = p[1];
  g.dh = d[0];
  g.dw = d[1];
  g.out_h = pooled_size(g.in_h, g.kh, g.ph, g.sh, g.dh, ceil);
  g.out_w = pooled_size(g.in_w, g.kw, g.pw, g.sw, g.dw, ceil);
  if (g.out_h < 1 || g.out_w < 1) {
    throw ValueError(op_prefix(op) + "Given input size: (" + std::to_string(x.size(1)) + "x" +
                     std::to_string(g.in_h) + "x" + std::to_string(g.in_w) +
                     "). Calculated output size: (" + std::to_string(x.size(1)) + "x" +
                     std::to_string(g.out_h) + "x" + std::to_string(g.out_w) +
                     "). Output size is too small");
  }
  return g;
}

Tensor avg_pool_impl(const char* op, const char* node, const Tensor& input, const Window2d& g0,
                     const AvgPool2dParams& prm) {
  bool batched = false;
  const Tensor x4 = pool_input(op, input, batched);
  Window2d g = g0;
  g.planes = x4.size(0) * x4.size(1);
  const Shape in_shape = x4.sizes();
  Tensor y = autograd::no_grad([&] {
    Tensor out =
        make_empty({x4.size(0), x4.size(1), g.out_h, g.out_w}, x4.dtype(), x4.device(), false, op);
    backend(x4.device()).avg_pool2d(out, x4.contiguous(), g, prm);
    return out;
  });
  if (autograd::needs_grad({&x4})) {
    autograd::record(
        node, {x4}, {y}, {}, [g, prm, in_shape](const TensorList& gr, const GradContext&) {
          const Tensor gy = gr[0].contiguous();
          Tensor gx = make_empty(in_shape, gy.dtype(), gy.device(), false, "avg_pool2d_backward");
          backend(gy.device()).avg_pool2d_backward(gx, gy, g, prm);
          return TensorList{gx};
        });
  }
  return batched ? y : y.squeeze(0);
}

}  // namespace

// ---- convolution entry points -------------------------------------------------------------------

Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                   int64_t dims, const int64_t* stride, const int64_t* padding,
                   const int64_t* dilation, int64_t groups) {
  const autocast::Op aop = dims == 1 ? autocast::Op::conv1d : autocast::Op::conv2d;
  if (autocast::active(aop, input)) {
    autocast::Scope s(aop, input, {input, weight, bias});
    return convolution(op, s[0], s[1], s[2], dims, stride, padding, dilation, groups);
  }
  check_conv(op, input, weight, bias, dims, stride, padding, dilation, groups, false);
  if (dims == 1) {
    return conv_nd(op, input, weight, bias, 1, {1, stride[0]}, {0, padding[0]}, {0, 2 * padding[0]},
                   {1, dilation[0]}, groups);
  }
  return conv_nd(op, input, weight, bias, 2, {stride[0], stride[1]}, {padding[0], padding[1]},
                 {2 * padding[0], 2 * padding[1]}, {dilation[0], dilation[1]}, groups);
}

Tensor convolution(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                   int64_t dims, const int64_t* stride, const std::string& padding,
                   const int64_t* dilation, int64_t groups) {
  const autocast::Op aop = dims == 1 ? autocast::Op::conv1d : autocast::Op::conv2d;
  if (autocast::active(aop, input)) {
    autocast::Scope s(aop, input, {input, weight, bias});
    return convolution(op, s[0], s[1], s[2], dims, stride, padding, dilation, groups);
  }
  const int64_t zero[2] = {0, 0};
  check_conv(op, input, weight, bias, dims, stride, zero, dilation, groups, false);
  std::array<int64_t, 2> lo, total;
  string_padding(op, padding, weight, dims, stride, dilation, lo, total);
  if (dims == 1)
    return conv_nd(op, input, weight, bias, 1, {1, stride[0]}, lo, total, {1, dilation[0]}, groups);
  return conv_nd(op, input, weight, bias, 2, {stride[0], stride[1]}, lo, total,
                 {dilation[0], dilation[1]}, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride,
                        Pair padding, Pair output_padding, int64_t groups, Pair dilation) {
  if (autocast::active(autocast::Op::conv_transpose2d, input)) {
    autocast::Scope s(autocast::Op::conv_transpose2d, input, {input, weight, bias});
    return conv_transpose2d(s[0], s[1], s[2], stride, padding, output_padding, groups, dilation);
  }
  const char* op = "conv_transpose2d";
  check_conv(op, input, weight, bias, 2, stride.data(), padding.data(), dilation.data(), groups,
             true);
  for (int i = 0; i < 2; ++i) {
    if (output_padding[i] < 0 ||
        (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])) {
      throw ValueError(
          op_prefix(op) + "output padding must be smaller than either stride or " +
          "dilation, but got output_padding_height: " + std::to_string(output_padding[0]) +
          " output_padding_width: " + std::to_string(output_padding[1]) + " stride_height: " +
          std::to_string(stride[0]) + " stride_width: " + std::to_string(stride[1]) +
          " dilation_height: " + std::to_string(dilation[0]) +
          " dilation_width: " + std::to_string(dilation[1]));
    }
  }
  const bool batched = input.dim() == 4;
  const Tensor x = batched ? input : input.unsqueeze(0);
  // The convolution whose input gradient this is: input (n, c_out, H, W), output x.
  ConvShape s;
  s.op = op;
  s.n = x.size(0);
  s.o = x.size(1);
  s.c = weight.size(1) * groups;
  s.groups = groups;
  s.oh = x.size(2);
  s.ow = x.size(3);
  Window2d& g = s.win;
  g.kh = weight.size(2);
  g.kw = weight.size(3);
  g.sh = stride[0];
  g.sw = stride[1];
  g.ph = padding[0];
  g.pw = padding[1];
  g.dh = dilation[0];
  g.dw = dilation[1];
  s.h = (s.oh - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + output_padding[0] + 1;
  s.w = (s.ow - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) + output_padding[1] + 1;
  if (s.h <= 0 || s.w <= 0) {
    throw ValueError(op_prefix(op) + "Given input size per channel: (" + std::to_string(s.oh) +
                     " x " + std::to_string(s.ow) + "). Calculated output size per channel: (" +
                     std::to_string(s.h) + " x " + std::to_string(s.w) +
                     "). Output size is too small");
  }
  g.in_h = s.h;
  g.in_w = s.w;
  g.out_h = s.oh;
  g.out_w = s.ow;
  Tensor y = autograd::no_grad([&] {
    Tensor out = conv_backward_input(x.contiguous(), weight.contiguous(), s);
    if (bias.defined()) out.add_(bias.view({1, s.c, 1, 1}));
    return out;
  });
  if (autograd::needs_grad({&x, &weight, &bias})) {
    autograd::record("ConvolutionBackward0", {x, weight, bias}, {y}, {x, weight},
                     [s](const TensorList& gr, const GradContext& c) {
                       const Tensor gy = gr[0].contiguous();
                       Tensor gx, gw, gb;
                       if (c.needs(0)) gx = conv_forward(gy, c.saved[1].contiguous(), {}, s);
                       if (c.needs(1)) {
                         gw = conv_backward_weight(c.saved[0].contiguous(), gy, s, false).first;
                       }
                       if (c.needs(2)) gb = gy.sum({0, 2, 3});
                       return TensorList{gx, gw, gb};
                     });
  }
  return batched ? y : y.squeeze(0);
}

// ---- pooling entry points -----------------------------------------------------------------------

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, Pair kernel_size,
                                                   Pair stride, Pair padding, Pair dilation,
                                                   bool ceil_mode) {
  const char* op = "max_pool2d";
  bool batched = false;
  const Tensor x4 = pool_input(op, input, batched);
  const Window2d g = pool_window(op, x4, kernel_size, stride, padding, dilation, ceil_mode, true);
  const Shape in_shape = x4.sizes(), out_shape{x4.size(0), x4.size(1), g.out_h, g.out_w};
  Tensor idx = make_empty(out_shape, kInt64, x4.device(), false, op);
  Tensor y = autograd::no_grad([&] {
    Tensor out = make_empty(out_shape, x4.dtype(), x4.device(), false, op);
    backend(x4.device()).max_pool2d(out, idx, x4.contiguous(), g);
    return out;
  });
  if (autograd::needs_grad({&x4})) {
    autograd::record("MaxPool2DWithIndicesBackward0", {x4}, {y}, {idx},
                     [g, in_shape](const TensorList& gr, const GradContext& c) {
                       const Tensor gy = gr[0].contiguous();
                       Tensor gx = make_empty(in_shape, gy.dtype(), gy.device(), false,
                                              "max_pool2d_backward");
                       backend(gy.device()).max_pool2d_backward(gx, gy, c.saved[0], g);
                       return TensorList{gx};
                     });
  }
  if (batched) return {y, idx};
  return {y.squeeze(0), idx.squeeze(0)};
}

Tensor avg_pool2d(const Tensor& input, Pair kernel_size, Pair stride, Pair padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  bool batched = false;
  const Tensor x4 = pool_input(op, input, batched);
  if (divisor_override && *divisor_override == 0) {
    throw ValueError(op_prefix(op) + "divisor must be not zero");
  }
  const Window2d g = pool_window(op, x4, kernel_size, stride, padding, {1, 1}, ceil_mode, false);
  AvgPool2dParams p;
  p.count_include_pad = count_include_pad;
  p.divisor_override = divisor_override.value_or(0);
  return avg_pool_impl(op, "AvgPool2DBackward0", input, g, p);
}

Tensor adaptive_avg_pool2d(const Tensor& input, Pair output_size) {
  const char* op = "adaptive_avg_pool2d";
  bool batched = false;
  const Tensor x4 = pool_input(op, input, batched);
  if (output_size[0] < 0 || output_size[1] < 0) {
    throw ValueError(op_prefix(op) + "output_size must be non-negative, got " +
                     tuple_str(output_size));
  }
  Window2d g;
  g.in_h = x4.size(2);
  g.in_w = x4.size(3);
  g.out_h = output_size[0];
  g.out_w = output_size[1];
  AvgPool2dParams p;
  p.adaptive = true;
  return avg_pool_impl(op, "AdaptiveAvgPool2DBackward0", input, g, p);
}

}  // namespace ember::ops
