// CachingHostAllocator: power-of-two blocks, an exact-size free list, and a FIFO of events that
// hold freed blocks back until the streams that used them are done.
#include "alloc/host_allocator.h"

#include <algorithm>
#include <bit>

#include "ember/error.h"

namespace ember::alloc {

void CachingHostAllocator::Stat::update(std::int64_t amount) {
  current += amount;
  peak = std::max(peak, current);
  if (amount > 0) allocated += amount;
  if (amount < 0) freed -= amount;
}

CachingHostAllocator::~CachingHostAllocator() {
  for (auto& [event, block] : events_) {
    if (event != nullptr) raw_.release_event(event);
  }
  for (auto& [ptr, block] : blocks_) {
    raw_.free(block->ptr, block->size);
    delete block;
  }
}

void* CachingHostAllocator::malloc(std::size_t size) {
  if (size == 0) return nullptr;
  if (size > (SIZE_MAX >> 1) + 1) {
    throw OutOfMemoryError("[pin_memory] cannot allocate " + std::to_string(size) +
                           " bytes of pinned host memory");
  }
  const std::size_t rounded = std::bit_ceil(size);
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  Block* block = nullptr;
  auto it = free_.find(rounded);
  if (it != free_.end() && !it->second.empty()) {
    block = it->second.back();
    it->second.pop_back();
  } else {
    void* p = raw_.malloc(rounded);
    if (p == nullptr) {
      release_free_blocks();
      p = raw_.malloc(rounded);
    }
    if (p == nullptr) {
      throw OutOfMemoryError("[pin_memory] out of pinned host memory: tried to allocate " +
                             format_size(rounded) + " (" +
                             format_size(static_cast<std::uint64_t>(reserved_bytes_.current)) +
                             " already reserved)");
    }
    block = new Block;
    block->size = rounded;
    block->ptr = p;
    blocks_.emplace(p, block);
    num_host_alloc_ += 1;
    segment_.update(1);
    reserved_bytes_.update(static_cast<std::int64_t>(rounded));
  }
  block->allocated = true;
  allocation_.update(1);
  allocated_bytes_.update(static_cast<std::int64_t>(block->size));
  return block->ptr;
}

void CachingHostAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second->allocated) {
    throw ValueError("[pin_memory] freeing memory that is not a live pinned host block");
  }
  Block* block = it->second;
  block->allocated = false;
  allocation_.update(-1);
  allocated_bytes_.update(-static_cast<std::int64_t>(block->size));
  if (block->streams.empty()) {
    free_[block->size].push_back(block);
    return;
  }
  for (auto [device, stream] : block->streams) {
    block->event_count += 1;
    events_.emplace_back(raw_.record_event(device, stream), block);
  }
  block->streams.clear();
}

bool CachingHostAllocator::record_stream(const void* ptr, int device, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second->allocated) return false;
  it->second->streams.emplace(device, stream);
  return true;
}

bool CachingHostAllocator::is_pinned(const void* ptr) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  return it != blocks_.end() && it->second->allocated;
}

void CachingHostAllocator::process_events() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
}

void CachingHostAllocator::process_events_locked() {
  while (!events_.empty()) {
    auto [event, block] = events_.front();
    if (event != nullptr) {
      if (!raw_.query_event(event)) break;
      raw_.release_event(event);
    }
    events_.pop_front();
    if (--block->event_count == 0) free_[block->size].push_back(block);
  }
}

void CachingHostAllocator::release_free_blocks() {
  for (auto& [size, blocks] : free_) {
    for (Block* b : blocks) {
      raw_.free(b->ptr, b->size);
      blocks_.erase(b->ptr);
      num_host_free_ += 1;
      segment_.update(-1);
      reserved_bytes_.update(-static_cast<std::int64_t>(b->size));
      delete b;
    }
  }
  free_.clear();
}

void CachingHostAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
  release_free_blocks();
}

std::map<std::string, std::int64_t> CachingHostAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, std::int64_t> out;
  auto put = [&](const std::string& name, const Stat& s) {
    out[name + ".current"] = s.current;
    out[name + ".peak"] = s.peak;
    out[name + ".allocated"] = s.allocated;
    out[name + ".freed"] = s.freed;
  };
  put("allocation", allocation_);
  put("segment", segment_);
  put("allocated_bytes", allocated_bytes_);
  put("reserved_bytes", reserved_bytes_);
  out["num_host_alloc"] = num_host_alloc_;
  out["num_host_free"] = num_host_free_;
  return out;
}

}  // namespace ember::alloc
