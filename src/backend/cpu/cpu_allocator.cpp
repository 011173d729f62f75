// Host memory: 64-byte aligned blocks (a cache line, and room for AVX-512 loads).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "backend/cpu/cpu_backend.h"

namespace ember {

namespace {

std::atomic<bool> g_poison{false};
std::atomic<uint8_t> g_poison_byte{0xFF};

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    size_t rounded = (std::max<size_t>(nbytes, 1) + 63) & ~size_t(63);
    void* p = std::aligned_alloc(64, rounded);
    if (!p) {
      throw OutOfMemoryError("[cpu] out of memory: tried to allocate " + std::to_string(nbytes) +
                             " bytes of host memory");
    }
    if (g_poison.load(std::memory_order_relaxed)) {
      std::memset(p, g_poison_byte.load(), rounded);
    }
    return DataPtr(p, nullptr, [](void* d, void*) { std::free(d); }, Device(kCPU));
  }
};

}  // namespace

void set_cpu_alloc_poison(bool enabled, uint8_t pattern) {
  g_poison_byte.store(pattern);
  g_poison.store(enabled);
}

Allocator& CpuBackend::allocator(Device device, bool pinned) {
  // Page-locked host memory comes from the CUDA runtime; without it plain memory is returned.
  static CpuAllocator alloc;
  return alloc;
}

CpuBackend& cpu_backend() {
  static CpuBackend b;
  return b;
}

}  // namespace ember
