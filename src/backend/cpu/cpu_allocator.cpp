// Host memory: 64-byte aligned blocks (a cache line, and room for AVX-512 loads), cached after free
// by size class. A fresh multi-megabyte block is an mmap whose every page faults (and is zeroed
// by the kernel) on first touch, which costs more than the op that fills it; a small aligned block
// takes glibc's slowest path (_int_memalign), which costs more than a small op.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "ember/cuda.h"

namespace ember {

namespace {

std::atomic<bool> g_poison{false};
std::atomic<uint8_t> g_poison_byte{0xFF};

constexpr size_t kLargeMin = size_t(1) << 20;    // blocks from here count as large
constexpr size_t kCacheLimit = size_t(1) << 30;  // bytes kept in the cache at most
constexpr size_t kSmallLimit = size_t(1) << 26;  // of which blocks below kLargeMin, at most

// Rounds a size (a multiple of 64) up to one of 8 steps per power of two (at most 12.5 % slack),
// so blocks of nearby sizes are interchangeable. Below 512 bytes the steps are the 64-byte ones.
size_t size_class(size_t n) {
  size_t top = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = std::max<size_t>(top / 8, 64);
  return (n + step - 1) / step * step;
}

// The free list of a size class: 64..448 bytes in steps of 64, then 8 per power of two.
constexpr int kClasses = 8 + (64 - 9) * 8;
int class_index(size_t cls) {
  if (cls < 512) return static_cast<int>(cls / 64) - 1;
  const int lg = 63 - __builtin_clzll(cls);
  return 8 + (lg - 9) * 8 + static_cast<int>(cls >> (lg - 3)) - 8;
}

class BlockCache {
 public:
  ~BlockCache() { release_all(); }

  void* take(size_t cls) {
    std::lock_guard lock(mu_);
    std::vector<void*>& list = free_[static_cast<size_t>(class_index(cls))];
    if (list.empty()) return nullptr;
    void* p = list.back();
    list.pop_back();
    cached_ -= cls;
    if (cls < kLargeMin) small_ -= cls;
    return p;
  }

  // Keeps p for reuse unless the cache (or its share for small blocks) is full.
  void give(void* p, size_t cls) {
    {
      std::lock_guard lock(mu_);
      const bool small = cls < kLargeMin;
      if (cached_ + cls <= kCacheLimit && (!small || small_ + cls <= kSmallLimit)) {
        free_[static_cast<size_t>(class_index(cls))].push_back(p);
        cached_ += cls;
        if (small) small_ += cls;
        return;
      }
    }
    std::free(p);
  }

  void release_all() {
    std::lock_guard lock(mu_);
    for (std::vector<void*>& blocks : free_) {
      for (void* p : blocks) std::free(p);
      blocks.clear();
      blocks.shrink_to_fit();
    }
    cached_ = 0;
    small_ = 0;
  }

 private:
  std::mutex mu_;
  std::array<std::vector<void*>, kClasses> free_;
  size_t cached_ = 0;
  size_t small_ = 0;
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache;  // never destroyed: tensors may outlive statics
  return *cache;
}

[[noreturn]] void host_oom(size_t nbytes) {
  throw OutOfMemoryError("[cpu] out of memory: tried to allocate " + std::to_string(nbytes) +
                         " bytes of host memory");
}

class CpuAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    const size_t rounded = (std::max<size_t>(nbytes, 1) + 63) & ~size_t(63);
    const size_t cls = size_class(rounded);
    void* p = block_cache().take(cls);
    if (!p) p = std::aligned_alloc(64, cls);
    if (!p) {
      block_cache().release_all();  // return cached blocks to the system and try once more
      p = std::aligned_alloc(64, cls);
    }
    if (!p) host_oom(nbytes);
    if (g_poison.load(std::memory_order_relaxed)) {
      std::memset(p, g_poison_byte.load(), cls);
    }
    return DataPtr(p, reinterpret_cast<void*>(cls), &CpuAllocator::release, Device(kCPU));
  }

 private:
  static void release(void* data, void* ctx) {
    block_cache().give(data, reinterpret_cast<size_t>(ctx));
  }
};

}  // namespace

void set_cpu_alloc_poison(bool enabled, uint8_t pattern) {
  g_poison_byte.store(pattern);
  g_poison.store(enabled);
}

void cpu_empty_cache() { block_cache().release_all(); }

Allocator& CpuBackend::allocator(Device device, bool pinned) {
  static CpuAllocator alloc;
  if (!pinned) return alloc;
  // Page-locked host memory comes from the CUDA runtime.
  Backend* cuda = cuda_backend_if_present();
  if (cuda == nullptr || cuda::device_count() == 0) {
    throw Error("[pin_memory] Cannot access accelerator device when none is available.");
  }
  return cuda->allocator(device, true);
}

CpuBackend& cpu_backend() {
  static CpuBackend b;
  return b;
}

}  // namespace ember
