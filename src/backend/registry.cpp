// Maps a device type to its backend, and gives core the allocator of a device.
#include <atomic>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"
#include "core/tensor_util.h"
#include "ember/cuda.h"

namespace ember {

namespace {
std::atomic<Backend*> g_cuda_backend{nullptr};
std::atomic<int> g_device_poison{-1};  // byte fresh device allocations are filled with, or -1
}  // namespace

// The library variant's own CUDA backend, or null without one. Referencing it here keeps its
// object file (and the backend's static registration) in programs linked to a static ember.
Backend* builtin_cuda_backend();

Backend& backend(DeviceType type) {
  if (type == kCPU) return cpu_backend();
  Backend* b = g_cuda_backend.load(std::memory_order_acquire);
  if (!b) b = builtin_cuda_backend();
  if (!b) {
    throw Error(
        "[cuda] this build of ember has no CUDA backend: rebuild with -DEMBER_CUDA=ON "
        "(or link ember::ember_sim for emulated CUDA devices)");
  }
  // A build with CUDA still runs on machines without a GPU or driver; only cuda tensors fail.
  if (cuda::device_count() == 0) {
    throw Error(
        "[cuda] no CUDA device is available (no GPU or no CUDA driver was found): "
        "cuda tensors cannot be created on this machine");
  }
  return *b;
}

Backend* cuda_backend_if_present() {
  Backend* b = g_cuda_backend.load(std::memory_order_acquire);
  return b != nullptr ? b : builtin_cuda_backend();
}

// Declared by core (core/tensor_util.h) for make_empty.
Allocator& device_allocator(Device device, bool pinned) {
  return backend(device).allocator(device, pinned);
}

void register_backend(DeviceType type, Backend* b) {
  if (type == kCPU) throw Error("[register_backend] the CPU backend is built in");
  g_cuda_backend.store(b, std::memory_order_release);
}

void set_alloc_poison(bool enabled, uint8_t pattern) {
  set_cpu_alloc_poison(enabled, pattern);
  g_device_poison.store(enabled ? pattern : -1, std::memory_order_relaxed);
}

int device_alloc_poison() { return g_device_poison.load(std::memory_order_relaxed); }

}  // namespace ember
