// ember::cuda::device_health over NVML, loaded with dlopen: a machine without the NVIDIA driver
// gets available = false and the reason, never an exception.
#include "dynload/nvml.h"

#include <cstring>
#include <string>
#include <vector>

#include "dynload/dynlib.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::dynload {

namespace {

// The subset of nvml.h used here (the ABI is stable across driver versions).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlClockSm = 1;
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, the layout of the _v2 and _v3 queries
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

struct Nvml {
  SharedLibrary lib;
  std::string error;  // why NVML cannot be used; empty when it can
  nvmlReturn_t (*init)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*system_driver_version)(char*, unsigned int) = nullptr;
  nvmlReturn_t (*process_name)(unsigned int, char*, unsigned int) = nullptr;
  nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*) = nullptr;

  std::string describe(nvmlReturn_t r) const {
    return error_string != nullptr ? error_string(r) : "NVML error " + std::to_string(r);
  }
};

template <typename Fn>
bool bind(Nvml& n, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(find_symbol(n.lib, symbol));
  if (fn == nullptr && n.error.empty()) n.error = n.lib.path + ": missing symbol " + symbol;
  return fn != nullptr;
}

// Loaded and initialised once per process; NVML stays initialised until exit.
const Nvml& nvml() {
  static const Nvml n = [] {
    Nvml n;
    n.lib = open_library("EMBER_NVML_LIBRARY", {"libnvidia-ml.so.1", "libnvidia-ml.so"});
    if (!n.lib) {
      n.error = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) was not found: " + n.lib.error;
      return n;
    }
    bind(n, n.init, "nvmlInit_v2");
    bind(n, n.error_string, "nvmlErrorString");
    bind(n, n.system_driver_version, "nvmlSystemGetDriverVersion");
    bind(n, n.process_name, "nvmlSystemGetProcessName");
    bind(n, n.device_count, "nvmlDeviceGetCount_v2");
    bind(n, n.by_index, "nvmlDeviceGetHandleByIndex_v2");
    bind(n, n.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(n, n.utilization, "nvmlDeviceGetUtilizationRates");
    bind(n, n.memory, "nvmlDeviceGetMemoryInfo");
    bind(n, n.temperature, "nvmlDeviceGetTemperature");
    bind(n, n.power, "nvmlDeviceGetPowerUsage");
    bind(n, n.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(n, n.clock, "nvmlDeviceGetClockInfo");
    // Drivers before 510 have only the _v2 query; both fill the same structure.
    n.processes = reinterpret_cast<decltype(n.processes)>(
        find_symbol(n.lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (n.processes == nullptr) bind(n, n.processes, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!n.error.empty()) return n;
    if (nvmlReturn_t r = n.init(); r != kNvmlSuccess) n.error = "nvmlInit: " + n.describe(r);
    return n;
  }();
  return n;
}

}  // namespace

}  // namespace ember::dynload

namespace ember::cuda {

std::string driver_release() {
  const dynload::Nvml& n = dynload::nvml();
  char buf[96] = {};
  if (!n.error.empty() || n.system_driver_version(buf, sizeof buf) != dynload::kNvmlSuccess)
    return {};
  return buf;
}

int nvml_device_count() {
  const dynload::Nvml& n = dynload::nvml();
  unsigned count = 0;
  if (!n.error.empty() || n.device_count(&count) != dynload::kNvmlSuccess) return 0;
  return static_cast<int>(count);
}

DeviceHealth device_health(int device) {
  using namespace dynload;
  if (device < 0) throw Error("[device_health] invalid device ordinal " + std::to_string(device));
  DeviceHealth h;
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    h.error = n.error;
    return h;
  }
  const NvmlLocator where = nvml_locator(device);
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t r = kNvmlSuccess;
  switch (where.kind) {
    case NvmlLocator::kNone:
      h.error = where.why_none;
      return h;
    case NvmlLocator::kPciBusId:
      r = n.by_pci(where.pci_bus_id.c_str(), &dev);
      break;
    case NvmlLocator::kIndex:
      r = n.by_index(static_cast<unsigned>(where.index), &dev);
      break;
  }
  if (r != kNvmlSuccess) {
    h.error = "NVML has no device " +
              (where.kind == NvmlLocator::kPciBusId ? "at PCI bus id " + where.pci_bus_id
                                                    : std::to_string(where.index)) +
              ": " + n.describe(r);
    return h;
  }
  h.available = true;
  // A metric the device does not support stays at its "unknown" value (-1 or 0).
  if (nvmlUtilization_t u{}; n.utilization(dev, &u) == kNvmlSuccess) {
    h.utilization_gpu = static_cast<int>(u.gpu);
    h.utilization_memory = static_cast<int>(u.memory);
  }
  if (nvmlMemory_t m{}; n.memory(dev, &m) == kNvmlSuccess) {
    h.memory_used = m.used;
    h.memory_total = m.total;
  }
  if (unsigned v = 0; n.temperature(dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess)
    h.temperature_c = static_cast<int>(v);
  if (unsigned mw = 0; n.power(dev, &mw) == kNvmlSuccess) h.power_w = mw / 1000.0;
  if (unsigned mw = 0; n.power_limit(dev, &mw) == kNvmlSuccess) h.power_limit_w = mw / 1000.0;
  if (unsigned mhz = 0; n.clock(dev, kNvmlClockSm, &mhz) == kNvmlSuccess)
    h.clock_sm_mhz = static_cast<int>(mhz);
  // The process list can grow between the two calls: retry with the larger count.
  std::vector<nvmlProcessInfo_t> procs(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(procs.size());
    r = n.processes(dev, &count, procs.data());
    if (r == kNvmlInsufficientSize) {
      procs.resize(count + 8);
      continue;
    }
    if (r == kNvmlSuccess) {
      for (unsigned i = 0; i < count; ++i) {
        ProcessInfo p;
        p.pid = procs[i].pid;
        // NVML reports unavailable usage (no permission, MIG) as all ones.
        p.used_memory = procs[i].usedGpuMemory == ~0ULL ? 0 : procs[i].usedGpuMemory;
        char name[256] = {};
        if (n.process_name(procs[i].pid, name, sizeof name) == kNvmlSuccess) p.name = name;
        h.processes.push_back(std::move(p));
      }
    }
    break;
  }
  return h;
}

}  // namespace ember::cuda
