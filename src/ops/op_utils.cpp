// Shared op-layer helpers.
#include "ops/op_utils.h"

#include <vector>

namespace ember {

namespace {
[[noreturn]] void device_mismatch(const char* op, Device a, Device b) {
  throw Error(op_prefix(op) +
              "Expected all tensors to be on the same device, but found at least two devices, " +
              a.str() + " and " + b.str() + "!");
}

template <class It>
Device common_device_impl(const char* op, It first, It last) {
  bool have = false;
  Device dev(kCPU);
  bool have_scalar = false;
  for (It it = first; it != last; ++it) {
    const Tensor& t = **it;
    if (!t.defined()) continue;
    if (t.is_cpu() && t.dim() == 0) {
      have_scalar = true;
      continue;
    }
    if (!have) {
      dev = t.device();
      have = true;
    } else if (t.device() != dev) {
      device_mismatch(op, dev, t.device());
    }
  }
  if (!have && have_scalar) return Device(kCPU);
  return dev;
}
}  // namespace

Device common_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  return common_device_impl(op, tensors.begin(), tensors.end());
}

Device common_device(const char* op, const TensorList& tensors) {
  std::vector<const Tensor*> ptrs;
  ptrs.reserve(tensors.size());
  for (const Tensor& t : tensors) ptrs.push_back(&t);
  return common_device_impl(op, ptrs.begin(), ptrs.end());
}

Tensor to_operand(const Tensor& t, DType dtype, Device device) {
  if (t.dtype() == dtype && t.device() == device) return t;
  return t.to(device, dtype);
}

}  // namespace ember
