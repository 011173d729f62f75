// Maps a device type to its backend.
#include <atomic>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"

namespace ember {

namespace {
std::atomic<Backend*> g_cuda_backend{nullptr};
}

Backend& backend(DeviceType type) {
  if (type == kCPU) return cpu_backend();
  Backend* b = g_cuda_backend.load(std::memory_order_acquire);
  if (!b) {
    throw Error(
        "[cuda] this build of ember has no CUDA backend: rebuild with -DEMBER_CUDA=ON "
        "(or link ember::ember_sim for emulated CUDA devices)");
  }
  return *b;
}

void register_backend(DeviceType type, Backend* b) {
  if (type == kCPU) throw Error("[register_backend] the CPU backend is built in");
  g_cuda_backend.store(b, std::memory_order_release);
}

}  // namespace ember
