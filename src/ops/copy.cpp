// copy_, to(), contiguous, clone, fill_, zero_: moving and converting data.
#include "ops/op_utils.h"

namespace ember {

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  if (!src.defined()) throw ValueError("[copy_] the source tensor is undefined");
  Shape shape = broadcast_shapes("copy_", sizes(), src.sizes());
  if (shape != sizes()) {
    throw ValueError("[copy_] the source of shape " + shape_str(src) +
                     " cannot be broadcast to the destination of shape " + shape_str(*this));
  }
  if (numel() == 0) return *this;
  Tensor s = src.expand(sizes());
  if (device() == s.device()) {
    if (s.is_same(*this)) return *this;
    // A source that shares memory with the destination is read in full before any write.
    if (s.is_same_storage(*this)) s = s.clone();
    backend(device()).copy(*this, s);
    return *this;
  }
  // A transfer between the host and a device (or two devices) is done by the device's backend.
  backend(is_cpu() ? s.device() : device()).transfer(*this, s, non_blocking);
  return *this;
}

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  device = resolve_device(device);
  if (!copy && device == this->device() && dtype == this->dtype()) return *this;
  // As in PyTorch, a non-blocking transfer to the host lands in pinned memory, so it can
  // really be asynchronous.
  const bool pin_out = non_blocking && is_cuda() && device.is_cpu();
  Tensor out = make_empty(sizes(), dtype, device, pin_out, "to");
  out.copy_(*this, non_blocking);
  return out;
}

bool Tensor::is_pinned() const {
  if (!is_cpu() || storage()->data() == nullptr) return false;
  Backend* cuda = cuda_backend_if_present();
  return cuda != nullptr && cuda->is_pinned(storage()->data());
}

Tensor Tensor::pin_memory() const {
  if (!is_cpu()) {
    throw ValueError("[pin_memory] only CPU tensors can be pinned, got a tensor on " +
                     device().str());
  }
  if (is_pinned()) return *this;
  Tensor out = make_empty(sizes(), dtype(), device(), true, "pin_memory");
  if (numel() > 0) backend(kCPU).copy(out, *this);
  return out;
}

Tensor Tensor::to(Device device, bool non_blocking, bool copy) const {
  return to(device, dtype(), non_blocking, copy);
}

Tensor Tensor::to(DType dtype, bool non_blocking, bool copy) const {
  return to(device(), dtype, non_blocking, copy);
}

Tensor Tensor::to(const TensorOptions& options, bool non_blocking, bool copy) const {
  return to(options.device(), options.has_dtype() ? options.dtype() : dtype(), non_blocking, copy);
}

Tensor Tensor::cuda(int index) const { return to(Device(kCUDA, index)); }

Tensor Tensor::cpu() const { return to(Device(kCPU)); }

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = make_empty(sizes(), dtype(), device(), false, "clone");
  if (numel() > 0) backend(device()).copy(out, *this);
  return out;
}

Tensor& Tensor::fill_(Scalar value) {
  if (numel() > 0) backend(device()).fill(*this, value);
  return *this;
}

Tensor& Tensor::zero_() { return fill_(0); }

}  // namespace ember
