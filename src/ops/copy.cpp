// copy_, to(), contiguous, clone, fill_, zero_, to_vector, item: moving and converting data.
#include "autograd/function.h"
#include "core/element_types.h"
#include "core/record_scope.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

// A transfer the host must wait for (to or from pageable memory) cannot be captured in a CUDA
// graph: the device's backend raises, naming op, while a capture is in progress.
void check_transfer_capturable(const char* op, const Tensor& dst, const Tensor& src,
                               bool non_blocking) {
  if (dst.is_cpu() == src.is_cpu()) return;
  const Tensor& host = dst.is_cpu() ? dst : src;
  const bool async = non_blocking && dst.dtype() == src.dtype() && host.is_contiguous() &&
                     (dst.is_cpu() || src.is_contiguous()) && host.is_pinned();
  if (async) return;
  const std::string what =
      dst.is_cpu()
          ? "it copies to pageable host memory and waits for the device; keep results on the "
            "device during capture (e.g. accumulate the loss into a device tensor) and read them "
            "after replay(), or copy into a pinned tensor with non_blocking=true"
          : "it copies from pageable host memory, which the host must wait for; fill the "
            "graph's static input tensors with copy_ before replay(), or copy from a pinned "
            "tensor with non_blocking=true";
  backend(dst.is_cpu() ? src.device() : dst.device()).check_host_sync(op, what);
}

// The write of copy_: every in-place op ends in this or another backend write, each of which
// bumps the storage's version once.
void copy_raw(Tensor& self, const Tensor& src, bool non_blocking, const char* op = "copy_") {
  check_transfer_capturable(op, self, src, non_blocking);
  if (self.numel() == 0) return;
  Tensor s = src.expand(self.sizes());
  if (self.storage()) self.storage()->bump_version();
  if (self.device() == s.device()) {
    if (s.is_same(self)) return;
    // A source that shares memory with the destination is read in full before any write.
    if (s.is_same_storage(self)) s = s.clone();
    backend(self.device()).copy(self, s);
    return;
  }
  // A transfer between the host and a device (or two devices) is done by the device's backend.
  backend(self.is_cpu() ? s.device() : self.device()).transfer(self, s, non_blocking);
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src, bool non_blocking) {
  EMBER_RECORD_OP("copy_", this, &src);
  if (!src.defined()) throw ValueError("[copy_] the source tensor is undefined");
  check_no_internal_overlap("copy_", *this);
  Shape shape = broadcast_shapes("copy_", sizes(), src.sizes());
  if (shape != sizes()) {
    throw ValueError("[copy_] the source of shape " + shape_str(src) +
                     " cannot be broadcast to the destination of shape " + shape_str(*this));
  }
  return autograd::inplace(
      "copy_", *this, {&src}, [&] { copy_raw(*this, src, non_blocking); },
      [&](const Tensor&) { return src.to(device(), dtype()).expand(sizes()); });
}

Tensor Tensor::to(Device device, DType dtype, bool non_blocking, bool copy) const {
  device = resolve_device(device);
  if (!copy && device == this->device() && dtype == this->dtype()) return *this;
  // As in PyTorch, a non-blocking transfer to the host lands in pinned memory, so it can
  // really be asynchronous.
  const bool pin_out = non_blocking && is_cuda() && device.is_cpu();
  Tensor out = make_empty(sizes(), dtype, device, pin_out, "to");
  copy_raw(out, *this, non_blocking, "to");
  if (autograd::needs_grad({this})) {
    // Back to where the input lives: a graph may span devices and dtypes.
    Device src_dev = this->device();
    DType src_t = this->dtype();
    autograd::record("ToCopyBackward0", {*this}, {out}, {},
                     [src_dev, src_t](const TensorList& g, const autograd::GradContext&) {
                       return TensorList{g[0].to(src_dev, src_t)};
                     });
  }
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
  if (autograd::needs_grad({this})) {
    autograd::record(
        "CloneBackward0", {*this}, {out}, {},
        [](const TensorList& g, const autograd::GradContext&) { return TensorList{g[0]}; });
  }
  return out;
}

Tensor& Tensor::fill_(Scalar value) {
  return autograd::inplace(
      "fill_", *this, {},
      [&] {
        if (storage()) storage()->bump_version();
        if (numel() > 0) backend(device()).fill(*this, value);
      },
      [&](const Tensor& s) {
        Tensor r = autograd::no_grad([&] { return full_like(s, value); });
        autograd::record_constant("FillBackward0", s, r);
        return r;
      });
}

Tensor& Tensor::zero_() { return fill_(0); }

namespace {
// The tensor's elements as T on the host; op names the caller in a capture error.
Tensor host_copy(const Tensor& t, DType dtype, const char* op) {
  if (t.is_cpu()) return t.to(dtype).contiguous();
  Tensor out = make_empty(t.sizes(), dtype, Device(kCPU), false, op);
  copy_raw(out, t, false, op);
  return out;
}
}  // namespace

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor host = host_copy(*this, dtype_of_v<T>, "to_vector");
  const T* p = host.data_ptr<T>();
  return std::vector<T>(p, p + host.numel());
}

template <class T>
T Tensor::item() const {
  if (numel() != 1) {
    throw ValueError("[item] a tensor with " + std::to_string(numel()) +
                     " elements cannot be converted to a scalar");
  }
  return host_copy(*this, dtype_of_v<T>, "item").template data_ptr<T>()[0];
}

Scalar Tensor::item() const {
  if (dtype() == kBool) return Scalar(item<bool>());
  if (is_integral(dtype())) return Scalar(item<int64_t>());
  return Scalar(item<double>());
}

#define EMBER_INSTANTIATE(T)                            \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
EMBER_FOR_EACH_ELEMENT_TYPE(EMBER_INSTANTIATE)
#undef EMBER_INSTANTIATE

}  // namespace ember
