// batch_norm, layer_norm, group_norm, rms_norm, dropout and embedding: argument checks, then the
// backend's fused kernels (kernels/norm_ops.h describes the shared geometry) and one autograd node
// whose backward is the backend's fused backward; dropout2d is composed of ops. Entry points of
// ops/nn_ops.h.
#include <sstream>

#include "autograd/function.h"
#include "ember/random.h"
#include "kernels/norm_ops.h"
#include "ops/autocast.h"
#include "ops/nn_ops.h"
#include "ops/op_utils.h"

namespace ember::ops {

namespace {

using autograd::GradContext;

DType stat_dtype(DType t) { return t == kFloat64 ? kFloat64 : kFloat32; }

std::string sizes_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

void check_defined(const char* op, const Tensor& t, const char* what) {
  if (!t.defined()) throw ValueError(op_prefix(op) + "the " + what + " tensor is undefined");
}

void check_float_input(const char* op, const Tensor& input) {
  check_defined(op, input, "input");
  if (!is_floating_point(input.dtype())) {
    throw TypeError(op_prefix(op) + "expected a floating point input, got dtype " +
                    std::string(dtype_name(input.dtype())));
  }
}

// weight or bias as a contiguous (n) tensor of the input's dtype (still differentiable).
Tensor affine_operand(const char* op, const char* what, const Tensor& t, const Tensor& input,
                      int64_t n) {
  if (!t.defined()) return t;
  if (t.numel() != n) {
    throw ValueError(op_prefix(op) + what + " should contain " + std::to_string(n) +
                     " elements not " + std::to_string(t.numel()));
  }
  common_device(op, {&input, &t});
  Tensor r = t.dtype() == input.dtype() ? t : t.to(input.dtype());
  return r.reshape({n}).contiguous();
}

// run_norm's backward written with differentiable ops, for create_graph: the batch statistics
// are recomputed from x so that second derivatives see their dependence on x.
TensorList composite_backward(const Tensor& dy, const Tensor& x, const Tensor& w,
                              const Tensor& saved_mean, const Tensor& saved_rstd,
                              const NormParams& p, bool need_x, bool need_w, bool need_b) {
  Shape s, ws;
  std::vector<int64_t> red, channel_sum;
  if (p.per_channel) {
    s = {p.batch, p.channels, p.inner};
    ws = {1, p.channels, 1};
    red = channel_sum = {0, 2};
  } else {
    const int64_t cpg = p.channels / p.groups;
    s = {p.batch, p.groups, cpg, p.inner};
    ws = {1, p.groups, cpg, 1};
    red = {2, 3};
    channel_sum = {0, 3};
  }
  const Tensor X = x.reshape(s);
  const Tensor D = (dy.dtype() == x.dtype() ? dy : dy.to(x.dtype())).reshape(s);
  Tensor xhat, rstd;
  if (!p.batch_stats) {
    rstd = saved_rstd.to(x.dtype()).view(ws);
    xhat = (X - saved_mean.to(x.dtype()).view(ws)) * rstd;
  } else if (p.rms) {
    rstd = ((X * X).mean(red, true) + p.eps).rsqrt();
    xhat = X * rstd;
  } else {
    rstd = (X.var(red, 0, true) + p.eps).rsqrt();
    xhat = (X - X.mean(red, true)) * rstd;
  }
  Tensor gin, gw, gb;
  if (need_x) {
    const Tensor g = w.defined() ? D * w.view(ws) : D;
    if (!p.batch_stats) {
      gin = g * rstd;
    } else {
      Tensor centred = p.rms ? g : g - g.mean(red, true);
      gin = rstd * (centred - xhat * (g * xhat).mean(red, true));
    }
    gin = gin.reshape(x.sizes());
  }
  if (need_w) gw = (D * xhat).sum(channel_sum).reshape({p.channels});
  if (need_b) gb = D.sum(channel_sum).reshape({p.channels});
  return {gin, gw, gb};
}

// Statistics (computed unless given), normalise + affine, and the node whose backward is the
// backend's fused backward.
Tensor run_norm(const char* node, const Tensor& input, const Tensor& weight, const Tensor& bias,
                const NormParams& p, Tensor mean = {}, Tensor rstd = {},
                const Tensor& running_mean = {}, const Tensor& running_var = {}) {
  Backend& be = backend(input.device());
  Tensor x, out;
  {
    NoGradGuard ng;
    x = input.contiguous();
    if (!mean.defined()) {
      const TensorOptions o = TensorOptions(stat_dtype(input.dtype())).device(input.device());
      mean = empty({p.stats()}, o);
      rstd = empty({p.stats()}, o);
      be.norm_stats(mean, rstd, x, p, running_mean, running_var);
    }
    out = empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
    be.norm_forward(out, x, mean, rstd, weight, bias, p);
  }
  if (!autograd::needs_grad({&input, &weight, &bias})) return out;
  const Shape shape = input.sizes();
  autograd::record(
      node, {input, weight, bias}, {out}, {input, weight, mean, rstd},
      [p, shape](const TensorList& g, const GradContext& c) {
        const Tensor& w = c.saved[1];
        if (is_grad_enabled()) {
          return composite_backward(g[0], c.saved[0], w, c.saved[2], c.saved[3], p, c.needs(0),
                                    c.needs(1), c.needs(2));
        }
        const Tensor xs = c.saved[0].contiguous();
        const TensorOptions o = TensorOptions(xs.dtype()).device(xs.device());
        Tensor dy = g[0].dtype() == xs.dtype() ? g[0] : g[0].to(xs.dtype());
        dy = dy.contiguous();
        Tensor gin = c.needs(0) ? empty(shape, o) : Tensor();
        Tensor gw = c.needs(1) ? empty({p.channels}, o) : Tensor();
        Tensor gb = c.needs(2) ? empty({p.channels}, o) : Tensor();
        backend(xs.device()).norm_backward(gin, gw, gb, dy, xs, c.saved[2], c.saved[3], w, p);
        return TensorList{gin, gw, gb};
      });
  return out;
}

// The running statistic in the input's dtype, contiguous, for the kernel to update in place.
Tensor running_operand(const Tensor& t, const Tensor& input) {
  if (!t.defined()) return t;
  if (t.dtype() == input.dtype() && t.is_contiguous()) return t;
  return t.to(input.dtype()).contiguous();
}

// The normalized_shape checks of layer_norm and rms_norm; returns the normalised numel.
int64_t check_normalized_shape(const char* op, const Tensor& input,
                               const std::vector<int64_t>& shape) {
  const int64_t k = static_cast<int64_t>(shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  int64_t n = 1;
  for (int64_t i = 0; i < k; ++i) {
    if (shape[i] < 0) ok = false;
    if (ok && input.size(input.dim() - k + i) != shape[i]) ok = false;
    n *= shape[i];
  }
  if (!ok) {
    std::string star = "[*";
    for (int64_t s : shape) star += ", " + std::to_string(s);
    throw ValueError(op_prefix(op) + "Given normalized_shape=" + sizes_str(shape) +
                     ", expected input with shape " + star + "], but got input of size" +
                     shape_str(input));
  }
  return n;
}

void check_affine_shape(const char* op, const char* what, const Tensor& t,
                        const std::vector<int64_t>& shape) {
  if (t.defined() && t.sizes() != Shape(shape)) {
    throw ValueError(op_prefix(op) + "Expected " + what + " to be of same shape as " +
                     "normalized_shape, but got " + what + " of shape " + shape_str(t) +
                     " and normalized_shape = " + sizes_str(shape));
  }
}

double dtype_eps(DType t) {
  switch (t) {
    case kFloat16:
      return 0.0009765625;
    case kBFloat16:
      return 0.0078125;
    case kFloat64:
      return 2.220446049250313e-16;
    default:
      return 1.1920928955078125e-07;
  }
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
  const char* op = "batch_norm";
  check_float_input(op, input);
  if (input.dim() < 2) {
    throw ValueError(op_prefix(op) + "expected an input with at least 2 dims (N, C, *), got " +
                     shape_str(input));
  }
  const int64_t c = input.size(1);
  auto check_running = [&](const char* what, const Tensor& t) {
    if (!t.defined()) return;
    if (t.numel() != c) {
      throw ValueError(op_prefix(op) + what + " should contain " + std::to_string(c) +
                       " elements not " + std::to_string(t.numel()));
    }
    common_device(op, {&input, &t});
  };
  check_running("running_mean", running_mean);
  check_running("running_var", running_var);
  if (running_mean.defined() != running_var.defined()) {
    throw ValueError(op_prefix(op) +
                     "running_mean and running_var must both be given or both be "
                     "undefined");
  }
  const Tensor w = affine_operand(op, "weight", weight, input, c);
  const Tensor b = affine_operand(op, "bias", bias, input, c);
  NormParams p;
  p.batch = input.size(0);
  p.channels = c;
  p.inner = c == 0 || p.batch == 0 ? 0 : input.numel() / (p.batch * c);
  p.per_channel = true;
  p.batch_stats = training;
  p.eps = eps;
  p.momentum = momentum;
  if (training) {
    if (p.batch * p.inner <= 1) {
      throw ValueError(op_prefix(op) +
                       "Expected more than 1 value per channel when training, "
                       "got input size " +
                       shape_str(input));
    }
    const Tensor rm = running_operand(running_mean, input);
    const Tensor rv = running_operand(running_var, input);
    Tensor out = run_norm("NativeBatchNormBackward0", input, w, b, p, {}, {}, rm, rv);
    NoGradGuard ng;
    if (rm.defined() && !rm.is_same(running_mean)) Tensor(running_mean).copy_(rm);
    if (rv.defined() && !rv.is_same(running_var)) Tensor(running_var).copy_(rv);
    return out;
  }
  if (!running_mean.defined()) {
    throw ValueError(op_prefix(op) +
                     "running_mean and running_var must be defined when not "
                     "training");
  }
  Tensor mean, rstd;
  {
    NoGradGuard ng;
    const DType sd = stat_dtype(input.dtype());
    mean = running_mean.to(sd).contiguous();
    rstd = (running_var.to(sd) + eps).rsqrt().contiguous();
  }
  return run_norm("NativeBatchNormBackward0", input, w, b, p, mean, rstd);
}

Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight, const Tensor& bias, double eps) {
  if (autocast::active(autocast::Op::layer_norm, input)) {
    autocast::Scope s(autocast::Op::layer_norm, input, {input, weight, bias});
    return layer_norm(s[0], normalized_shape, s[1], s[2], eps);
  }
  const char* op = "layer_norm";
  check_float_input(op, input);
  const int64_t n = check_normalized_shape(op, input, normalized_shape);
  check_affine_shape(op, "weight", weight, normalized_shape);
  check_affine_shape(op, "bias", bias, normalized_shape);
  NormParams p;
  p.batch = n == 0 ? 0 : input.numel() / n;
  p.channels = n;
  p.eps = eps;
  return run_norm("NativeLayerNormBackward0", input, affine_operand(op, "weight", weight, input, n),
                  affine_operand(op, "bias", bias, input, n), p);
}

Tensor rms_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                const Tensor& weight, std::optional<double> eps) {
  const char* op = "rms_norm";
  check_float_input(op, input);
  const int64_t n = check_normalized_shape(op, input, normalized_shape);
  check_affine_shape(op, "weight", weight, normalized_shape);
  NormParams p;
  p.batch = n == 0 ? 0 : input.numel() / n;
  p.channels = n;
  p.rms = true;
  p.eps = eps ? *eps : dtype_eps(input.dtype());
  return run_norm("RmsNormBackward0", input, affine_operand(op, "weight", weight, input, n), {}, p);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (autocast::active(autocast::Op::group_norm, input)) {
    autocast::Scope s(autocast::Op::group_norm, input, {input, weight, bias});
    return group_norm(s[0], num_groups, s[1], s[2], eps);
  }
  const char* op = "group_norm";
  check_float_input(op, input);
  if (input.dim() < 2) {
    throw ValueError(op_prefix(op) +
                     "Expected at least 2 dimensions for input tensor but "
                     "received " +
                     std::to_string(input.dim()));
  }
  const int64_t c = input.size(1);
  if (num_groups <= 0 || c % num_groups != 0) {
    throw ValueError(op_prefix(op) +
                     "Expected number of channels in input to be divisible by "
                     "num_groups, but got input of shape " +
                     shape_str(input) + " and num_groups=" + std::to_string(num_groups));
  }
  NormParams p;
  p.batch = input.size(0);
  p.channels = c;
  p.inner = c == 0 || p.batch == 0 ? 0 : input.numel() / (p.batch * c);
  p.groups = num_groups;
  p.eps = eps;
  return run_norm("NativeGroupNormBackward0", input, affine_operand(op, "weight", weight, input, c),
                  affine_operand(op, "bias", bias, input, c), p);
}

Tensor dropout(const Tensor& input, double p, bool training) {
  const char* op = "dropout";
  check_defined(op, input, "input");
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream os;
    os << op_prefix(op) << "dropout probability has to be between 0 and 1, but got " << p;
    throw ValueError(os.str());
  }
  if (!training || p == 0.0) return input;
  check_float_input(op, input);
  if (p == 1.0) return input * 0.0;
  Tensor out, mask;
  {
    NoGradGuard ng;
    const Tensor x = input.contiguous();
    out = empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
    mask = empty(input.sizes(), TensorOptions(kBool).device(input.device()));
    const GeneratorState s = default_generator(input.device()).reserve(1);
    backend(input.device()).dropout(out, mask, x, p, s.seed, s.offset);
  }
  if (autograd::needs_grad({&input})) {
    const double scale = 1.0 / (1.0 - p);
    autograd::record("NativeDropoutBackward0", {input}, {out}, {mask},
                     [scale](const TensorList& g, const GradContext& c) {
                       return TensorList{where(c.saved[0], g[0] * scale, 0.0)};
                     });
  }
  return out;
}

Tensor dropout2d(const Tensor& input, double p, bool training) {
  const char* op = "dropout2d";
  check_defined(op, input, "input");
  if (!(p >= 0.0 && p <= 1.0)) {
    std::ostringstream os;
    os << op_prefix(op) << "dropout probability has to be between 0 and 1, but got " << p;
    throw ValueError(os.str());
  }
  if (input.dim() != 3 && input.dim() != 4) {
    throw ValueError(op_prefix(op) + "expected a 3D (C, H, W) or 4D (N, C, H, W) input, got " +
                     shape_str(input));
  }
  if (!training || p == 0.0) return input;
  check_float_input(op, input);
  if (p == 1.0) return input * 0.0;
  // One draw per channel, broadcast over the spatial dims.
  Shape noise;
  for (int64_t d = 0; d < input.dim(); ++d)
    noise.push_back(d + 2 < input.dim() ? input.size(d) : 1);
  const Tensor keep =
      bernoulli(empty(noise, TensorOptions(input.dtype()).device(input.device())), 1.0 - p);
  return input * (keep * (1.0 / (1.0 - p)));
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  const char* op = "embedding";
  if (!padding_idx) return ember::embedding(weight, input);
  check_defined(op, weight, "weight");
  if (weight.dim() != 2) {
    throw ValueError(op_prefix(op) +
                     "weight must be 2-D (num_embeddings, embedding_dim), got "
                     "shape " +
                     shape_str(weight));
  }
  const int64_t num = weight.size(0);
  int64_t pad = *padding_idx;
  if (pad < -num || pad >= num) {
    throw ValueError(op_prefix(op) + "padding_idx must be within num_embeddings, got " +
                     std::to_string(pad) + " for " + std::to_string(num) + " embeddings");
  }
  if (pad < 0) pad += num;
  if (!autograd::needs_grad({&weight})) return ember::embedding(weight, input);
  Tensor out = autograd::no_grad([&] { return ember::embedding(weight, input); });
  const Shape sw = weight.sizes();
  autograd::record(
      "EmbeddingBackward0", {weight}, {out}, {input},
      [sw, pad](const TensorList& g, const GradContext& c) {
        const Tensor flat = c.saved[0].reshape({-1}).to(kInt64);
        Tensor gw = index_put(zeros(sw, g[0].options()), {flat}, g[0].reshape({-1, sw[1]}), true);
        // The padding row gets no gradient.
        gw.narrow(0, pad, 1).zero_();
        return TensorList{gw};
      });
  return out;
}

}  // namespace ember::ops
