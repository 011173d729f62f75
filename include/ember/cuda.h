// ember::cuda: device queries and selection. Works in every build: without CUDA (or without a
// GPU or driver) is_available() is false and device_count() is 0.
#pragma once

#include <cstddef>
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

}  // namespace ember::cuda
