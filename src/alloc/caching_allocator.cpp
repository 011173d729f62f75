// CachingAllocator: best-fit search in per-stream size-ordered pools, splitting and merging
// within segments, OOM retry after releasing the cache, statistics and private pools.
#include "alloc/caching_allocator.h"

#include <algorithm>
#include <cstdio>

#include "ember/error.h"

namespace ember::alloc {

namespace {

std::size_t round_size(std::size_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

// The raw allocation that backs a request of `size` (already rounded) bytes.
std::size_t allocation_size(std::size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((size + kRoundLarge - 1) / kRoundLarge);
}

std::string hex(std::uintptr_t p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(p));
  return buf;
}

}  // namespace

void CachingAllocator::Stat::update(std::int64_t amount) {
  current += amount;
  peak = std::max(peak, current);
  if (amount > 0) allocated += amount;
  if (amount < 0) freed -= amount;
}

void CachingAllocator::update(StatArray& stat, const BlockPool& pool, std::int64_t amount) {
  stat[kAll].update(amount);
  stat[pool.is_small ? kSmallPool : kLargePool].update(amount);
}

CachingAllocator::CachingAllocator(int device, RawAllocator& raw, AllocatorOptions options)
    : device_(device),
      raw_(raw),
      max_split_size_(options.max_split_size),
      gc_threshold_(options.garbage_collection_threshold) {
  // A free block of max_split_size or more must be a whole segment, so that releasing it
  // returns a raw allocation; segments below 20 MiB guarantee that.
  if (max_split_size_ != SIZE_MAX && max_split_size_ <= kLargeBuffer) {
    throw ValueError("[cuda] max_split_size must be more than 20 MiB, got " +
                     std::to_string(max_split_size_) + " bytes");
  }
  if (!(gc_threshold_ >= 0.0 && gc_threshold_ < 1.0)) {
    throw ValueError("[cuda] garbage_collection_threshold must be in [0, 1), got " +
                     std::to_string(gc_threshold_));
  }
}

CachingAllocator::~CachingAllocator() {
  // Collect segment heads first: releasing deletes blocks.
  std::vector<Block*> all;
  for (auto& [ptr, b] : allocated_blocks_) all.push_back(b);
  for (auto& [stream, events] : stream_events_) {
    for (auto& [event, b] : events) {
      if (event != nullptr) raw_.release_event(event);
      // A block waits on several streams at most once each: add it at its last event.
      if (--b->event_count == 0) all.push_back(b);
    }
  }
  for_each_pool([&](const BlockPool& pool) {
    all.insert(all.end(), pool.blocks.begin(), pool.blocks.end());
  });
  for (Block* b : all) {
    if (b->prev != nullptr) continue;
    std::size_t total = 0;
    for (Block* c = b; c != nullptr; c = c->next) total += c->size;
    raw_.free(reinterpret_cast<void*>(b->ptr), total, device_);
  }
  for (Block* b : all) delete b;
}

template <class F>
void CachingAllocator::for_each_pool(F&& f) const {
  f(large_);
  f(small_);
  for (auto& [id, p] : private_pools_) {
    f(p->large);
    f(p->small);
  }
}

// ---- allocation ------------------------------------------------------------------------------

CachingAllocator::BlockPool& CachingAllocator::pool_for(std::size_t size, StreamId stream) {
  for (auto& [id, s] : alloc_to_pools_) {
    if (s == stream) {
      PrivatePool& p = *private_pools_.at(id);
      return size <= kSmallSize ? p.small : p.large;
    }
  }
  return size <= kSmallSize ? small_ : large_;
}

bool CachingAllocator::get_free_block(BlockPool& pool, StreamId stream, std::size_t size,
                                      Block*& out) {
  pool.free_block_searches += 1;
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != stream) return false;
  // An unsplittable oversize block would waste most of itself on a small request, and one much
  // larger than a large request would strand the difference.
  if (size < max_split_size_ && (*it)->size >= max_split_size_) return false;
  if (size >= max_split_size_ && (*it)->size >= size + kLargeBuffer) return false;
  out = *it;
  pool.blocks.erase(it);
  return true;
}

bool CachingAllocator::alloc_block(BlockPool& pool, StreamId stream, std::size_t size,
                                   bool is_retry, Block*& out) {
  if (is_retry) stats_.num_alloc_retries += 1;
  const std::size_t alloc_size = allocation_size(size);
  if (set_fraction_ && total_allocated_memory_ + alloc_size > allowed_memory_maximum_) {
    return false;
  }
  void* ptr = raw_.malloc(alloc_size, device_, stream);
  if (ptr == nullptr) return false;
  stats_.num_device_alloc += 1;
  total_allocated_memory_ += alloc_size;
  pool.num_segments += 1;
  auto* block = new Block;
  block->stream = stream;
  block->size = alloc_size;
  block->pool = &pool;
  block->ptr = reinterpret_cast<std::uintptr_t>(ptr);
  update(stats_.segment, pool, 1);
  update(stats_.reserved_bytes, pool, static_cast<std::int64_t>(alloc_size));
  if (alloc_size >= max_split_size_) stats_.oversize_segments.update(1);
  out = block;
  return true;
}

bool CachingAllocator::should_split(const Block* block, std::size_t size) const {
  const std::size_t remaining = block->size - size;
  if (block->pool->is_small) return remaining >= kMinBlockSize;
  return size < max_split_size_ && remaining > kSmallSize;
}

CachingAllocator::Block* CachingAllocator::alloc_found_block(Block* block, std::size_t size,
                                                             std::size_t requested) {
  BlockPool& pool = *block->pool;
  const bool already_split = block->is_split();
  if (should_split(block, size)) {
    // The front becomes the allocation and the tail stays free in the pool.
    Block* remaining = block;
    block = new Block;
    block->stream = remaining->stream;
    block->size = size;
    block->pool = &pool;
    block->ptr = remaining->ptr;
    block->prev = remaining->prev;
    if (block->prev != nullptr) block->prev->next = block;
    block->next = remaining;
    remaining->prev = block;
    remaining->ptr += size;
    remaining->size -= size;
    pool.blocks.insert(remaining);
    if (already_split) {
      update(stats_.inactive_split_bytes, pool, -static_cast<std::int64_t>(size));
    } else {
      update(stats_.inactive_split_bytes, pool, static_cast<std::int64_t>(remaining->size));
      update(stats_.inactive_split, pool, 1);
    }
  } else if (already_split) {
    update(stats_.inactive_split_bytes, pool, -static_cast<std::int64_t>(block->size));
    update(stats_.inactive_split, pool, -1);
  }
  block->allocated = true;
  block->requested_size = requested;
  allocated_blocks_[block->ptr] = block;
  const auto bytes = static_cast<std::int64_t>(block->size);
  update(stats_.allocation, pool, 1);
  update(stats_.allocated_bytes, pool, bytes);
  update(stats_.active, pool, 1);
  update(stats_.active_bytes, pool, bytes);
  update(stats_.requested_bytes, pool, static_cast<std::int64_t>(requested));
  if (block->size >= max_split_size_) stats_.oversize_allocations.update(1);
  return block;
}

void* CachingAllocator::malloc(std::size_t requested, StreamId stream) {
  if (requested == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (requested > SIZE_MAX / 2) {
    stats_.num_ooms += 1;
    raise_oom(requested);
  }
  const std::size_t size = round_size(requested);
  BlockPool& pool = pool_for(size, stream);
  Block* block = nullptr;
  if (alloc_to_pools_.empty()) process_events_locked();
  // Cache, then the device (after garbage collection, when enabled), then the device after
  // releasing cached blocks big enough, then after releasing every unused segment (never while
  // a graph capture owns the stream).
  bool found = get_free_block(pool, stream, size, block);
  if (!found && gc_threshold_ > 0.0 && set_fraction_) garbage_collect_cached_blocks();
  found = found || alloc_block(pool, stream, size, false, block) ||
          (release_available_cached_blocks(pool, stream, size) &&
           alloc_block(pool, stream, size, false, block));
  if (!found && alloc_to_pools_.empty()) {
    release_cached_blocks();
    found = alloc_block(pool, stream, size, true, block);
  }
  if (!found) {
    stats_.num_ooms += 1;
    raise_oom(allocation_size(size));
  }
  return reinterpret_cast<void*>(alloc_found_block(block, size, requested)->ptr);
}

void CachingAllocator::raise_oom(std::size_t alloc_size) {
  const MemInfo info = raw_.mem_get_info(device_);
  OomReport r;
  r.device = device_;
  r.alloc_size = alloc_size;
  r.device_total = info.total;
  r.device_free = info.free;
  r.allowed = set_fraction_ ? allowed_memory_maximum_ : 0;
  r.allocated = static_cast<std::size_t>(stats_.allocated_bytes[kAll].current);
  r.reserved = static_cast<std::size_t>(stats_.reserved_bytes[kAll].current);
  for (auto& [id, p] : private_pools_) {
    for (const BlockPool* bp : {&p->large, &p->small}) {
      for (const Block* b : bp->blocks) r.private_cached += b->size;
    }
  }
  for (const BlockPool* bp : {&large_, &small_}) {
    for (const Block* b : bp->blocks) {
      r.largest_free_block = std::max(r.largest_free_block, b->size);
    }
  }
  throw OutOfMemoryError(format_oom_message(r));
}

// ---- releasing cached memory -----------------------------------------------------------------

void CachingAllocator::release_block(Block* block) {
  BlockPool& pool = *block->pool;
  raw_.free(reinterpret_cast<void*>(block->ptr), block->size, device_);
  stats_.num_device_free += 1;
  total_allocated_memory_ -= block->size;
  pool.num_segments -= 1;
  pool.blocks.erase(block);
  update(stats_.segment, pool, -1);
  update(stats_.reserved_bytes, pool, -static_cast<std::int64_t>(block->size));
  if (block->size >= max_split_size_) stats_.oversize_segments.update(-1);
  delete block;
}

bool CachingAllocator::release_available_cached_blocks(BlockPool& pool, StreamId stream,
                                                       std::size_t size) {
  // Without a split limit every cached block is splittable and get_free_block already took
  // the best fit, so only oversize blocks can be worth releasing one by one.
  if (max_split_size_ == SIZE_MAX) return false;
  Block key;
  key.stream = stream;
  key.size = std::max(size, max_split_size_);
  auto it = pool.blocks.lower_bound(&key);
  if (it != pool.blocks.end() && (*it)->stream == stream && !(*it)->is_split()) {
    release_block(*it);
    return true;
  }
  // No single block is large enough: release oversize blocks, largest first, if together
  // they cover the request.
  std::vector<Block*> victims;
  std::size_t released = 0;
  while (released < key.size && it != pool.blocks.begin()) {
    --it;
    Block* b = *it;
    if (b->stream != stream || b->size < max_split_size_) break;
    if (b->is_split()) continue;
    victims.push_back(b);
    released += b->size;
  }
  if (released < key.size) return false;
  for (Block* b : victims) release_block(b);
  return true;
}

void CachingAllocator::release_blocks(BlockPool& pool) {
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* b = *it;
    ++it;
    if (!b->is_split()) release_block(b);
  }
}

void CachingAllocator::garbage_collect_cached_blocks() {
  // PyTorch's policy: above threshold * allowed, release unsplit cached large segments whose
  // age (free-block searches since they were cached) is at least the average, until enough is
  // reclaimed or nothing more can go.
  const auto gc_threshold =
      static_cast<std::size_t>(gc_threshold_ * static_cast<double>(allowed_memory_maximum_));
  if (total_allocated_memory_ <= gc_threshold) return;
  const std::size_t target = total_allocated_memory_ - gc_threshold;
  auto age = [&](const Block* b) { return large_.free_block_searches - b->gc_count_base; };
  double total_age = 0;
  int freeable = 0;
  for (const Block* b : large_.blocks) {
    if (!b->is_split()) {
      total_age += static_cast<double>(age(b));
      freeable += 1;
    }
  }
  std::size_t reclaimed = 0;
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    const double threshold = total_age / freeable;
    freed = false;
    for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
      Block* b = *it;
      ++it;
      if (b->is_split() || static_cast<double>(age(b)) < threshold) continue;
      freed = true;
      reclaimed += b->size;
      total_age -= static_cast<double>(age(b));
      freeable -= 1;
      release_block(b);
    }
  }
}

void CachingAllocator::release_cached_blocks() {
  synchronize_and_free_events();
  release_blocks(large_);
  release_blocks(small_);
  for (auto it = private_pools_.begin(); it != private_pools_.end();) {
    PrivatePool& p = *it->second;
    const bool in_use = std::any_of(alloc_to_pools_.begin(), alloc_to_pools_.end(),
                                    [&](const auto& e) { return e.first == it->first; });
    if (p.use_count > 0 || in_use) {
      ++it;
      continue;
    }
    release_blocks(p.large);
    release_blocks(p.small);
    if (p.large.num_segments == 0 && p.small.num_segments == 0) {
      it = private_pools_.erase(it);
    } else {
      ++it;
    }
  }
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_blocks();
}

// ---- freeing -----------------------------------------------------------------------------------

std::size_t CachingAllocator::try_merge(Block* dst, Block* src) {
  // A block freed but waiting for events is still allocated.
  if (src == nullptr || src->allocated) return 0;
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev != nullptr) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next != nullptr) dst->next->prev = dst;
  }
  const std::size_t subsumed = src->size;
  dst->size += subsumed;
  src->pool->blocks.erase(src);
  delete src;
  return subsumed;
}

void CachingAllocator::free_block(Block* block) {
  BlockPool& pool = *block->pool;
  const auto original = static_cast<std::int64_t>(block->size);
  const auto requested = static_cast<std::int64_t>(block->requested_size);
  block->allocated = false;
  block->requested_size = 0;
  std::int64_t split_blocks = 0, split_bytes = 0;
  // The block is in no free set yet, so its key (ptr, size) may change while merging.
  for (Block* candidate : {block->prev, block->next}) {
    const std::size_t subsumed = try_merge(block, candidate);
    if (subsumed > 0) {
      split_blocks -= 1;
      split_bytes -= static_cast<std::int64_t>(subsumed);
    }
  }
  block->gc_count_base = pool.free_block_searches;
  pool.blocks.insert(block);
  if (block->is_split()) {
    split_blocks += 1;
    split_bytes += static_cast<std::int64_t>(block->size);
  }
  update(stats_.inactive_split, pool, split_blocks);
  update(stats_.inactive_split_bytes, pool, split_bytes);
  update(stats_.active, pool, -1);
  update(stats_.active_bytes, pool, -original);
  update(stats_.requested_bytes, pool, -requested);
  if (static_cast<std::size_t>(original) >= max_split_size_) {
    stats_.oversize_allocations.update(-1);
  }
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == allocated_blocks_.end()) {
    throw ValueError(
        "[cuda] invalid device pointer: " + hex(reinterpret_cast<std::uintptr_t>(ptr)) +
        " on device " + std::to_string(device_));
  }
  Block* block = it->second;
  allocated_blocks_.erase(it);
  update(stats_.allocation, *block->pool, -1);
  update(stats_.allocated_bytes, *block->pool, -static_cast<std::int64_t>(block->size));
  if (block->stream_uses.empty()) {
    free_block(block);
  } else {
    insert_events(block);
  }
}

void CachingAllocator::record_stream(void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_blocks_.find(reinterpret_cast<std::uintptr_t>(ptr));
  if (it == allocated_blocks_.end()) {
    throw ValueError("[record_stream] " + hex(reinterpret_cast<std::uintptr_t>(ptr)) +
                     " is not an allocation of the caching allocator of device " +
                     std::to_string(device_));
  }
  // The allocating stream is ordered with the block's reuse already.
  if (stream != it->second->stream) it->second->stream_uses.insert(stream);
}

void CachingAllocator::insert_events(Block* block) {
  for (StreamId stream : block->stream_uses) {
    block->event_count += 1;
    stream_events_[stream].emplace_back(raw_.record_event(device_, stream), block);
  }
  block->stream_uses.clear();
}

void CachingAllocator::process_events() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events_locked();
}

void CachingAllocator::process_events_locked() {
  // Events on one stream complete in order: stop at the first that has not.
  for (auto it = stream_events_.begin(); it != stream_events_.end();) {
    auto& events = it->second;
    while (!events.empty()) {
      auto [event, block] = events.front();
      if (event != nullptr) {
        if (!raw_.query_event(event)) break;
        raw_.release_event(event);
      }
      events.pop_front();
      if (--block->event_count == 0) free_block(block);
    }
    it = events.empty() ? stream_events_.erase(it) : std::next(it);
  }
}

void CachingAllocator::synchronize_and_free_events() {
  for (auto& [stream, events] : stream_events_) {
    for (auto& [event, block] : events) {
      if (event != nullptr) {
        raw_.synchronize_event(event);
        raw_.release_event(event);
      }
      if (--block->event_count == 0) free_block(block);
    }
  }
  stream_events_.clear();
}

// ---- options, statistics, snapshots --------------------------------------------------------

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    throw ValueError("[cuda] set_memory_fraction: fraction must be in [0, 1], got " +
                     std::to_string(fraction));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const MemInfo info = raw_.mem_get_info(device_);
  set_fraction_ = true;
  allowed_memory_maximum_ = static_cast<std::size_t>(fraction * static_cast<double>(info.total));
}

std::map<std::string, std::int64_t> CachingAllocator::stats_locked() const {
  std::map<std::string, std::int64_t> out;
  auto put = [&](const std::string& prefix, const Stat& s) {
    out[prefix + ".current"] = s.current;
    out[prefix + ".peak"] = s.peak;
    out[prefix + ".allocated"] = s.allocated;
    out[prefix + ".freed"] = s.freed;
  };
  auto put_array = [&](const std::string& name, const StatArray& a) {
    put(name + ".all", a[kAll]);
    put(name + ".large_pool", a[kLargePool]);
    put(name + ".small_pool", a[kSmallPool]);
  };
  put_array("allocation", stats_.allocation);
  put_array("segment", stats_.segment);
  put_array("active", stats_.active);
  put_array("inactive_split", stats_.inactive_split);
  put_array("allocated_bytes", stats_.allocated_bytes);
  put_array("reserved_bytes", stats_.reserved_bytes);
  put_array("active_bytes", stats_.active_bytes);
  put_array("inactive_split_bytes", stats_.inactive_split_bytes);
  put_array("requested_bytes", stats_.requested_bytes);
  put("oversize_allocations", stats_.oversize_allocations);
  put("oversize_segments", stats_.oversize_segments);
  out["num_alloc_retries"] = stats_.num_alloc_retries;
  out["num_ooms"] = stats_.num_ooms;
  out["num_device_alloc"] = stats_.num_device_alloc;
  out["num_device_free"] = stats_.num_device_free;
  out["max_split_size"] =
      max_split_size_ == SIZE_MAX ? -1 : static_cast<std::int64_t>(max_split_size_);
  return out;
}

std::map<std::string, std::int64_t> CachingAllocator::memory_stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_locked();
}

void CachingAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StatArray* a : {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split,
                       &stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                       &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& s : *a) s.peak = s.current;
  }
  stats_.oversize_allocations.peak = stats_.oversize_allocations.current;
  stats_.oversize_segments.peak = stats_.oversize_segments.current;
}

void CachingAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StatArray* a : {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split,
                       &stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                       &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& s : *a) s.allocated = s.freed = 0;
  }
  for (Stat* s : {&stats_.oversize_allocations, &stats_.oversize_segments}) {
    s->allocated = s->freed = 0;
  }
  stats_.num_alloc_retries = stats_.num_ooms = 0;
  stats_.num_device_alloc = stats_.num_device_free = 0;
}

std::string CachingAllocator::memory_summary(bool abbreviated) const {
  return format_memory_summary(memory_stats(), device_, abbreviated);
}

std::vector<SegmentInfo> CachingAllocator::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const Block*> heads;
  for (auto& [ptr, b] : allocated_blocks_) {
    if (b->prev == nullptr) heads.push_back(b);
  }
  for (auto& [stream, events] : stream_events_) {
    for (auto& [event, b] : events) {
      if (b->prev == nullptr) heads.push_back(b);
    }
  }
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  for_each_pool([&](const BlockPool& pool) {
    for (const Block* b : pool.blocks) {
      if (b->prev == nullptr) heads.push_back(b);
    }
  });
  std::sort(heads.begin(), heads.end(),
            [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  std::vector<SegmentInfo> out;
  out.reserve(heads.size());
  for (const Block* head : heads) {
    SegmentInfo seg;
    seg.device = device_;
    seg.address = head->ptr;
    seg.stream = head->stream;
    seg.is_large = !head->pool->is_small;
    seg.pool_id = head->pool->owner;
    for (const Block* b = head; b != nullptr; b = b->next) {
      const bool pending = b->event_count > 0;
      seg.blocks.push_back(
          {b->size, pending ? 0 : b->requested_size, b->allocated && !pending, pending});
      seg.total_size += b->size;
      if (b->allocated && !pending) {
        seg.allocated_size += b->size;
        seg.requested_size += b->requested_size;
      }
    }
    out.push_back(std::move(seg));
  }
  return out;
}

// ---- private pools -----------------------------------------------------------------------------

MempoolId CachingAllocator::create_pool() {
  std::lock_guard<std::mutex> lock(mutex_);
  const MempoolId id = next_pool_id_++;
  private_pools_.emplace(id, std::make_unique<PrivatePool>(id));
  return id;
}

void CachingAllocator::retain_pool(MempoolId pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = private_pools_.find(pool);
  if (it == private_pools_.end() || it->second->use_count == 0) {
    throw ValueError("[cuda] retain_pool: no live private pool " + std::to_string(pool));
  }
  it->second->use_count += 1;
}

void CachingAllocator::release_pool(MempoolId pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = private_pools_.find(pool);
  if (it == private_pools_.end() || it->second->use_count == 0) {
    throw ValueError("[cuda] release_pool: no live private pool " + std::to_string(pool));
  }
  it->second->use_count -= 1;
  if (it->second->use_count > 0) return;
  const bool in_use = std::any_of(alloc_to_pools_.begin(), alloc_to_pools_.end(),
                                  [&](const auto& e) { return e.first == pool; });
  if (in_use) return;
  // Its unused segments go back now; those with live tensors at the next empty_cache.
  PrivatePool& p = *it->second;
  process_events_locked();
  release_blocks(p.large);
  release_blocks(p.small);
  if (p.large.num_segments == 0 && p.small.num_segments == 0) private_pools_.erase(it);
}

void CachingAllocator::acquire_pool(MempoolId pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pool == 0) throw ValueError("[cuda] acquire_pool: 0 names no private pool");
  auto it = private_pools_.find(pool);
  if (it == private_pools_.end()) {
    private_pools_.emplace(pool, std::make_unique<PrivatePool>(pool));
  } else {
    it->second->use_count += 1;  // a dead pool (count 0) whose segments wait comes back to life
  }
}

void CachingAllocator::begin_allocate_to_pool(MempoolId pool, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = private_pools_.find(pool);
  if (it == private_pools_.end() || it->second->use_count == 0) {
    throw ValueError("[cuda] begin_allocate_to_pool: no live private pool " + std::to_string(pool));
  }
  for (auto& [id, s] : alloc_to_pools_) {
    if (s == stream) {
      throw ValueError("[cuda] begin_allocate_to_pool: stream " + std::to_string(stream) +
                       " already allocates into private pool " + std::to_string(id));
    }
  }
  alloc_to_pools_.emplace_back(pool, stream);
}

void CachingAllocator::end_allocate_to_pool(MempoolId pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(alloc_to_pools_.begin(), alloc_to_pools_.end(),
                         [&](const auto& e) { return e.first == pool; });
  if (it == alloc_to_pools_.end()) {
    throw ValueError("[cuda] end_allocate_to_pool: private pool " + std::to_string(pool) +
                     " is not being allocated into");
  }
  alloc_to_pools_.erase(it);
}

}  // namespace ember::alloc
