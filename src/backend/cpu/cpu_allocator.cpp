// Host memory: 64-byte aligned blocks (a cache line, and room for AVX-512 loads). Blocks of 1 MiB
// and more are cached after free: a fresh multi-megabyte block is an mmap whose every page faults
// (and is zeroed by the kernel) on first touch, which costs more than the op that fills it.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "ember/cuda.h"

namespace ember {

namespace {

std::atomic<bool> g_poison{false};
std::atomic<uint8_t> g_poison_byte{0xFF};

constexpr size_t kCacheMin = size_t(1) << 20;    // smaller blocks go straight to malloc
constexpr size_t kCacheLimit = size_t(1) << 30;  // bytes kept in the cache at most

// Rounds a cached size up to one of 8 steps per power of two (at most 12.5 % slack), so blocks
// of nearby sizes are interchangeable.
size_t size_class(size_t n) {
  size_t top = size_t(1) << (63 - __builtin_clzll(n));
  size_t step = top / 8;
  return (n + step - 1) / step * step;
}

class BlockCache {
 public:
  ~BlockCache() { release_all(); }

  void* take(size_t cls) {
    std::lock_guard lock(mu_);
    auto it = free_.find(cls);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= cls;
    return p;
  }

  // Keeps p for reuse unless the cache is full.
  void give(void* p, size_t cls) {
    {
      std::lock_guard lock(mu_);
      if (cached_ + cls <= kCacheLimit) {
        free_[cls].push_back(p);
        cached_ += cls;
        return;
      }
    }
    std::free(p);
  }

  void release_all() {
    std::lock_guard lock(mu_);
    for (auto& [cls, blocks] : free_) {
      for (void* p : blocks) std::free(p);
    }
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;
  size_t cached_ = 0;
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
    size_t rounded = (std::max<size_t>(nbytes, 1) + 63) & ~size_t(63);
    void* p = nullptr;
    void* ctx = nullptr;
    if (rounded >= kCacheMin) {
      size_t cls = size_class(rounded);
      p = block_cache().take(cls);
      if (!p) p = std::aligned_alloc(64, cls);
      if (!p) {
        block_cache().release_all();  // return cached blocks to the system and try once more
        p = std::aligned_alloc(64, cls);
      }
      if (!p) host_oom(nbytes);
      rounded = cls;
      ctx = reinterpret_cast<void*>(cls);
    } else {
      p = std::aligned_alloc(64, rounded);
      if (!p) host_oom(nbytes);
    }
    if (g_poison.load(std::memory_order_relaxed)) {
      std::memset(p, g_poison_byte.load(), rounded);
    }
    return DataPtr(p, ctx, &CpuAllocator::release, Device(kCPU));
  }

 private:
  static void release(void* data, void* ctx) {
    if (ctx) {
      block_cache().give(data, reinterpret_cast<size_t>(ctx));
    } else {
      std::free(data);
    }
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
