// A stand-in for libnvidia-ml.so.1 with made-up GPUs, loaded through EMBER_NVML_LIBRARY so that
// `ember smi` can be tested on a machine without a GPU. Its GPUs carry the UUIDs of the SIMT
// emulator's boards (board d: GPU-<d>000000-0000-...), so the CUDA ordinals of `ember-sim` map
// onto them exactly as a real GPU's do. Set up by the environment:
//   FAKE_NVML_GPUS=N            how many GPUs (default 2)
//   FAKE_NVML_INIT=no_permission|driver_not_loaded   nvmlInit fails so
//   FAKE_NVML_LOST=I            GPU I answers "GPU is lost"
//   FAKE_NVML_PROCESSES=G:PID:MIB,...   compute processes; a dead pid has no name (it exited)
#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kNoPermission = 4,
              kNotFound = 6, kInsufficientSize = 7, kDriverNotLoaded = 9, kGpuIsLost = 15;

struct Process {
  int gpu;
  unsigned pid;
  unsigned long long bytes;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

int gpu_count() { return env_int("FAKE_NVML_GPUS", 2); }

std::vector<Process> processes() {
  std::vector<Process> out;
  const char* v = std::getenv("FAKE_NVML_PROCESSES");
  if (v == nullptr) return out;
  std::string list(v);
  size_t start = 0;
  while (start < list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    Process p{};
    unsigned long long mib = 0;
    if (std::sscanf(list.substr(start, comma - start).c_str(), "%d:%u:%llu", &p.gpu, &p.pid,
                    &mib) == 3) {
      p.bytes = mib << 20;
      out.push_back(p);
    }
    start = comma + 1;
  }
  return out;
}

// A device handle is its index plus one (never null).
int index_of(void* dev) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(dev)) - 1; }

int copy_text(const std::string& text, char* out, unsigned len) {
  if (text.size() + 1 > len) return kInsufficientSize;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlUtilization_t {
  unsigned gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};

int nvmlInit_v2() {
  const char* how = std::getenv("FAKE_NVML_INIT");
  if (how != nullptr && std::strcmp(how, "no_permission") == 0) return kNoPermission;
  if (how != nullptr && std::strcmp(how, "driver_not_loaded") == 0) return kDriverNotLoaded;
  return kSuccess;
}
int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int r) {
  switch (r) {
    case kSuccess:
      return "Success";
    case kNoPermission:
      return "Insufficient Permissions";
    case kNotFound:
      return "Not Found";
    case kDriverNotLoaded:
      return "Driver Not Loaded";
    case kGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

int nvmlSystemGetDriverVersion(char* out, unsigned len) { return copy_text("999.01.02", out, len); }

int nvmlSystemGetProcessName(unsigned pid, char* out, unsigned len) {
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return kNotFound;
  std::string name;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  if (!std::getline(comm, name)) return kNotFound;
  return copy_text(name, out, len);
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = static_cast<unsigned>(gpu_count());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** dev) {
  if (static_cast<int>(index) >= gpu_count()) return kInvalidArgument;
  if (static_cast<int>(index) == env_int("FAKE_NVML_LOST", -1)) return kGpuIsLost;
  *dev = reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1);
  return kSuccess;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char*, void**) { return kNotFound; }

int nvmlDeviceGetName(void* dev, char* out, unsigned len) {
  return copy_text("NVIDIA Fake GPU " + std::to_string(index_of(dev)), out, len);
}

int nvmlDeviceGetUUID(void* dev, char* out, unsigned len) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x000000-0000-0000-0000-000000000000", index_of(dev));
  return copy_text(text, out, len);
}

int nvmlDeviceGetPciInfo_v3(void* dev, nvmlPciInfo_t* pci) {
  std::memset(pci, 0, sizeof *pci);
  pci->bus = static_cast<unsigned>(index_of(dev)) + 1;
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", pci->bus);
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(void* dev, nvmlUtilization_t* u) {
  u->gpu = 40 + index_of(dev);
  u->memory = 20 + index_of(dev);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* dev, nvmlMemory_t* m) {
  m->total = 80ULL << 30;
  m->used = static_cast<unsigned long long>(index_of(dev) + 1) << 30;
  m->free = m->total - m->used;
  return kSuccess;
}

int nvmlDeviceGetTemperature(void* dev, int, unsigned* c) {
  *c = 50 + index_of(dev);
  return kSuccess;
}
int nvmlDeviceGetPowerUsage(void*, unsigned* mw) {
  *mw = 200500;
  return kSuccess;
}
int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) {
  *mw = 700000;
  return kSuccess;
}
int nvmlDeviceGetClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : 1755;
  return kSuccess;
}
int nvmlDeviceGetMaxClockInfo(void*, int type, unsigned* mhz) {
  *mhz = type == 2 ? 2619 : 1980;
  return kSuccess;
}
int nvmlDeviceGetCurrPcieLinkGeneration(void*, unsigned* v) {
  *v = 5;
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkGeneration(void*, unsigned* v) {
  *v = 5;
  return kSuccess;
}
int nvmlDeviceGetCurrPcieLinkWidth(void*, unsigned* v) {
  *v = 16;
  return kSuccess;
}
int nvmlDeviceGetMaxPcieLinkWidth(void*, unsigned* v) {
  *v = 16;
  return kSuccess;
}

// GPU 0 has four NVLink links, three of them up; the others have none.
int nvmlDeviceGetNvLinkState(void* dev, unsigned link, int* active) {
  if (index_of(dev) != 0) return kNotSupported;
  if (link >= 4) return kInvalidArgument;
  *active = link < 3 ? 1 : 0;
  return kSuccess;
}

// GPU 1 is held back by the software power cap (0x4); the others are idle (0x1).
int nvmlDeviceGetCurrentClocksEventReasons(void* dev, unsigned long long* bits) {
  *bits = index_of(dev) == 1 ? 0x4 : 0x1;
  return kSuccess;
}

// GPU 0 has ECC on with 3 corrected errors; the others have it off.
int nvmlDeviceGetEccMode(void* dev, int* now, int* pending) {
  *now = *pending = index_of(dev) == 0 ? 1 : 0;
  return kSuccess;
}
int nvmlDeviceGetTotalEccErrors(void*, int type, int, unsigned long long* count) {
  *count = type == 0 ? 3 : 0;
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* dev, unsigned* count, nvmlProcessInfo_t* out) {
  std::vector<Process> mine;
  for (const Process& p : processes())
    if (p.gpu == index_of(dev)) mine.push_back(p);
  if (mine.size() > *count) {
    *count = static_cast<unsigned>(mine.size());
    return kInsufficientSize;
  }
  *count = static_cast<unsigned>(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) out[i] = {mine[i].pid, mine[i].bytes, 0, 0};
  return kSuccess;
}

}  // extern "C"
