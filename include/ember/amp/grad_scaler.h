// amp::GradScaler (torch.amp.GradScaler): dynamic loss scaling for mixed-precision training. The
// loss is multiplied by a scale so that float16 gradients do not underflow; before the optimizer
// steps, the gradients are checked for inf/NaN and unscaled in one fused pass; a step whose
// gradients overflowed is skipped and the scale backs off, and after growth_interval clean steps
// it grows.
//
//   amp::GradScaler scaler;                      // CUDA, init_scale 65536
//   scaler.scale(loss).backward();
//   scaler.unscale_(optimizer);                  // optional: before clipping
//   nn::utils::clip_grad_norm_(model->parameters(), 1.0);
//   scaler.step(optimizer);                      // skipped when a gradient is inf/NaN
//   scaler.update();
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/device.h"
#include "ember/nn/module.h"
#include "ember/optim/optimizer.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::amp {

class GradScalerOptions {
 public:
  GradScalerOptions() = default;
  // The device type the scaler serves (PyTorch's device="cuda"); a CUDA scaler on a machine
  // without a CUDA device disables itself with a warning, as PyTorch's does.
  EMBER_ARG(DeviceType, device) = kCUDA;
  EMBER_ARG(double, init_scale) = 65536.0;
  EMBER_ARG(double, growth_factor) = 2.0;      // > 1
  EMBER_ARG(double, backoff_factor) = 0.5;     // < 1
  EMBER_ARG(int64_t, growth_interval) = 2000;  // clean steps before the scale grows
  EMBER_ARG(bool, enabled) = true;  // disabled: scale() returns the loss, step() just steps
};

// Flat state dict ("scale", "growth_factor", "backoff_factor", "growth_interval",
// "_growth_tracker": 0-dim float64 / int64 CPU tensors); empty for a disabled scaler.
using GradScalerStateDict = OrderedDict<std::string, Tensor>;

class GradScaler {
 public:
  explicit GradScaler(GradScalerOptions options = {});
  ~GradScaler();
  GradScaler(const GradScaler&) = delete;
  GradScaler& operator=(const GradScaler&) = delete;

  // loss * scale (the scale is created on the loss's device by the first call). The parameters
  // the loss depends on are marked: clipping their gradients before unscale_ raises.
  Tensor scale(const Tensor& loss);
  // Divides the optimizer's gradients by the scale in place and records whether any was inf/NaN
  // (one fused pass per device and dtype, no host synchronisation). At most once per optimizer
  // between update()s; float16 gradients are refused (keep float32 master weights).
  void unscale_(optim::Optimizer& optimizer);
  // unscale_ (unless done), then optimizer.step() unless a gradient was inf/NaN; returns whether
  // it stepped. One host synchronisation.
  bool step(optim::Optimizer& optimizer);
  // Backs the scale off if any optimizer's gradients overflowed since the last update, else counts
  // toward growth; or sets the scale to new_scale. Call once per iteration, after step().
  void update(std::optional<double> new_scale = std::nullopt);
  // Sets the scale from a one-element float32 tensor on the scaler's device type.
  void update(const Tensor& new_scale);

  // The current scale (init_scale before the first scale(); 1.0 when disabled). Reads the device.
  double get_scale() const;
  int64_t get_growth_tracker() const;
  double get_growth_factor() const { return growth_factor_; }
  void set_growth_factor(double v) { growth_factor_ = v; }
  double get_backoff_factor() const { return backoff_factor_; }
  void set_backoff_factor(double v) { backoff_factor_ = v; }
  int64_t get_growth_interval() const { return growth_interval_; }
  void set_growth_interval(int64_t v) { growth_interval_ = v; }
  bool is_enabled() const { return enabled_; }

  // Names for last_overflow_parameter() (a module's named_parameters()).
  void set_parameter_names(const nn::NamedTensors& named_parameters);
  // After a skipped step: the first parameter (in the optimizer's group order) whose gradient was
  // inf or NaN, by name if set_parameter_names knows it, else "param group g, index i". Empty
  // before any skipped step; a later step that is not skipped keeps the last value.
  const std::optional<std::string>& last_overflow_parameter() const { return last_overflow_; }

  GradScalerStateDict state_dict() const;
  // Restores a state_dict(); raises naming the missing or malformed entry (and for an empty dict,
  // as PyTorch, saved from a disabled scaler). A disabled scaler ignores it.
  void load_state_dict(const GradScalerStateDict& state_dict);

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct DeviceCheck {
    Tensor found_inf;  // float32 one-element, on the gradients' device
    Tensor first_bad;  // int32 one-element: index into params of the first non-finite gradient
    std::vector<Tensor> params;                    // the parameters unscaled, in order
    std::vector<std::pair<size_t, size_t>> where;  // (group, index) of each
  };
  struct OptimizerState {
    Stage stage = Stage::Ready;
    std::vector<DeviceCheck> checks;  // one per device
    std::optional<bool> found_inf;    // known on the host after step()
  };

  void check_scale(const char* funcname) const;
  void lazy_init(Device device);
  void warn_if_below_one(double new_scale);

  DeviceType device_type_;
  bool enabled_;
  double init_scale_;
  double growth_factor_;
  double backoff_factor_;
  int64_t growth_interval_;
  int64_t init_growth_tracker_ = 0;
  Tensor scale_;           // float32 0-dim
  Tensor growth_tracker_;  // int32 0-dim
  bool scaled_since_update_ = false;
  std::unordered_map<const optim::Optimizer*, OptimizerState> per_optimizer_;
  // The scale as the host knows it without reading the device (for the below-1 warning).
  std::optional<double> host_scale_;
  int64_t host_tracker_ = 0;
  bool warned_below_one_ = false;
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::optional<std::string> last_overflow_;
};

}  // namespace ember::amp
