// The CUDA backend: its allocator, copies (with dtype conversion) on and between host and
// devices, and fill. Conversions between two device tensors run on the device.
#include "backend/cuda/cuda_backend.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "alloc/caching_allocator.h"
#include "alloc/host_allocator.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/elementwise.h"
#include "core/dispatch.h"
#include "ember/cuda.h"
#include "kernels/cast.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_detail::strided_of;

using alloc::EventHandle;
using alloc::StreamId;

StreamId stream_id(cudaStream_t s) { return reinterpret_cast<StreamId>(s); }
cudaStream_t stream_of(StreamId id) { return reinterpret_cast<cudaStream_t>(id); }

// Timing-free cudaEvents for the caching allocators, pooled per device. Never throws: an event
// that cannot be recorded is replaced by synchronizing its stream (nullptr: already complete).
class CudaEvents {
 public:
  EventHandle record(int device, StreamId stream) {
    cuda::DeviceGuard guard(device);
    Pooled* e = take(device);
    if (e != nullptr && cudaEventRecord(e->event, stream_of(stream)) == cudaSuccess) return e;
    cudaGetLastError();
    if (e != nullptr) release(e);
    cudaStreamSynchronize(stream_of(stream));
    cudaGetLastError();
    return nullptr;
  }
  bool query(EventHandle h) {
    const cudaError_t err = cudaEventQuery(static_cast<Pooled*>(h)->event);
    if (err == cudaSuccess) return true;
    cudaGetLastError();
    return err != cudaErrorNotReady;  // a failed device has nothing left to wait for
  }
  void synchronize(EventHandle h) {
    if (cudaEventSynchronize(static_cast<Pooled*>(h)->event) != cudaSuccess) cudaGetLastError();
  }
  void release(EventHandle h) {
    auto* e = static_cast<Pooled*>(h);
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(e);
  }

 private:
  struct Pooled {
    cudaEvent_t event = nullptr;
    int device = 0;
  };
  Pooled* take(int device) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = free_.begin(); it != free_.end(); ++it) {
        if ((*it)->device == device) {
          Pooled* e = *it;
          free_.erase(it);
          return e;
        }
      }
    }
    auto* e = new Pooled;
    e->device = device;
    if (cudaEventCreateWithFlags(&e->event, cudaEventDisableTiming) != cudaSuccess) {
      cudaGetLastError();
      delete e;
      return nullptr;
    }
    return e;
  }
  std::mutex mu_;
  std::vector<Pooled*> free_;
};

CudaEvents& cuda_events() {
  static auto* events = new CudaEvents;  // never destroyed: allocators outlive static destructors
  return *events;
}

// The device side of the caching allocator: cudaMalloc / cudaFree / cudaMemGetInfo.
class CudaRawAllocator final : public alloc::RawAllocator {
 public:
  void* malloc(size_t size, int device, alloc::StreamId stream) override {
    cuda::DeviceGuard guard(device);
    void* p = nullptr;
    // A graph's pool grows during its capture: cudaMalloc does not touch the stream, so it is
    // made in relaxed mode, which a global-mode capture would otherwise refuse (as PyTorch does).
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const bool capturing = stream != 0 &&
                           cudaStreamIsCapturing(stream_of(stream), &status) == cudaSuccess &&
                           status == cudaStreamCaptureStatusActive;
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    if (capturing) cudaThreadExchangeStreamCaptureMode(&mode);
    const cudaError_t err = cudaMalloc(&p, size);
    if (capturing) cudaThreadExchangeStreamCaptureMode(&mode);
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear the error: the allocator frees its cache and retries
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t, int device) override {
    cuda::DeviceGuard guard(device);
    cudaFree(ptr);  // never throws: called from destructors
  }
  alloc::MemInfo mem_get_info(int device) override {
    cuda::DeviceGuard guard(device);
    alloc::MemInfo info;
    if (cudaMemGetInfo(&info.free, &info.total) != cudaSuccess) cudaGetLastError();
    return info;
  }
  EventHandle record_event(int device, StreamId stream) override {
    return cuda_events().record(device, stream);
  }
  bool query_event(EventHandle e) override { return cuda_events().query(e); }
  void synchronize_event(EventHandle e) override { cuda_events().synchronize(e); }
  void release_event(EventHandle e) override { cuda_events().release(e); }
};

// Tensor storage on one device through its caching allocator, for the current stream.
class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int device) : cache_(device, raw_, alloc::alloc_conf_from_env()) {}

  DataPtr allocate(size_t nbytes) override {
    Device dev(kCUDA, cache_.device());
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, dev);
    cudaStream_t stream = current_stream(cache_.device());
    void* p = cache_.malloc(nbytes, stream_id(stream));
    if (int poison = device_alloc_poison(); poison >= 0) {
      cuda::DeviceGuard guard(cache_.device());
      EMBER_CUDA_CHECK(cudaMemsetAsync(p, poison, nbytes, stream));
    }
    return DataPtr(p, &cache_, &release, dev);
  }
  alloc::CachingAllocator& cache() { return cache_; }

 private:
  static void release(void* p, void* ctx) {
    try {
      static_cast<alloc::CachingAllocator*>(ctx)->free(p);
    } catch (...) {  // a destructor must not throw; an unknown pointer is a bug reported in tests
    }
  }
  CudaRawAllocator raw_;
  alloc::CachingAllocator cache_;
};

// Page-locked host memory: cudaHostAlloc / cudaFreeHost.
class CudaRawHostAllocator final : public alloc::RawHostAllocator {
 public:
  void* malloc(size_t size) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, size, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void free(void* ptr, size_t) override {
    if (cudaFreeHost(ptr) != cudaSuccess) cudaGetLastError();
  }
  EventHandle record_event(int device, StreamId stream) override {
    return cuda_events().record(device, stream);
  }
  bool query_event(EventHandle e) override { return cuda_events().query(e); }
  void synchronize_event(EventHandle e) override { cuda_events().synchronize(e); }
  void release_event(EventHandle e) override { cuda_events().release(e); }
};

// Pinned CPU tensor storage through the caching host allocator.
class PinnedAllocator final : public Allocator {
 public:
  PinnedAllocator() : cache_(raw_) {}
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device(kCPU));
    return DataPtr(cache_.malloc(nbytes), &cache_, &release, Device(kCPU));
  }
  alloc::CachingHostAllocator& cache() { return cache_; }

 private:
  static void release(void* p, void* ctx) {
    try {
      static_cast<alloc::CachingHostAllocator*>(ctx)->free(p);
    } catch (...) {  // a destructor must not throw
    }
  }
  CudaRawHostAllocator raw_;
  alloc::CachingHostAllocator cache_;
};

PinnedAllocator& pinned_allocator() {
  static auto* a = new PinnedAllocator;  // never destroyed: tensors may outlive statics
  return *a;
}

bool is_pinned_tensor(const Tensor& t) {
  return t.is_cpu() && pinned_allocator().cache().is_pinned(t.storage()->data());
}

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
  return make_empty(like.sizes(), TensorOptions().dtype(dtype).device(device));
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
  if (device.is_cpu()) {
    if (!pinned) return backend(kCPU).allocator(device);
    return pinned_allocator();
  }
  return device_allocator(device_index(device));
}

bool CudaBackend::is_pinned(const void* data) const {
  return pinned_allocator().cache().is_pinned(data);
}

namespace alloc {
CachingAllocator& caching_allocator(int device) {
  return device_allocator(device < 0 ? cuda::current_device() : device).cache();
}
CachingHostAllocator& host_allocator() { return pinned_allocator().cache(); }
}  // namespace alloc

void CudaBackend::copy(const Tensor& dst, const Tensor& src) { transfer(dst, src, false); }

void CudaBackend::transfer(const Tensor& dst, const Tensor& src, bool non_blocking) {
  if (dst.numel() == 0) return;
  const bool to_device = dst.is_cuda(), from_device = src.is_cuda();
  if (to_device && from_device) {
    if (dst.device() == src.device()) {
      copy_on_device(dst, src);
      return;
    }
    // Between two devices: a contiguous block is copied peer to peer on the source device's
    // current stream, which first waits for the destination's current stream; the destination's
    // stream then waits for the copy. A dtype conversion happens on the destination device.
    Tensor s = src.contiguous();
    const bool direct = dst.is_contiguous() && dst.dtype() == src.dtype();
    Tensor staging = direct ? dst : empty_on(dst, src.dtype(), dst.device());
    const int dst_index = device_index(dst.device()), src_index = device_index(src.device());
    const cuda::Stream src_stream = cuda::current_stream(src_index);
    const cuda::Stream dst_stream = cuda::current_stream(dst_index);
    src_stream.wait_stream(dst_stream);
    {
      cuda::DeviceGuard guard(src_index);
      EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(staging.data_ptr(), dst_index, s.data_ptr(), src_index,
                                           s.nbytes(), current_stream(src_index)));
    }
    dst_stream.wait_stream(src_stream);
    if (!direct) copy_on_device(dst, staging);
    return;
  }
  if (to_device) {
    const int index = device_index(dst.device());
    cuda::DeviceGuard guard(index);
    cudaStream_t stream = current_stream(index);
    Tensor staging = dst.is_contiguous() ? dst : empty_on(dst, dst.dtype(), dst.device());
    if (non_blocking && src.dtype() == dst.dtype() && src.is_contiguous() &&
        is_pinned_tensor(src)) {
      // From pinned memory the transfer is queued and the host goes on; the pinned block is
      // not reused before the transfer has run.
      EMBER_CUDA_CHECK(cudaMemcpyAsync(staging.data_ptr(), src.data_ptr(), dst.nbytes(),
                                       cudaMemcpyHostToDevice, stream));
      pinned_allocator().cache().record_stream(src.storage()->data(), index, stream_id(stream));
    } else {
      cuda_detail::check_not_capturing(
          "copy_",
          "a copy from pageable host memory waits for the host; fill the graph's static input "
          "tensors before replay(), or copy from a pinned tensor with non_blocking=true");
      // Convert and pack on the host, then one transfer the host waits for.
      Tensor h = src;
      if (h.dtype() != dst.dtype() || !h.is_contiguous()) h = src.to(dst.dtype(), false, true);
      EMBER_CUDA_CHECK(cudaMemcpyAsync(staging.data_ptr(), h.data_ptr(), dst.nbytes(),
                                       cudaMemcpyHostToDevice, stream));
      EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    if (!staging.is_same(dst)) copy_on_device(dst, staging);
    return;
  }
  // Device to host: pack on the device, one transfer, then convert and scatter on the host.
  const int index = device_index(src.device());
  cuda::DeviceGuard guard(index);
  cudaStream_t stream = current_stream(index);
  Tensor s = src.contiguous();
  const bool direct = dst.is_contiguous() && dst.dtype() == src.dtype();
  if (non_blocking && direct && is_pinned_tensor(dst)) {
    // Into pinned memory the host goes on at once; the caller synchronizes before reading.
    EMBER_CUDA_CHECK(
        cudaMemcpyAsync(dst.data_ptr(), s.data_ptr(), s.nbytes(), cudaMemcpyDeviceToHost, stream));
    pinned_allocator().cache().record_stream(dst.storage()->data(), index, stream_id(stream));
    return;
  }
  cuda_detail::check_not_capturing(
      "copy_",
      "a copy to pageable host memory waits for the device; keep results on the device during "
      "capture and read them after replay(), or copy into a pinned tensor with non_blocking=true");
  Tensor h = direct ? dst : empty_on(src, src.dtype(), Device(kCPU));
  EMBER_CUDA_CHECK(
      cudaMemcpyAsync(h.data_ptr(), s.data_ptr(), s.nbytes(), cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!direct) backend(kCPU).copy(dst, h);
}

void CudaBackend::check_host_sync(const char* op, const std::string& what) {
  cuda_detail::check_not_capturing(op, what);
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
