// ember::cuda::device_health over NVML, loaded with dlopen: a machine without the NVIDIA driver
// gets available = false and the reason, never an exception.
#include "dynload/nvml.h"

#include <algorithm>
#include <cstring>
#include <fstream>
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
constexpr nvmlReturn_t kNvmlNoPermission = 4;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;
constexpr int kNvmlTemperatureGpu = 0;
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlClockMem = 2;
constexpr unsigned kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {  // nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
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
  nvmlReturn_t init_status = kNvmlSuccess;
  // Optional (older drivers or boards may lack them): a missing one leaves its field unknown.
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned int) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned int*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, int*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*ecc_total)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;

  std::string describe(nvmlReturn_t r) const {
    return error_string != nullptr ? error_string(r) : "NVML error " + std::to_string(r);
  }
};

template <typename Fn>
void bind_optional(const Nvml& n, Fn& fn, const char* symbol) {
  fn = reinterpret_cast<Fn>(find_symbol(n.lib, symbol));
}

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
    bind_optional(n, n.name, "nvmlDeviceGetName");
    bind_optional(n, n.uuid, "nvmlDeviceGetUUID");
    bind_optional(n, n.pci_info, "nvmlDeviceGetPciInfo_v3");
    bind_optional(n, n.max_clock, "nvmlDeviceGetMaxClockInfo");
    bind_optional(n, n.pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    bind_optional(n, n.pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
    bind_optional(n, n.pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    bind_optional(n, n.pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
    bind_optional(n, n.nvlink_state, "nvmlDeviceGetNvLinkState");
    bind_optional(n, n.throttle, "nvmlDeviceGetCurrentClocksEventReasons");
    if (n.throttle == nullptr)
      bind_optional(n, n.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
    bind_optional(n, n.ecc_mode, "nvmlDeviceGetEccMode");
    bind_optional(n, n.ecc_total, "nvmlDeviceGetTotalEccErrors");
    if (!n.error.empty()) return n;
    n.init_status = n.init();
    if (n.init_status != kNvmlSuccess) n.error = "nvmlInit: " + n.describe(n.init_status);
    return n;
  }();
  return n;
}

// The compute processes on dev. The list can grow between the two calls: retry with the larger
// count. A process that exits while it is listed keeps its pid, with no name.
std::vector<cuda::ProcessInfo> list_processes(const Nvml& n, nvmlDevice_t dev) {
  std::vector<cuda::ProcessInfo> out;
  std::vector<nvmlProcessInfo_t> procs(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(procs.size());
    const nvmlReturn_t r = n.processes(dev, &count, procs.data());
    if (r == kNvmlInsufficientSize) {
      procs.resize(count + 8);
      continue;
    }
    if (r == kNvmlSuccess) {
      for (unsigned i = 0; i < count; ++i) {
        cuda::ProcessInfo p;
        p.pid = procs[i].pid;
        // NVML reports unavailable usage (no permission, MIG) as all ones.
        p.used_memory = procs[i].usedGpuMemory == ~0ULL ? 0 : procs[i].usedGpuMemory;
        char name[256] = {};
        if (n.process_name(procs[i].pid, name, sizeof name) == kNvmlSuccess) {
          p.name = name;
        } else if (std::ifstream comm("/proc/" + std::to_string(p.pid) + "/comm");
                   comm && std::getline(comm, p.name)) {
          // NVML may not name processes of other users; /proc does.
        }
        out.push_back(std::move(p));
      }
    }
    break;
  }
  return out;
}

// Names of the bits of nvmlClocksEventReasons (nvmlClocksThrottleReasons before NVML 12).
std::vector<std::string> throttle_names(unsigned long long bits) {
  static const std::pair<unsigned long long, const char*> kNames[] = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"}};
  std::vector<std::string> out;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) != 0) out.emplace_back(name);
  }
  return out;
}

template <typename Fn, typename... A>
int read_unsigned(Fn fn, nvmlDevice_t dev, A... a) {
  unsigned v = 0;
  if (fn == nullptr || fn(dev, a..., &v) != kNvmlSuccess) return -1;
  return static_cast<int>(v);
}

// Everything `ember smi` shows about one NVML device.
cuda::GpuStatus read_gpu(const Nvml& n, unsigned index) {
  cuda::GpuStatus g;
  g.index = static_cast<int>(index);
  nvmlDevice_t dev = nullptr;
  if (nvmlReturn_t r = n.by_index(index, &dev); r != kNvmlSuccess) {
    g.error = n.describe(r);
    return g;
  }
  char text[96] = {};
  if (n.name != nullptr && n.name(dev, text, sizeof text) == kNvmlSuccess) g.name = text;
  if (char id[96] = {}; n.uuid != nullptr && n.uuid(dev, id, sizeof id) == kNvmlSuccess)
    g.uuid = id;
  if (nvmlPciInfo_t pci{}; n.pci_info != nullptr && n.pci_info(dev, &pci) == kNvmlSuccess)
    g.pci_bus_id = pci.busId;
  if (nvmlUtilization_t u{}; n.utilization(dev, &u) == kNvmlSuccess) {
    g.utilization_gpu = static_cast<int>(u.gpu);
    g.utilization_memory = static_cast<int>(u.memory);
  }
  if (nvmlMemory_t m{}; n.memory(dev, &m) == kNvmlSuccess) {
    g.memory_used = m.used;
    g.memory_total = m.total;
  }
  g.temperature_c = read_unsigned(n.temperature, dev, kNvmlTemperatureGpu);
  if (unsigned mw = 0; n.power(dev, &mw) == kNvmlSuccess) g.power_w = mw / 1000.0;
  if (unsigned mw = 0; n.power_limit(dev, &mw) == kNvmlSuccess) g.power_limit_w = mw / 1000.0;
  g.clock_sm_mhz = read_unsigned(n.clock, dev, kNvmlClockSm);
  g.clock_memory_mhz = read_unsigned(n.clock, dev, kNvmlClockMem);
  g.clock_sm_max_mhz = read_unsigned(n.max_clock, dev, kNvmlClockSm);
  g.clock_memory_max_mhz = read_unsigned(n.max_clock, dev, kNvmlClockMem);
  g.pcie_generation = read_unsigned(n.pcie_gen, dev);
  g.pcie_generation_max = read_unsigned(n.pcie_gen_max, dev);
  g.pcie_width = read_unsigned(n.pcie_width, dev);
  g.pcie_width_max = read_unsigned(n.pcie_width_max, dev);
  if (n.nvlink_state != nullptr) {
    for (unsigned link = 0; link < kNvmlMaxLinks; ++link) {
      int active = 0;
      if (n.nvlink_state(dev, link, &active) != kNvmlSuccess) break;  // no such link
      g.nvlinks_active = std::max(g.nvlinks_active, 0) + (active != 0 ? 1 : 0);
    }
  }
  if (unsigned long long bits = 0;
      n.throttle != nullptr && n.throttle(dev, &bits) == kNvmlSuccess) {
    g.throttle_known = true;
    g.throttle_reasons = throttle_names(bits);
  }
  if (int now = 0, pending = 0;
      n.ecc_mode != nullptr && n.ecc_mode(dev, &now, &pending) == kNvmlSuccess) {
    g.ecc_enabled = now != 0 ? 1 : 0;
    unsigned long long c = 0;
    // Error type 0 corrected, 1 uncorrected; counter type 0 volatile (since the driver loaded).
    if (now != 0 && n.ecc_total != nullptr && n.ecc_total(dev, 0, 0, &c) == kNvmlSuccess)
      g.ecc_corrected = static_cast<long long>(c);
    if (now != 0 && n.ecc_total != nullptr && n.ecc_total(dev, 1, 0, &c) == kNvmlSuccess)
      g.ecc_uncorrected = static_cast<long long>(c);
  }
  g.processes = list_processes(n, dev);
  return g;
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
  h.processes = list_processes(n, dev);
  return h;
}

GpuSnapshot gpu_snapshot() {
  using namespace dynload;
  GpuSnapshot snap;
  const Nvml& n = nvml();
  if (!n.error.empty()) {
    snap.error = n.error;
    snap.permission_denied = n.init_status == kNvmlNoPermission;
    return snap;
  }
  snap.available = true;
  snap.driver_release = driver_release();
  unsigned count = 0;
  if (nvmlReturn_t r = n.device_count(&count); r != kNvmlSuccess) {
    snap.available = false;
    snap.error = "nvmlDeviceGetCount: " + n.describe(r);
    snap.permission_denied = r == kNvmlNoPermission;
    return snap;
  }
  for (unsigned i = 0; i < count; ++i) snap.gpus.push_back(read_gpu(n, i));
  // CUDA numbers the GPUs it may use (CUDA_VISIBLE_DEVICES) in its own order: match by UUID.
  for (int d = 0; d < device_count(); ++d) {
    const std::string uuid = device_uuid(d);
    for (GpuStatus& g : snap.gpus) {
      if (!g.uuid.empty() && g.uuid == uuid) g.cuda_device = d;
    }
  }
  return snap;
}

}  // namespace ember::cuda
