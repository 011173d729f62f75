// The loss scaler's device passes: the fused inf/NaN check and unscale of many gradients, grouped
// by device and dtype (one backend call each), and the scale's update.
#include <string>
#include <utility>
#include <vector>

#include "ember/grad_mode.h"
#include "ember/ops.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

constexpr const char* kUnscaleOp = "_amp_foreach_non_finite_check_and_unscale_";
constexpr const char* kUpdateOp = "_amp_update_scale_";

// A one-element tensor of dtype on device.
void check_flag(const char* op, const char* what, const Tensor& t, DType dtype, Device device) {
  if (!t.defined()) throw ValueError(op_prefix(op) + what + " is undefined");
  if (t.numel() != 1) {
    throw ValueError(op_prefix(op) + what + " must contain a single element, got " +
                     std::to_string(t.numel()));
  }
  if (t.dtype() != dtype) {
    throw TypeError(op_prefix(op) + what + " must be a " + std::string(dtype_name(dtype)) +
                    " tensor, got " + std::string(dtype_name(t.dtype())));
  }
  if (t.device() != device) {
    throw ValueError(op_prefix(op) + what + " is on " + t.device().str() +
                     ", different from the tensors on " + device.str());
  }
}

}  // namespace

void _amp_foreach_non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf,
                                                const Tensor& inv_scale,
                                                const Tensor& first_nonfinite) {
  NoGradGuard no_grad;  // an in-place update of gradients, never part of the graph
  if (grads.empty()) return;
  const Device dev = found_inf.defined() ? found_inf.device() : Device(kCPU);
  check_flag(kUnscaleOp, "found_inf", found_inf, kFloat32, dev);
  check_flag(kUnscaleOp, "inv_scale", inv_scale, kFloat32, dev);
  if (first_nonfinite.defined()) {
    check_flag(kUnscaleOp, "first_nonfinite", first_nonfinite, kInt32, dev);
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    const Tensor& g = grads[i];
    const std::string which = "grads[" + std::to_string(i) + "]";
    if (!g.defined()) throw ValueError(op_prefix(kUnscaleOp) + which + " is undefined");
    if (!g.is_floating_point()) {
      throw TypeError(op_prefix(kUnscaleOp) + which + " must be a floating point tensor, got " +
                      std::string(dtype_name(g.dtype())));
    }
    if (g.device() != dev) {
      throw ValueError(op_prefix(kUnscaleOp) + which + " is on " + g.device().str() +
                       ", different from found_inf and inv_scale on " + dev.str());
    }
  }
  std::vector<bool> done(grads.size(), false);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (done[i]) continue;
    const DType dt = grads[i].dtype();
    TensorList group;
    std::vector<int32_t> ids;
    // Non-contiguous gradients are unscaled in a contiguous copy and written back after.
    std::vector<std::pair<Tensor, Tensor>> write_back;
    for (size_t j = i; j < grads.size(); ++j) {
      if (done[j] || grads[j].dtype() != dt) continue;
      done[j] = true;
      if (grads[j].numel() == 0) continue;
      Tensor g = grads[j];
      if (!g.is_contiguous()) {
        g = g.contiguous();
        write_back.emplace_back(grads[j], g);
      }
      group.push_back(g);
      ids.push_back(static_cast<int32_t>(j));
    }
    if (group.empty()) continue;
    backend(dev).amp_unscale(group, ids, found_inf, inv_scale, first_nonfinite);
    for (auto& [dst, src] : write_back) dst.copy_(src);
  }
}

void _amp_update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                        double growth_factor, double backoff_factor, int64_t growth_interval) {
  NoGradGuard no_grad;
  const Device dev = scale.defined() ? scale.device() : Device(kCPU);
  check_flag(kUpdateOp, "scale", scale, kFloat32, dev);
  check_flag(kUpdateOp, "growth_tracker", growth_tracker, kInt32, dev);
  check_flag(kUpdateOp, "found_inf", found_inf, kFloat32, dev);
  if (growth_interval <= 0) {
    throw ValueError(op_prefix(kUpdateOp) + "growth_interval must be positive, got " +
                     std::to_string(growth_interval));
  }
  backend(dev).amp_update_scale(scale, growth_tracker, found_inf, growth_factor, backoff_factor,
                                growth_interval);
}

}  // namespace ember
