// Gradient clipping: one norm per gradient on its device, their norm on the first device, and an
// in-place scale by min(1, max_norm / (total + 1e-6)) without reading the norm on the host.
#include "ember/nn/utils.h"

#include <cmath>
#include <cstdio>

#include "ember/autograd.h"
#include "ember/ops.h"
#include "nn/scaled_grads.h"

namespace ember::nn::utils {

namespace {

// Python's str() of a float: "2.0", "inf", "0.5".
std::string py_float(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// Clipping a gradient that still holds GradScaler's scale clips the wrong norm: refuse it.
void check_not_scaled(const char* op, const std::vector<Tensor>& parameters) {
  const int64_t i = detail::first_scaled_grad(parameters);
  if (i < 0) return;
  throw Error(std::string("[") + op + "] the gradient of parameter " + std::to_string(i) +
              " still holds GradScaler's loss scale (scaler.scale(loss).backward() ran and "
              "scaler.unscale_(optimizer) has not yet): call scaler.unscale_(optimizer) before "
              "clipping, then scaler.step(optimizer)");
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  check_not_scaled("clip_grad_norm_", parameters);
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters) {
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return scalar_tensor(0.0, kFloat32);
  const Device first = grads[0].device();
  const DType dtype = grads[0].dtype();
  TensorList norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) norms.push_back(norm(g, norm_type).to(first, dtype));
  const Tensor total = norm(stack(norms), norm_type);
  if (error_if_nonfinite && !std::isfinite(total.item<double>())) {
    throw Error("[clip_grad_norm_] The total norm of order " + py_float(norm_type) +
                " for gradients from `parameters` is non-finite, so it cannot be clipped. To "
                "disable this error and scale the gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`");
  }
  const Tensor coef = total.add(1e-6).reciprocal().mul(max_norm).clamp(std::nullopt, 1.0);
  Device last = first;
  Tensor coef_here = coef;
  for (Tensor& g : grads) {
    if (g.device() != last) {
      coef_here = coef.to(g.device());
      last = g.device();
    }
    g.mul_(g.dtype() == coef_here.dtype() ? coef_here : coef_here.to(g.dtype()));
  }
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  check_not_scaled("clip_grad_value_", parameters);
  NoGradGuard no_grad;
  for (const Tensor& p : parameters) {
    if (!p.defined() || !p.grad().defined()) continue;
    Tensor g = p.grad();
    g.clamp_(-clip_value, clip_value);
  }
}

}  // namespace ember::nn::utils
