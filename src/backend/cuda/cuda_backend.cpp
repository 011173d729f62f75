// The CUDA backend: its allocator, copies (with dtype conversion) on and between host and
// devices, and fill. Conversions between two device tensors run on the device.
#include "backend/cuda/cuda_backend.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/elementwise.h"
#include "cuda/caching_allocator.h"
#include "core/dispatch.h"
#include "ember/cuda.h"
#include "kernels/cast.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_detail::strided_of;

// The device side of the caching allocator: cudaMalloc / cudaFree / cudaMemGetInfo.
class CudaRawAllocator final : public cuda::detail::RawAllocator {
 public:
  void* malloc(size_t size, int device, cuda::detail::StreamId) override {
    cuda::DeviceGuard guard(device);
    void* p = nullptr;
    if (cudaMalloc(&p, size) != cudaSuccess) {
      cudaGetLastError();  // clear the error: the allocator frees its cache and retries
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t, int device) override {
    cuda::DeviceGuard guard(device);
    cudaFree(ptr);  // never throws: called from destructors
  }
  cuda::detail::MemInfo mem_get_info(int device) override {
    cuda::DeviceGuard guard(device);
    cuda::detail::MemInfo info;
    if (cudaMemGetInfo(&info.free, &info.total) != cudaSuccess) cudaGetLastError();
    return info;
  }
};

// Tensor storage on one device through its caching allocator (the default stream for now).
class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device) : cache_(device, raw_) {}

  DataPtr allocate(size_t nbytes) override {
    Device dev(kCUDA, cache_.device());
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, dev);
    void* p = cache_.malloc(nbytes);
    if (int poison = device_alloc_poison(); poison >= 0) {
      cuda::DeviceGuard guard(cache_.device());
      EMBER_CUDA_CHECK(cudaMemsetAsync(p, poison, nbytes, cuda_detail::current_stream()));
    }
    return DataPtr(p, &cache_, &release, dev);
  }
  cuda::detail::CachingAllocator& cache() { return cache_; }

 private:
  static void release(void* p, void* ctx) {
    try {
      static_cast<cuda::detail::CachingAllocator*>(ctx)->free(p);
    } catch (...) {  // a destructor must not throw; an unknown pointer is a bug reported in tests
    }
  }
  CudaRawAllocator raw_;
  cuda::detail::CachingAllocator cache_;
};

// dst = src converted to dst's dtype, both on one device.
void copy_on_device(const Tensor& dst, const Tensor& src) {
  cuda::DeviceGuard guard(device_index(dst.device()));
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous()) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                                     cudaMemcpyDeviceToDevice, current_stream()));
    return;
  }
  const Tensor* ops[2] = {&dst, &src};
  EMBER_CUDA_CHECK(cuda_kernels::copy(dst.dtype(), src.dtype(), dst.data_ptr(), src.data_ptr(),
                                      strided_of(ops, "copy_"), dst.numel(), current_stream()));
}

Tensor empty_on(const Tensor& like, DType dtype, Device device) {
  return empty(like.sizes(), TensorOptions().dtype(dtype).device(device));
}

}  // namespace

namespace {
// One caching allocator per device, created on first use and never destroyed (tensors may
// outlive static destructors).
CudaAllocator& device_allocator(int index) {
  cuda_detail::check_device(index);
  static std::mutex mu;
  static auto* allocators = new std::vector<std::unique_ptr<CudaAllocator>>();
  std::lock_guard<std::mutex> lock(mu);
  if (allocators->empty()) allocators->resize(static_cast<size_t>(cuda::device_count()));
  auto& a = (*allocators)[static_cast<size_t>(index)];
  if (!a) a = std::make_unique<CudaAllocator>(index);
  return *a;
}
}  // namespace

Allocator& CudaBackend::allocator(Device device, bool pinned) {
  return device_allocator(device_index(device));
}

namespace cuda::detail {
CachingAllocator& caching_allocator(int device) {
  return device_allocator(device < 0 ? cuda::current_device() : device).cache();
}
}  // namespace cuda::detail

void CudaBackend::copy(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  const bool to_device = dst.is_cuda(), from_device = src.is_cuda();
  if (to_device && from_device) {
    if (dst.device() == src.device()) {
      copy_on_device(dst, src);
      return;
    }
    // Between two devices: a contiguous block is copied peer to peer, then converted and
    // scattered on the destination device.
    Tensor s = src.contiguous();
    const bool direct = dst.is_contiguous() && dst.dtype() == src.dtype();
    Tensor staging = direct ? dst : empty_on(dst, src.dtype(), dst.device());
    int dst_index = device_index(dst.device()), src_index = device_index(src.device());
    {
      cuda::DeviceGuard guard(dst_index);
      EMBER_CUDA_CHECK(
          cudaMemcpyPeer(staging.data_ptr(), dst_index, s.data_ptr(), src_index, s.nbytes()));
    }
    if (!direct) copy_on_device(dst, staging);
    return;
  }
  if (to_device) {
    // Host to device: pack on the host (converting there when that shrinks the transfer), one
    // transfer, then convert and scatter on the device.
    const DType wire = src.element_size() < dst.element_size() ? src.dtype() : dst.dtype();
    Tensor h = src;
    if (h.dtype() != wire || !h.is_contiguous()) h = src.to(wire, false, true);
    const bool direct = dst.is_contiguous() && dst.dtype() == wire;
    Tensor staging = direct ? dst : empty_on(dst, wire, dst.device());
    {
      cuda::DeviceGuard guard(device_index(dst.device()));
      EMBER_CUDA_CHECK(
          cudaMemcpy(staging.data_ptr(), h.data_ptr(), h.nbytes(), cudaMemcpyHostToDevice));
    }
    if (!direct) copy_on_device(dst, staging);
    return;
  }
  // Device to host: pack on the device (converting there when that shrinks the transfer), one
  // transfer, then convert and scatter on the host.
  const DType wire = dst.element_size() < src.element_size() ? dst.dtype() : src.dtype();
  Tensor s = src;
  if (s.dtype() != wire || !s.is_contiguous()) {
    s = empty_on(src, wire, src.device());
    copy_on_device(s, src);
  }
  const bool direct = dst.is_contiguous() && dst.dtype() == wire;
  Tensor h = direct ? dst : empty_on(src, wire, Device(kCPU));
  {
    cuda::DeviceGuard guard(device_index(src.device()));
    EMBER_CUDA_CHECK(cudaMemcpy(h.data_ptr(), s.data_ptr(), s.nbytes(), cudaMemcpyDeviceToHost));
  }
  if (!direct) backend(kCPU).copy(dst, h);
}

void CudaBackend::fill(const Tensor& dst, Scalar value) {
  if (dst.numel() == 0) return;
  // The value is converted once on the host; the kernel only stores its bytes.
  uint64_t pattern = 0;
  visit_dtype(dst.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if (value.is_floating_point())
      v = cast<T>(value.to_double());
    else if (value.is_bool())
      v = cast<T>(value.to_bool());
    else
      v = cast<T>(value.to_long());
    std::memcpy(&pattern, &v, sizeof(T));
  });
  cuda::DeviceGuard guard(device_index(dst.device()));
  const Tensor* ops[1] = {&dst};
  EMBER_CUDA_CHECK(cuda_kernels::fill(dst.data_ptr(), pattern, static_cast<int>(dst.element_size()),
                                      strided_of(ops, "fill_"), dst.numel(), current_stream()));
}

CudaBackend& cuda_backend() {
  static CudaBackend b;
  return b;
}

Backend* builtin_cuda_backend() { return &cuda_backend(); }

namespace {
// Installs the backend when the library is loaded.
[[maybe_unused]] const bool registered = [] {
  register_backend(kCUDA, &cuda_backend());
  return true;
}();
}  // namespace

}  // namespace ember
