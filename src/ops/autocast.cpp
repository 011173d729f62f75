// Autocast's casts (PyTorch's cached_cast and its policies): which inputs an op's policy casts,
// to what, and the cache of parameter casts that lives for the outermost guard.
#include "ops/autocast.h"

#include <string>

#include "core/tensor_util.h"
#include "ember/error.h"

namespace ember::autocast {

namespace {

// PyTorch's is_eligible: a floating tensor of the autocast device type, float64 excluded.
bool eligible(const Tensor& t, DeviceType type) {
  return t.defined() && t.device().type() == type && is_floating_point(t.dtype()) &&
         t.dtype() != kFloat64;
}

// Casts t to dtype. Parameters (float32 leaves that require grad, not views) cast to the
// lower-precision dtype are cached while the outermost guard lives, so a weight used twice in a
// forward pass is cast once. The cast is an ordinary op: autograd records it and the gradient
// comes back in float32.
Tensor cached_cast(const Tensor& t, DType dtype, DeviceType type) {
  if (!eligible(t, type) || t.dtype() == dtype) return t;
  const bool cacheable = t_autocast.cache_enabled &&
                         dtype == t_autocast.dtype[static_cast<int>(type)] &&
                         t.dtype() == kFloat32 && t.requires_grad() && t.is_leaf() && !t.is_view();
  if (cacheable) {
    if (const Tensor* hit = autocast_cache_find(t, dtype)) return *hit;
  }
  Tensor cast = t.to(dtype);
  ++t_autocast.casts;
  if (cacheable) autocast_cache_store(t, dtype, cast);
  return cast;
}

}  // namespace

DType target_dtype(Op op, DeviceType type, const std::vector<Tensor>& inputs) {
  const DType lower = t_autocast.dtype[static_cast<int>(type)];
  switch (policy(op, type)) {
    case Policy::LowerPrecision:
      return lower;
    case Policy::Float32:
      return kFloat32;
    case Policy::Promote: {
      DType widest = lower;
      for (const Tensor& t : inputs) {
        if (eligible(t, type)) widest = promote_types(widest, t.dtype());
      }
      return widest;
    }
    default:
      return kFloat32;
  }
}

Scope::Scope(Op op, const Tensor& device, std::vector<Tensor> inputs) : inputs_(std::move(inputs)) {
  const DeviceType type = device.device().type();
  const OpInfo& info = kOps[static_cast<size_t>(op)];
  const Policy p = policy(op, type);
  if (p == Policy::Banned) {
    throw ValueError(op_prefix(info.name) +
                     "ember::nn::functional::binary_cross_entropy and nn::BCELoss are unsafe "
                     "to autocast. Many models use a sigmoid layer right before the binary "
                     "cross entropy layer. In this case, combine the two layers using "
                     "nn::functional::binary_cross_entropy_with_logits or "
                     "nn::BCEWithLogitsLoss. binary_cross_entropy_with_logits and "
                     "BCEWithLogitsLoss are safe to autocast.");
  }
  if (p == Policy::None) return;
  const DType dtype = target_dtype(op, type, inputs_);
  for (Tensor& t : inputs_) t = cached_cast(t, dtype, type);
}

uint64_t cast_count() { return t_autocast.casts; }

size_t cache_size() { return autocast_cache_size(); }

}  // namespace ember::autocast
