// ember::cuda device API over the CUDA runtime (the real cudart, or the emulator's shim).
#include <cstdio>
#include <string>

#include "alloc/caching_allocator.h"
#include "alloc/host_allocator.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_graph.h"
#include "dynload/nvml.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::cuda_detail {

void throw_cuda_error(cudaError_t err, const char* call) {
  cudaGetLastError();  // a non-sticky error must not leak into the next call
  throw Error(std::string("[cuda] ") + call + ": " + cudaGetErrorString(err));
}

void check_device(int device, const char* op) {
  int n = cuda::device_count();
  if (device < 0 || device >= n) {
    std::string msg = std::string("[") + op + "] invalid device ordinal " + std::to_string(device) +
                      ": " + std::to_string(n) + " CUDA device" + (n == 1 ? "" : "s") +
                      " available";
    if (n == 0) msg += " (no GPU or no CUDA driver was found)";
    throw Error(msg);
  }
}

}  // namespace ember::cuda_detail

namespace ember::alloc {
CachingAllocator& caching_allocator(int device);  // cuda_backend.cpp
CachingHostAllocator& host_allocator();           // cuda_backend.cpp
}  // namespace ember::alloc

namespace ember::cuda {

using cuda_detail::check_device;

int device_count() {
  // Computed once: a machine without a GPU or driver has 0 devices, never an error.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

bool is_available() { return device_count() > 0; }

DeviceProperties get_device_properties(int device) {
  check_device(device);
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProperties out;
  out.name = p.name;
  out.major = p.major;
  out.minor = p.minor;
  out.total_memory = p.totalGlobalMem;
  out.multi_processor_count = p.multiProcessorCount;
  out.l2_cache_size = static_cast<size_t>(p.l2CacheSize);
  return out;
}

std::string get_device_name(int device) { return get_device_properties(device).name; }

std::string device_uuid(int device) {
  check_device(device, "device_uuid");
  cudaDeviceProp p{};
  EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  const auto* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  char text[48];
  std::snprintf(text, sizeof text,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return text;
}

int current_device() {
  if (!is_available()) return 0;
  int d = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int device) {
  check_device(device);
  EMBER_CUDA_CHECK(cudaSetDevice(device));
}

void synchronize(int device) {
  cuda_detail::check_not_capturing("synchronize",
                                   "it waits for the device, which a capture forbids; synchronize "
                                   "after capture_end() or after replay() instead");
  if (device == -1) device = current_device();
  DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
  // Blocks held back for streams that used them are free now.
  alloc::caching_allocator(device).process_events();
  alloc::host_allocator().process_events();
}

DeviceGuard::DeviceGuard(int device) : original_(current_device()) {
  if (device != original_) set_device(device);
}

DeviceGuard::~DeviceGuard() {
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now != original_) cudaSetDevice(original_);
}

int runtime_version() {
  int v = 0;
  EMBER_CUDA_CHECK(cudaRuntimeGetVersion(&v));
  return v;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

}  // namespace ember::cuda

namespace ember::dynload {

NvmlLocator nvml_locator(int device) {
  NvmlLocator where;
#ifdef EMBER_CUDA_SIM
  (void)device;
  where.why_none = "an emulated device has no NVML counterpart";
#else
  cuda_detail::check_device(device, "device_health");
  char bus_id[32] = {};
  EMBER_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  where.kind = NvmlLocator::kPciBusId;
  where.pci_bus_id = bus_id;
#endif
  return where;
}

}  // namespace ember::dynload
