// ember::cuda: device queries and selection. Works in every build: without CUDA (or without a
// GPU or driver) is_available() is false and device_count() is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace ember::cuda {

bool is_available();
int device_count();
std::string get_device_name(int device = 0);

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  size_t total_memory = 0;   // bytes
  int multi_processor_count = 0;
  size_t l2_cache_size = 0;  // bytes
};
DeviceProperties get_device_properties(int device = 0);

// The calling thread's current device (0 when none was set).
int current_device();
void set_device(int device);
// Waits for all work on device (-1: the current device).
void synchronize(int device = -1);

// Sets the current device for a scope and restores the previous one on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  int original_device() const { return original_; }

 private:
  int original_;
};

// CUDA runtime version linked into ember (e.g. 13000), and the driver's (0 without a driver).
int runtime_version();
int driver_version();

// ---- memory (device = -1: the current device) --------------------------------------------------
// Bytes held by tensors now, and the most since the last reset_peak_memory_stats.
size_t memory_allocated(int device = -1);
size_t max_memory_allocated(int device = -1);
// Bytes the caching allocator has obtained from the device (in use or cached).
size_t memory_reserved(int device = -1);
size_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
// Returns every unused cached block of every device to the driver.
void empty_cache();
// PyTorch's memory_stats keys: "allocated_bytes.all.current", "num_ooms", ...
std::map<std::string, int64_t> memory_stats(int device = -1);
// PyTorch's memory_summary table (75 columns).
std::string memory_summary(int device = -1, bool abbreviated = false);
// Caps the caching allocator of device at fraction of its total memory (0 < fraction <= 1).
void set_per_process_memory_fraction(double fraction, int device = -1);

}  // namespace ember::cuda
