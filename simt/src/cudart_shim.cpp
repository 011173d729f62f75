// The host CUDA runtime for emulated builds: errors, devices, memory and kernel launches,
// compiled against the real cuda_runtime_api.h so every signature is checked. Streams, events
// and graphs are in cudart_streams.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "shim_state.h"

namespace simt::detail {

namespace {

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local int t_device = 0;

std::size_t parse_bytes(const char* text, std::size_t fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || value < 0) return fallback;
  double scale = 1;
  switch (*end) {
    case 'k':
    case 'K':
      scale = 1024.0;
      break;
    case 'm':
    case 'M':
      scale = 1024.0 * 1024;
      break;
    case 'g':
    case 'G':
      scale = 1024.0 * 1024 * 1024;
      break;
    case 't':
    case 'T':
      scale = 1024.0 * 1024 * 1024 * 1024;
      break;
    default:
      break;
  }
  return static_cast<std::size_t>(value * scale);
}

constexpr std::size_t kDefaultDynamicShared = 48 * 1024;

// The allocation containing p, or nullptr; *offset is p's offset into it.
const Allocation* find_allocation(const void* p, std::size_t* offset) {
  auto& allocations = shim().allocations;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocations.upper_bound(addr);
  if (it == allocations.begin()) return nullptr;
  --it;
  if (addr >= it->first + it->second.size && !(addr == it->first && it->second.size == 0)) {
    return nullptr;
  }
  *offset = addr - it->first;
  return &it->second;
}

std::string describe(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

// A device range [p, p + extent) must lie inside one allocation.
cudaError_t check_extent(const char* api, const char* role, const Allocation* a, std::size_t offset,
                         std::size_t extent, const void* p) {
  if (a != nullptr && extent > a->size - offset) {
    return fail(cudaErrorInvalidValue, std::string(api) + ": " + role + " " + describe(p) + " + " +
                                           std::to_string(extent) +
                                           " bytes passes the end of its " +
                                           std::to_string(a->size) + "-byte allocation (offset " +
                                           std::to_string(offset) + ")");
  }
  return cudaSuccess;
}

// Checks a copy's direction against the registry and its extents against the allocations.
cudaError_t check_copy(const char* api, void* dst, std::size_t dst_extent, const void* src,
                       std::size_t src_extent, cudaMemcpyKind kind) {
  std::size_t dst_off = 0, src_off = 0;
  const Allocation* d = find_allocation(dst, &dst_off);
  const Allocation* s = find_allocation(src, &src_off);
  const bool dst_dev = d && !d->pinned, src_dev = s && !s->pinned;
  if (dst == nullptr || src == nullptr) {
    return fail(cudaErrorInvalidValue, std::string(api) + ": null pointer");
  }
  auto wrong = [&](const char* what) {
    return fail(cudaErrorInvalidValue, std::string(api) + ": " + what + " (dst " + describe(dst) +
                                           ", src " + describe(src) + ")");
  };
  switch (kind) {
    case cudaMemcpyHostToHost:
      if (dst_dev || src_dev) return wrong("cudaMemcpyHostToHost with device memory");
      break;
    case cudaMemcpyHostToDevice:
      if (!dst_dev)
        return wrong("cudaMemcpyHostToDevice into memory that is not a device allocation");
      if (src_dev) return wrong("cudaMemcpyHostToDevice from device memory");
      break;
    case cudaMemcpyDeviceToHost:
      if (!src_dev)
        return wrong("cudaMemcpyDeviceToHost from memory that is not a device allocation");
      if (dst_dev) return wrong("cudaMemcpyDeviceToHost into device memory");
      break;
    case cudaMemcpyDeviceToDevice:
      if (!dst_dev || !src_dev) return wrong("cudaMemcpyDeviceToDevice with a non-device pointer");
      break;
    case cudaMemcpyDefault:
      break;
    default:
      return fail(cudaErrorInvalidMemcpyDirection,
                  std::string(api) + ": invalid copy kind " + std::to_string(kind));
  }
  if (auto e = check_extent(api, "destination", d, dst_off, dst_extent, dst)) return e;
  return check_extent(api, "source", s, src_off, src_extent, src);
}

cudaError_t check_device_range(const char* api, const void* p, std::size_t extent) {
  std::size_t off = 0;
  const Allocation* a = find_allocation(p, &off);
  if (a == nullptr || a->pinned) {
    return fail(cudaErrorInvalidValue,
                std::string(api) + ": " + describe(p) + " is not a device allocation");
  }
  return check_extent(api, "destination", a, off, extent, p);
}

cudaError_t allocate(void** ptr, std::size_t size, bool pinned, const char* api) {
  if (ptr == nullptr)
    return fail(cudaErrorInvalidValue, std::string(api) + ": null result pointer");
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  const int device = current_device();
  DeviceState& dev = shim().devices[device];
  if (!pinned && (size > dev.capacity || dev.used > dev.capacity - size)) {
    return fail(cudaErrorMemoryAllocation,
                std::string(api) + ": out of memory allocating " + std::to_string(size) +
                    " bytes on device " + std::to_string(device) + " (" + std::to_string(dev.used) +
                    " of " + std::to_string(dev.capacity) +
                    " bytes in use; capacity from EMBER_SIM_MEMORY)");
  }
  // Exactly size bytes, so AddressSanitizer sees the end; 256-byte aligned like cudaMalloc.
  void* p = nullptr;
  if (posix_memalign(&p, 256, size) != 0) {
    return fail(cudaErrorMemoryAllocation,
                std::string(api) + ": the host cannot provide " + std::to_string(size) + " bytes");
  }
  std::memset(p, 0xFF, size);  // fresh device memory is garbage, never zeros
  shim().allocations[reinterpret_cast<std::uintptr_t>(p)] = Allocation{size, device, pinned};
  if (!pinned) dev.used += size;
  *ptr = p;
  return cudaSuccess;
}

cudaError_t release(void* p, bool pinned, const char* api) {
  if (p == nullptr) return cudaSuccess;
  auto& allocations = shim().allocations;
  auto it = allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == allocations.end() || it->second.pinned != pinned) {
    return fail(cudaErrorInvalidValue, std::string(api) + ": " + describe(p) + " is not " +
                                           (pinned ? "a cudaMallocHost" : "a device") +
                                           " allocation (or was freed already)");
  }
  if (!pinned) shim().devices[it->second.device].used -= it->second.size;
  allocations.erase(it);
  std::free(p);
  return cudaSuccess;
}

}  // namespace

Shim& shim() {
  static Shim* s = [] {
    auto* state = new Shim;  // never destroyed: kernels may run from static destructors
    int count = 1;
    if (const char* v = std::getenv("EMBER_SIM_DEVICES")) count = std::max(0, std::atoi(v));
    const std::size_t capacity = parse_bytes(std::getenv("EMBER_SIM_MEMORY"), std::size_t{8} << 30);
    const std::vector<int> visible = visible_devices(count);
    state->devices.resize(visible.size());
    for (int d = 0; d < static_cast<int>(visible.size()); ++d) {
      state->devices[d].physical = visible[d];
      state->devices[d].capacity = capacity;
      state->devices[d].legacy = std::make_unique<CUstream_st>();
      state->devices[d].legacy->device = d;
      state->devices[d].legacy->legacy = true;
    }
    const char* defer = std::getenv("SIMT_DEFER_STREAMS");
    state->defer = defer != nullptr && std::strcmp(defer, "0") != 0 && *defer != '\0';
    return state;
  }();
  return *s;
}

int current_device() { return t_device; }

cudaError_t record(cudaError_t error) {
  if (error != cudaSuccess) t_last_error = error;
  return error;
}

cudaError_t fail(cudaError_t error, const std::string& message) {
  shim().last_message = message;
  return record(error);
}

cudaError_t api_error(cudaError_t error, const std::string& message) {
  Lock lock(shim().mutex);
  return fail(error, message);
}

cudaError_t sticky_error() {
  auto& devices = shim().devices;
  if (t_device < 0 || t_device >= static_cast<int>(devices.size())) {
    return fail(cudaErrorNoDevice, "no emulated device (EMBER_SIM_DEVICES=0)");
  }
  return record(devices[t_device].sticky);
}

// ---- kernel launches ----------------------------------------------------------------------------

void submit_launch(KernelCall call, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (sticky_error()) return;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) {
    fail(cudaErrorInvalidResourceHandle, "simt::launch: invalid stream handle");
    return;
  }
  const dim3 b = call.block, g = call.grid;
  auto text = [](dim3 v) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "(%u,%u,%u)", v.x, v.y, v.z);
    return std::string(buf);
  };
  const unsigned long long threads = 1ULL * b.x * b.y * b.z;
  if (b.x == 0 || b.y == 0 || b.z == 0 || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > 1024) {
    fail(cudaErrorInvalidConfiguration,
         "simt::launch: block " + text(b) + " has " + std::to_string(threads) +
             " threads; a block has 1 to 1024 threads, x and y up to 1024, z up to 64");
    return;
  }
  if (g.x == 0 || g.y == 0 || g.z == 0 || g.x > 2147483647u || g.y > 65535 || g.z > 65535) {
    fail(cudaErrorInvalidConfiguration,
         "simt::launch: grid " + text(g) + " is out of range (x 1..2^31-1, y and z 1..65535)");
    return;
  }
  std::size_t limit = kDefaultDynamicShared;
  if (auto it = shim().max_dynamic_smem.find(call.kernel); it != shim().max_dynamic_smem.end()) {
    limit = static_cast<std::size_t>(it->second);
  }
  if (call.smem_bytes > limit) {
    fail(cudaErrorInvalidValue,
         "simt::launch: " + std::to_string(call.smem_bytes) +
             " bytes of dynamic shared memory exceed the kernel's limit of " +
             std::to_string(limit) +
             " (raise it with cudaFuncSetAttribute(kernel, "
             "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), up to " +
             std::to_string(kMaxDynamicSharedOptIn) + ")");
    return;
  }
  const int device = s->device;
  submit(
      s,
      [call = std::move(call), device]() -> cudaError_t {
        std::string message;
        const cudaError_t e = run_kernel(call, &message);
        if (e != cudaSuccess) {
          Lock lock(shim().mutex);
          if (e == cudaErrorLaunchFailure) shim().devices[device].sticky = e;
          std::fprintf(stderr, "simt: kernel failed: %s\n", message.c_str());
          return fail(e, message);
        }
        return cudaSuccess;
      },
      "simt::launch");
}

}  // namespace simt::detail

namespace simt {

std::string last_error_message() {
  detail::Lock lock(detail::shim().mutex);
  return detail::shim().last_message;
}

void set_deferred_streams(bool deferred) {
  detail::Lock lock(detail::shim().mutex);
  for (int d = 0; d < static_cast<int>(detail::shim().devices.size()); ++d) detail::flush_device(d);
  detail::shim().defer = deferred;
}

bool deferred_streams() {
  detail::Lock lock(detail::shim().mutex);
  return detail::shim().defer;
}

}  // namespace simt

using simt::detail::fail;
using simt::detail::Lock;
using simt::detail::record;
using simt::detail::shim;
using simt::detail::sticky_error;

extern "C" {

// ---- errors -------------------------------------------------------------------------------------

namespace {

// The current device's sticky error, else this thread's last error (cleared when `clear`).
cudaError_t last_error(bool clear) {
  Lock lock(shim().mutex);
  auto& devices = shim().devices;
  const int d = simt::detail::current_device();
  if (d >= 0 && d < static_cast<int>(devices.size()) && devices[d].sticky != cudaSuccess) {
    return devices[d].sticky;
  }
  const cudaError_t e = simt::detail::t_last_error;
  if (clear) simt::detail::t_last_error = cudaSuccess;
  return e;
}

}  // namespace

cudaError_t cudaGetLastError() { return last_error(true); }
cudaError_t cudaPeekAtLastError() { return last_error(false); }

// ---- devices ------------------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return record(cudaErrorInvalidValue);
  Lock lock(shim().mutex);
  *count = static_cast<int>(shim().devices.size());
  return *count == 0 ? fail(cudaErrorNoDevice, "EMBER_SIM_DEVICES=0: no emulated device")
                     : cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return record(cudaErrorInvalidValue);
  *device = simt::detail::current_device();
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  Lock lock(shim().mutex);
  if (device < 0 || device >= static_cast<int>(shim().devices.size())) {
    return fail(cudaErrorInvalidDevice,
                "cudaSetDevice: no device " + std::to_string(device) +
                    " (EMBER_SIM_DEVICES=" + std::to_string(shim().devices.size()) + ")");
  }
  simt::detail::t_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  Lock lock(shim().mutex);
  if (prop == nullptr) return record(cudaErrorInvalidValue);
  if (device < 0 || device >= static_cast<int>(shim().devices.size())) {
    return fail(cudaErrorInvalidDevice,
                "cudaGetDeviceProperties: no device " + std::to_string(device));
  }
  std::memset(prop, 0, sizeof *prop);
  std::snprintf(prop->name, sizeof prop->name, "ember SIMT emulator");
  prop->uuid.bytes[0] = static_cast<char>(shim().devices[device].physical);
  prop->totalGlobalMem = shim().devices[device].capacity;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->memPitch = 2147483647;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = 1024;
  prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = 65535;
  prop->maxGridSize[2] = 65535;
  prop->totalConstMem = 64 * 1024;
  prop->major = 9;
  prop->minor = 0;
  prop->textureAlignment = 512;
  prop->texturePitchAlignment = 32;
  prop->multiProcessorCount = 132;
  prop->canMapHostMemory = 1;
  prop->concurrentKernels = 1;
  prop->pciBusID = shim().devices[device].physical + 1;
  prop->asyncEngineCount = 2;
  prop->unifiedAddressing = 1;
  prop->memoryBusWidth = 5120;
  prop->l2CacheSize = 50 * 1024 * 1024;
  prop->persistingL2CacheMaxSize = 32 * 1024 * 1024;
  prop->maxThreadsPerMultiProcessor = 2048;
  prop->streamPrioritiesSupported = 1;
  prop->globalL1CacheSupported = 1;
  prop->localL1CacheSupported = 1;
  prop->sharedMemPerMultiprocessor = 228 * 1024;
  prop->regsPerMultiprocessor = 65536;
  prop->hostNativeAtomicSupported = 0;
  prop->computePreemptionSupported = 1;
  prop->sharedMemPerBlockOptin = simt::detail::kMaxDynamicSharedOptIn;
  prop->maxBlocksPerMultiProcessor = 32;
  prop->reservedSharedMemPerBlock = 1024;
  prop->memoryPoolsSupported = 1;
  prop->deviceNumaId = -1;
  prop->hostNumaId = -1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return record(cudaErrorInvalidValue);
  cudaDeviceProp p;
  if (auto e = cudaGetDeviceProperties(&p, device)) return e;
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxBlockDimX:
      *value = p.maxThreadsDim[0];
      break;
    case cudaDevAttrMaxBlockDimY:
      *value = p.maxThreadsDim[1];
      break;
    case cudaDevAttrMaxBlockDimZ:
      *value = p.maxThreadsDim[2];
      break;
    case cudaDevAttrMaxGridDimX:
      *value = p.maxGridSize[0];
      break;
    case cudaDevAttrMaxGridDimY:
      *value = p.maxGridSize[1];
      break;
    case cudaDevAttrMaxGridDimZ:
      *value = p.maxGridSize[2];
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = static_cast<int>(p.sharedMemPerBlock);
      break;
    case cudaDevAttrTotalConstantMemory:
      *value = static_cast<int>(p.totalConstMem);
      break;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      break;
    case cudaDevAttrMaxPitch:
      *value = static_cast<int>(p.memPitch);
      break;
    case cudaDevAttrMaxRegistersPerBlock:
      *value = p.regsPerBlock;
      break;
    case cudaDevAttrClockRate:
      *value = 1980000;
      break;
    case cudaDevAttrMemoryClockRate:
      *value = 2619000;
      break;
    case cudaDevAttrTextureAlignment:
      *value = static_cast<int>(p.textureAlignment);
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrKernelExecTimeout:
      *value = 0;
      break;
    case cudaDevAttrIntegrated:
      *value = p.integrated;
      break;
    case cudaDevAttrCanMapHostMemory:
      *value = p.canMapHostMemory;
      break;
    case cudaDevAttrComputeMode:
      *value = cudaComputeModeDefault;
      break;
    case cudaDevAttrConcurrentKernels:
      *value = p.concurrentKernels;
      break;
    case cudaDevAttrEccEnabled:
      *value = p.ECCEnabled;
      break;
    case cudaDevAttrPciBusId:
      *value = p.pciBusID;
      break;
    case cudaDevAttrPciDeviceId:
      *value = p.pciDeviceID;
      break;
    case cudaDevAttrPciDomainId:
      *value = p.pciDomainID;
      break;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = p.memoryBusWidth;
      break;
    case cudaDevAttrL2CacheSize:
      *value = p.l2CacheSize;
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = p.maxThreadsPerMultiProcessor;
      break;
    case cudaDevAttrAsyncEngineCount:
      *value = p.asyncEngineCount;
      break;
    case cudaDevAttrUnifiedAddressing:
      *value = p.unifiedAddressing;
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      break;
    case cudaDevAttrStreamPrioritiesSupported:
      *value = p.streamPrioritiesSupported;
      break;
    case cudaDevAttrGlobalL1CacheSupported:
      *value = p.globalL1CacheSupported;
      break;
    case cudaDevAttrLocalL1CacheSupported:
      *value = p.localL1CacheSupported;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = static_cast<int>(p.sharedMemPerMultiprocessor);
      break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      *value = p.regsPerMultiprocessor;
      break;
    case cudaDevAttrManagedMemory:
      *value = p.managedMemory;
      break;
    case cudaDevAttrCooperativeLaunch:
      *value = p.cooperativeLaunch;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = static_cast<int>(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      *value = p.maxBlocksPerMultiProcessor;
      break;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      *value = static_cast<int>(p.reservedSharedMemPerBlock);
      break;
    case cudaDevAttrMemoryPoolsSupported:
      *value = p.memoryPoolsSupported;
      break;
    case cudaDevAttrHostNativeAtomicSupported:
      *value = p.hostNativeAtomicSupported;
      break;
    case cudaDevAttrPageableMemoryAccess:
      *value = 0;
      break;
    case cudaDevAttrConcurrentManagedAccess:
      *value = 0;
      break;
    default: {
      Lock lock(shim().mutex);
      return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute " +
                                             std::to_string(static_cast<int>(attr)) +
                                             " is not emulated");
    }
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer) {
  Lock lock(shim().mutex);
  const int n = static_cast<int>(shim().devices.size());
  if (can_access == nullptr) return record(cudaErrorInvalidValue);
  if (device < 0 || device >= n || peer < 0 || peer >= n) return record(cudaErrorInvalidDevice);
  *can_access = device != peer;
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int) {
  Lock lock(shim().mutex);
  if (peer < 0 || peer >= static_cast<int>(shim().devices.size())) {
    return record(cudaErrorInvalidDevice);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  Lock lock(shim().mutex);
  ++shim().counts.device_synchronize;
  if (auto e = sticky_error()) return e;
  if (auto e = simt::detail::check_capture_safe("cudaDeviceSynchronize")) return e;
  if (auto e = simt::detail::flush_device(simt::detail::current_device())) return e;
  return sticky_error();
}

// Clears the device's sticky error and frees its memory, as destroying the context does.
cudaError_t cudaDeviceReset() {
  Lock lock(shim().mutex);
  const int device = simt::detail::current_device();
  if (device < 0 || device >= static_cast<int>(shim().devices.size())) {
    return record(cudaErrorNoDevice);
  }
  auto& dev = shim().devices[device];
  for (CUstream_st* s : shim().streams) {
    if (s->device == device) s->queue.clear();
  }
  dev.legacy->queue.clear();
  for (CUevent_st* e : shim().events) {
    if (e->device == device) e->pending = false;  // their records were dropped with the queues
  }
  auto& allocations = shim().allocations;
  for (auto it = allocations.begin(); it != allocations.end();) {
    if (it->second.device == device && !it->second.pinned) {
      std::free(reinterpret_cast<void*>(it->first));
      it = allocations.erase(it);
    } else {
      ++it;
    }
  }
  dev.used = 0;
  dev.sticky = cudaSuccess;
  simt::detail::t_last_error = cudaSuccess;
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) {
  if (version == nullptr) return record(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return record(cudaErrorInvalidValue);
  *version = CUDART_VERSION;
  return cudaSuccess;
}

// ---- kernel attributes --------------------------------------------------------------------------

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  Lock lock(shim().mutex);
  if (func == nullptr) {
    return fail(cudaErrorInvalidDeviceFunction, "cudaFuncSetAttribute: null function");
  }
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || static_cast<std::size_t>(value) > simt::detail::kMaxDynamicSharedOptIn) {
      return fail(cudaErrorInvalidValue,
                  "cudaFuncSetAttribute: " + std::to_string(value) +
                      " bytes of dynamic shared memory exceed the device's " +
                      std::to_string(simt::detail::kMaxDynamicSharedOptIn));
    }
    shim().max_dynamic_smem[func] = value;
    return cudaSuccess;
  }
  if (attr == cudaFuncAttributePreferredSharedMemoryCarveout) {
    return value >= -1 && value <= 100 ? cudaSuccess : record(cudaErrorInvalidValue);
  }
  return fail(cudaErrorInvalidValue, "cudaFuncSetAttribute: attribute " +
                                         std::to_string(static_cast<int>(attr)) +
                                         " is not emulated");
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  Lock lock(shim().mutex);
  if (attr == nullptr) return record(cudaErrorInvalidValue);
  if (func == nullptr) return record(cudaErrorInvalidDeviceFunction);
  std::memset(attr, 0, sizeof *attr);
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  auto it = shim().max_dynamic_smem.find(func);
  attr->maxDynamicSharedSizeBytes = it != shim().max_dynamic_smem.end()
                                        ? it->second
                                        : static_cast<int>(simt::detail::kDefaultDynamicShared);
  return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void* func, cudaFuncCache) {
  return func ? cudaSuccess : record(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func,
                                                          int block_size, size_t dynamic_smem) {
  if (blocks == nullptr || block_size <= 0 || block_size > 1024) {
    return record(cudaErrorInvalidValue);
  }
  if (func == nullptr) return record(cudaErrorInvalidDeviceFunction);
  const int warps = (block_size + 31) / 32;
  int n = std::min(32, 64 / warps);
  if (dynamic_smem > 0) {
    n = std::min<int>(n, static_cast<int>((228 * 1024) / (dynamic_smem + 1024)));
  }
  *blocks = n;
  return cudaSuccess;
}

// ---- memory -------------------------------------------------------------------------------------

cudaError_t cudaMalloc(void** ptr, size_t size) {
  Lock lock(shim().mutex);
  ++shim().counts.malloc;
  if (auto e = sticky_error()) return e;
  if (auto e = simt::detail::check_capture_safe("cudaMalloc")) return e;
  return simt::detail::allocate(ptr, size, false, "cudaMalloc");
}

cudaError_t cudaFree(void* ptr) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (ptr == nullptr) return cudaSuccess;
  if (auto e = simt::detail::check_capture_safe("cudaFree")) return e;
  // cudaFree waits for the device, so no queued kernel still uses the memory.
  std::size_t off = 0;
  if (const auto* a = simt::detail::find_allocation(ptr, &off)) {
    simt::detail::flush_device(a->device);
  }
  return simt::detail::release(ptr, false, "cudaFree");
}

cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaMallocAsync: invalid stream");
  if (s->capture) {
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaMallocAsync during stream capture is not emulated");
  }
  return simt::detail::allocate(ptr, size, false, "cudaMallocAsync");
}

cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaFreeAsync: invalid stream");
  if (s->capture) {
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaFreeAsync during stream capture is not emulated");
  }
  if (ptr == nullptr) return cudaSuccess;
  auto it = shim().allocations.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == shim().allocations.end() || it->second.pinned) {
    return fail(cudaErrorInvalidValue,
                "cudaFreeAsync: " + simt::detail::describe(ptr) + " is not a device allocation");
  }
  return simt::detail::submit(
      s, [ptr] { return simt::detail::release(ptr, false, "cudaFreeAsync"); }, "cudaFreeAsync");
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  Lock lock(shim().mutex);
  ++shim().counts.host_alloc;
  if (auto e = sticky_error()) return e;
  if (auto e = simt::detail::check_capture_safe("cudaMallocHost")) return e;
  return simt::detail::allocate(ptr, size, true, "cudaMallocHost");
}

cudaError_t cudaHostAlloc(void** ptr, size_t size, unsigned int) {
  Lock lock(shim().mutex);
  ++shim().counts.host_alloc;
  if (auto e = sticky_error()) return e;
  if (auto e = simt::detail::check_capture_safe("cudaHostAlloc")) return e;
  return simt::detail::allocate(ptr, size, true, "cudaHostAlloc");
}

cudaError_t cudaFreeHost(void* ptr) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (ptr == nullptr) return cudaSuccess;
  if (auto e = simt::detail::check_capture_safe("cudaFreeHost")) return e;
  for (int d = 0; d < static_cast<int>(shim().devices.size()); ++d) simt::detail::flush_device(d);
  return simt::detail::release(ptr, true, "cudaFreeHost");
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  const auto& dev = shim().devices[simt::detail::current_device()];
  if (free) *free = dev.capacity - dev.used;
  if (total) *total = dev.capacity;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attr, const void* ptr) {
  Lock lock(shim().mutex);
  if (attr == nullptr) return record(cudaErrorInvalidValue);
  std::memset(attr, 0, sizeof *attr);
  std::size_t off = 0;
  const auto* a = simt::detail::find_allocation(ptr, &off);
  if (a == nullptr) {
    attr->type = cudaMemoryTypeUnregistered;
    attr->device = -2;
    return cudaSuccess;
  }
  attr->type = a->pinned ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
  attr->device = a->pinned ? simt::detail::current_device() : a->device;
  attr->devicePointer = const_cast<void*>(ptr);
  attr->hostPointer = a->pinned ? const_cast<void*>(ptr) : nullptr;
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  Lock lock(shim().mutex);
  ++shim().counts.memcpy;
  if (auto e = sticky_error()) return e;
  if (count == 0) return cudaSuccess;
  if (auto e = simt::detail::check_capture_safe("cudaMemcpy")) return e;
  if (auto e = simt::detail::check_copy("cudaMemcpy", dst, count, src, count, kind)) return e;
  if (auto e = simt::detail::flush_blocking(simt::detail::current_device())) return e;
  std::memmove(dst, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  Lock lock(shim().mutex);
  ++shim().counts.memcpy_async;
  shim().last_memcpy_async = simt::MemcpyRecord{dst, src, count, kind, stream};
  if (auto e = sticky_error()) return e;
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync: invalid stream");
  if (count == 0) return cudaSuccess;
  if (auto e = simt::detail::check_copy("cudaMemcpyAsync", dst, count, src, count, kind)) return e;
  std::size_t off = 0;  // a captured copy's host side must be page-locked (replay reads it)
  if (s->capture && !s->capture->invalidated &&
      (!simt::detail::find_allocation(dst, &off) || !simt::detail::find_allocation(src, &off))) {
    s->capture->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaMemcpyAsync: pageable host memory in a capture");
  }
  return simt::detail::submit(
      s,
      [=] {
        std::memmove(dst, src, count);
        return cudaSuccess;
      },
      "cudaMemcpyAsync");
}

namespace {

cudaError_t copy_2d(const char* api, void* dst, size_t dpitch, const void* src, size_t spitch,
                    size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t stream,
                    bool async) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr)
    return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": invalid stream");
  if (width > dpitch || width > spitch) {
    return fail(cudaErrorInvalidPitchValue, std::string(api) + ": width " + std::to_string(width) +
                                                " exceeds a pitch (" + std::to_string(dpitch) +
                                                ", " + std::to_string(spitch) + ")");
  }
  if (width == 0 || height == 0) return cudaSuccess;
  if (!async) {
    if (auto e = simt::detail::check_capture_safe(api)) return e;
  }
  const std::size_t dst_extent = (height - 1) * dpitch + width;
  const std::size_t src_extent = (height - 1) * spitch + width;
  if (auto e = simt::detail::check_copy(api, dst, dst_extent, src, src_extent, kind)) return e;
  auto work = [=] {
    for (size_t row = 0; row < height; ++row) {
      std::memmove(static_cast<char*>(dst) + row * dpitch,
                   static_cast<const char*>(src) + row * spitch, width);
    }
    return cudaSuccess;
  };
  if (async) return simt::detail::submit(s, work, api);
  if (auto e = simt::detail::flush_blocking(simt::detail::current_device())) return e;
  return work();
}

}  // namespace

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind) {
  return copy_2d("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind, nullptr, false);
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream) {
  return copy_2d("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind, stream, true);
}

cudaError_t cudaMemset(void* dst, int value, size_t count) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (count == 0) return cudaSuccess;
  if (auto e = simt::detail::check_capture_safe("cudaMemset")) return e;
  if (auto e = simt::detail::check_device_range("cudaMemset", dst, count)) return e;
  if (auto e = simt::detail::flush_blocking(simt::detail::current_device())) return e;
  std::memset(dst, value, count);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t count, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync: invalid stream");
  if (count == 0) return cudaSuccess;
  if (auto e = simt::detail::check_device_range("cudaMemsetAsync", dst, count)) return e;
  return simt::detail::submit(
      s,
      [=] {
        std::memset(dst, value, count);
        return cudaSuccess;
      },
      "cudaMemsetAsync");
}

namespace {

cudaError_t copy_peer(const char* api, void* dst, int dst_device, const void* src, int src_device,
                      size_t count, cudaStream_t stream, bool async) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (count == 0) return cudaSuccess;
  const int n = static_cast<int>(shim().devices.size());
  if (dst_device < 0 || dst_device >= n || src_device < 0 || src_device >= n) {
    return fail(cudaErrorInvalidDevice, std::string(api) + ": no such device");
  }
  if (auto e = simt::detail::check_copy(api, dst, count, src, count, cudaMemcpyDeviceToDevice)) {
    return e;
  }
  std::size_t off = 0;
  if (simt::detail::find_allocation(dst, &off)->device != dst_device ||
      simt::detail::find_allocation(src, &off)->device != src_device) {
    return fail(cudaErrorInvalidValue,
                std::string(api) + ": a pointer does not belong to the device named with it");
  }
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr)
    return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": invalid stream");
  auto work = [=] {
    std::memmove(dst, src, count);
    return cudaSuccess;
  };
  if (async) return simt::detail::submit(s, work, api);
  if (auto e = simt::detail::check_capture_safe(api)) return e;
  if (auto e = simt::detail::flush_device(dst_device)) return e;
  if (auto e = simt::detail::flush_device(src_device)) return e;
  return work();
}

}  // namespace

cudaError_t cudaMemcpyPeer(void* dst, int dst_device, const void* src, int src_device,
                           size_t count) {
  return copy_peer("cudaMemcpyPeer", dst, dst_device, src, src_device, count, nullptr, false);
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device,
                                size_t count, cudaStream_t stream) {
  return copy_peer("cudaMemcpyPeerAsync", dst, dst_device, src, src_device, count, stream, true);
}

// Symbols (__constant__ and __device__ variables) are ordinary host objects here.
cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               cudaMemcpyKind kind) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (symbol == nullptr || src == nullptr) return record(cudaErrorInvalidSymbol);
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault) {
    return record(cudaErrorInvalidMemcpyDirection);
  }
  if (auto e = simt::detail::flush_blocking(simt::detail::current_device())) return e;
  std::memmove(static_cast<char*>(const_cast<void*>(symbol)) + offset, src, count);
  return cudaSuccess;
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 cudaMemcpyKind kind) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (symbol == nullptr || dst == nullptr) return record(cudaErrorInvalidSymbol);
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault) {
    return record(cudaErrorInvalidMemcpyDirection);
  }
  if (auto e = simt::detail::flush_blocking(simt::detail::current_device())) return e;
  std::memmove(dst, static_cast<const char*>(symbol) + offset, count);
  return cudaSuccess;
}

}  // extern "C"
