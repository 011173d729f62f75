// ember::cuda for builds without CUDA: no devices; queries that need one raise a clear error.
#include <string>

#include "backend/backend.h"
#include "cuda/nvml.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

// No CUDA devices exist in this build: NVML's own indices are the devices that can be asked about.
cuda_detail::NvmlLocator cuda_detail::nvml_locator(int device) {
  NvmlLocator where;
  where.kind = NvmlLocator::kIndex;
  where.index = device;
  return where;
}

Backend* builtin_cuda_backend() { return nullptr; }

namespace {
[[noreturn]] void no_cuda(const std::string& what) {
  throw Error("[cuda] " + what +
              ": this build of ember has no CUDA support (rebuild with "
              "-DEMBER_CUDA=ON, or link ember::ember_sim for emulated devices)");
}
}  // namespace

namespace cuda {

bool is_available() { return false; }
int device_count() { return 0; }
DeviceProperties get_device_properties(int device) {
  no_cuda("invalid device ordinal " + std::to_string(device));
}
std::string get_device_name(int device) { return get_device_properties(device).name; }
int current_device() { return 0; }
void set_device(int device) { no_cuda("invalid device ordinal " + std::to_string(device)); }
void synchronize(int device) { no_cuda("synchronize"); }
DeviceGuard::DeviceGuard(int device) : original_(0) {
  no_cuda("invalid device ordinal " + std::to_string(device));
}
DeviceGuard::~DeviceGuard() = default;
size_t memory_allocated(int) { no_cuda("memory_allocated"); }
size_t max_memory_allocated(int) { no_cuda("max_memory_allocated"); }
size_t memory_reserved(int) { no_cuda("memory_reserved"); }
size_t max_memory_reserved(int) { no_cuda("max_memory_reserved"); }
void reset_peak_memory_stats(int) { no_cuda("reset_peak_memory_stats"); }
void empty_cache() {}  // nothing is cached without CUDA
std::map<std::string, int64_t> memory_stats(int) { no_cuda("memory_stats"); }
std::string memory_summary(int, bool) { no_cuda("memory_summary"); }
void set_per_process_memory_fraction(double, int) { no_cuda("set_per_process_memory_fraction"); }
int runtime_version() { return 0; }
int driver_version() { return 0; }

}  // namespace cuda
}  // namespace ember
