// The pinned host memory cache: PyTorch's CachingHostAllocator bookkeeping as plain C++ over an
// injected raw allocator (cudaHostAlloc / cudaFreeHost and cudaEvents in a CUDA build).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "alloc/caching_allocator.h"

namespace ember::alloc {

// Page-locked host memory and stream events. Calls arrive under the allocator's lock.
struct RawHostAllocator : EventOps {
  // nullptr when the memory cannot be provided. Must not throw.
  virtual void* malloc(std::size_t size) = 0;
  virtual void free(void* ptr, std::size_t size) = 0;
};

// Blocks are sized in powers of two and cached after free. A block used by streams
// (record_stream: every asynchronous copy from or to it) is reused only after events recorded
// on those streams when it was freed have completed. Thread-safe.
class CachingHostAllocator {
 public:
  explicit CachingHostAllocator(RawHostAllocator& raw) : raw_(raw) {}
  // Returns every block to the raw allocator: outstanding pointers die with the allocator.
  ~CachingHostAllocator();
  CachingHostAllocator(const CachingHostAllocator&) = delete;
  CachingHostAllocator& operator=(const CachingHostAllocator&) = delete;

  // At least size bytes; nullptr for 0. Throws OutOfMemoryError when the raw allocator fails
  // even after the cache was emptied.
  void* malloc(std::size_t size);
  // Returns a pointer from malloc (no-op for nullptr); ValueError if unknown.
  void free(void* ptr);
  // Marks the block at ptr as used by stream of device; false when ptr is not a live block.
  bool record_stream(const void* ptr, int device, StreamId stream);
  // True when ptr is the start of a live block of this allocator.
  bool is_pinned(const void* ptr) const;
  // Makes blocks whose events have completed reusable.
  void process_events();
  // Returns every reusable cached block to the raw allocator (blocks still waiting for events
  // stay).
  void empty_cache();
  // "{allocation,segment,allocated_bytes,reserved_bytes}.{current,peak,allocated,freed}",
  // num_host_alloc, num_host_free.
  std::map<std::string, std::int64_t> stats() const;

 private:
  struct Block {
    std::size_t size = 0;
    void* ptr = nullptr;
    bool allocated = false;
    int event_count = 0;
    std::set<std::pair<int, StreamId>> streams;
  };
  struct Stat {
    std::int64_t current = 0, peak = 0, allocated = 0, freed = 0;
    void update(std::int64_t amount);
  };
  void process_events_locked();
  void release_free_blocks();

  RawHostAllocator& raw_;
  mutable std::mutex mutex_;
  std::unordered_map<const void*, Block*> blocks_;     // every block
  std::map<std::size_t, std::vector<Block*>> free_;    // reusable blocks by size
  std::deque<std::pair<EventHandle, Block*>> events_;  // oldest first
  Stat allocation_, segment_, allocated_bytes_, reserved_bytes_;
  std::int64_t num_host_alloc_ = 0, num_host_free_ = 0;
};

}  // namespace ember::alloc
