// Mixed precision (torch.amp): autocast, the thread-local guard that runs the matrix products and
// convolutions of a forward pass in a 16-bit float and the numerically sensitive ops in float32,
// and GradScaler (ember/amp/grad_scaler.h), the dynamic loss scaler.
// docs/amp.md lists which op gets which policy on each device type.
#pragma once

#include <optional>

#include "ember/amp/grad_scaler.h"
#include "ember/device.h"
#include "ember/dtype.h"

namespace ember::amp {

// RAII, nestable, thread-local: `amp::autocast guard(kCUDA, kBFloat16);`. On construction it sets
// autocast for device_type on this thread (dtype defaults to the device type's current one:
// float16 on CUDA, bfloat16 on the CPU, unless an enclosing guard chose another; enabled=false
// turns it off inside an enclosing guard) and whether the casts of float32 parameters are cached;
// the destructor restores what was there. The cache lives until the outermost guard exits. Only
// float16 and bfloat16 are accepted (TypeError naming dtype and device type otherwise).
class autocast {
 public:
  explicit autocast(DeviceType device_type, std::optional<DType> dtype = std::nullopt,
                    bool enabled = true, bool cache_enabled = true);
  ~autocast();
  autocast(const autocast&) = delete;
  autocast& operator=(const autocast&) = delete;

 private:
  DeviceType device_type_;
  bool prev_enabled_;
  DType prev_dtype_;
  bool prev_cache_enabled_;
};

// Whether autocast is on for device_type on this thread.
bool is_autocast_enabled(DeviceType device_type);
// The dtype autocast casts to on device_type (its default when no guard set one).
DType get_autocast_dtype(DeviceType device_type);

}  // namespace ember::amp
