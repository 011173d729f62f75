// amp::autocast: the guard over the thread-local autocast state of core/switches.h. The op layer
// reads that state and applies the policies (src/ops/autocast.cpp).
#include <string>

#include "core/switches.h"
#include "ember/amp.h"
#include "ember/error.h"

namespace ember::amp {

namespace {

int index_of(const char* op, DeviceType type) {
  if (type != kCPU && type != kCUDA) {
    throw ValueError(std::string("[") + op + "] unsupported device type " +
                     std::to_string(static_cast<int>(type)) + ": expected cpu or cuda");
  }
  return static_cast<int>(type);
}

const char* device_name(DeviceType type) { return type == kCUDA ? "cuda" : "cpu"; }

}  // namespace

autocast::autocast(DeviceType device_type, std::optional<DType> dtype, bool enabled,
                   bool cache_enabled)
    : device_type_(device_type) {
  const int i = index_of("autocast", device_type);
  AutocastState& s = t_autocast;
  // PyTorch's default: the device type's current dtype (float16 on CUDA, bfloat16 on the CPU,
  // unless an enclosing guard chose another).
  const DType target = dtype ? *dtype : s.dtype[i];
  const bool supported = target == kFloat16 || target == kBFloat16;
  if (enabled && !supported) {
    throw TypeError(std::string("[autocast] dtype ") + std::string(dtype_name(target)) +
                    " is not supported on device type " + device_name(device_type) +
                    ": autocast runs in float16 or bfloat16");
  }
  prev_enabled_ = s.enabled[i];
  prev_dtype_ = s.dtype[i];
  prev_cache_enabled_ = s.cache_enabled;
  s.enabled[i] = enabled;
  if (supported) s.dtype[i] = target;  // a disabled guard sets it too, as PyTorch's
  s.cache_enabled = cache_enabled;
  ++s.nesting;
}

autocast::~autocast() {
  AutocastState& s = t_autocast;
  const int i = static_cast<int>(device_type_);
  // PyTorch's rule: leaving the outermost guard drops the cached casts.
  if (--s.nesting == 0) autocast_cache_clear();
  s.enabled[i] = prev_enabled_;
  s.dtype[i] = prev_dtype_;
  s.cache_enabled = prev_cache_enabled_;
}

bool is_autocast_enabled(DeviceType device_type) {
  return t_autocast.enabled[index_of("is_autocast_enabled", device_type)];
}

DType get_autocast_dtype(DeviceType device_type) {
  return t_autocast.dtype[index_of("get_autocast_dtype", device_type)];
}

}  // namespace ember::amp
