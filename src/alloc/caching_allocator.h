// The device caching allocator: PyTorch's CUDACachingAllocator bookkeeping (pools, splitting,
// merging, statistics, OOM retry, private pools) as plain C++ over an injected raw allocator.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ember::alloc {

// An opaque stream handle (a cudaStream_t cast to an integer); 0 is the default stream.
using StreamId = std::uint64_t;
// A private pool (CUDA graphs); 0 means the default pools.
using MempoolId = std::uint64_t;

constexpr std::size_t kMinBlockSize = 512;        // every size is rounded up to this
constexpr std::size_t kSmallSize = 1 << 20;       // requests <= 1 MiB use the small pool
constexpr std::size_t kSmallBuffer = 2 << 20;     // small-pool segment size
constexpr std::size_t kLargeBuffer = 20 << 20;    // segment size for 1..10 MiB requests
constexpr std::size_t kMinLargeAlloc = 10 << 20;  // from here segments fit the request
constexpr std::size_t kRoundLarge = 2 << 20;      // large segments are multiples of 2 MiB

struct MemInfo {
  std::size_t free = 0;
  std::size_t total = 0;
};

// An event recorded on a stream, as EventOps hands it out.
using EventHandle = void*;

// Stream events, for memory used on streams other than the one it was allocated for. A CUDA
// build records cudaEvents; tests complete fake events when they choose.
struct EventOps {
  virtual ~EventOps() = default;
  // An event recorded now on stream of device. Must not throw.
  virtual EventHandle record_event(int device, StreamId stream) = 0;
  // True once the work before the event has completed.
  virtual bool query_event(EventHandle event) = 0;
  virtual void synchronize_event(EventHandle event) = 0;
  // Gives an event from record_event back (it may be pooled and recorded again).
  virtual void release_event(EventHandle event) = 0;
};

// What the allocator asks of the device. A CUDA build implements it with cudaMalloc /
// cudaFree / cudaMemGetInfo and cudaEvents; tests use a fixed-capacity arena. Calls arrive
// under the allocator's lock, one at a time per device.
struct RawAllocator : EventOps {
  // `size` bytes on `device` (the stream is a hint, e.g. for cudaMallocAsync); nullptr when the
  // device cannot provide them. Must not throw.
  virtual void* malloc(std::size_t size, int device, StreamId stream) = 0;
  // Returns a pointer from malloc with the size it was allocated with. May synchronize.
  virtual void free(void* ptr, std::size_t size, int device) = 0;
  // Free and total bytes of the device, as cudaMemGetInfo reports them.
  virtual MemInfo mem_get_info(int device) = 0;
};

struct AllocatorOptions {
  // Blocks of this size or more are never split (PyTorch's max_split_size_mb); must be more
  // than 20 MiB unless left unlimited.
  std::size_t max_split_size = SIZE_MAX;
  // 0, or in (0, 1): with a memory fraction set, when reserved memory would pass this share of
  // the allowed memory, unused cached large segments are released (oldest first) before the
  // device is asked for more (PyTorch's garbage_collection_threshold).
  double garbage_collection_threshold = 0.0;
  // Accepted for PyTorch compatibility; segments are never expandable.
  bool expandable_segments = false;
};

// EMBER_CUDA_ALLOC_CONF, with PyTorch's PYTORCH_CUDA_ALLOC_CONF syntax: comma-separated
// key:value pairs, e.g. "max_split_size_mb:128,garbage_collection_threshold:0.8". Keys:
// max_split_size_mb (> 20), garbage_collection_threshold (0 < t < 1), expandable_segments
// (True/False, accepted and ignored). Throws ValueError "[EMBER_CUDA_ALLOC_CONF] ..." naming a
// bad key or value.
AllocatorOptions parse_alloc_conf(const std::string& conf);
// The options from the environment, parsed once per process (and re-thrown on each call if bad).
const AllocatorOptions& alloc_conf_from_env();

// One block of a segment, as snapshot() reports it.
struct BlockInfo {
  std::size_t size = 0;
  std::size_t requested_size = 0;  // 0 when free
  bool allocated = false;
  bool pending_free = false;  // freed, waiting for events on streams that used it
};

// One raw allocation and its blocks in address order.
struct SegmentInfo {
  int device = 0;
  std::uintptr_t address = 0;
  std::size_t total_size = 0;
  std::size_t allocated_size = 0;
  std::size_t requested_size = 0;
  StreamId stream = 0;
  bool is_large = false;
  MempoolId pool_id = 0;
  std::vector<BlockInfo> blocks;
};

// Per-device caching allocator. Thread-safe: one mutex guards all state.
//
// Blocks freed on a stream are reused only by requests on that stream, so no event is needed
// while each allocation is used on the stream it was allocated on. A block also used on other
// streams (record_stream) is held at free until events recorded on each of them then have
// completed; process_events() returns such blocks, as do malloc and empty_cache.
class CachingAllocator {
 public:
  // Throws ValueError for a max_split_size that is not more than 20 MiB.
  CachingAllocator(int device, RawAllocator& raw, AllocatorOptions options = {});
  // Returns every segment to the raw allocator: outstanding pointers die with the allocator.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // At least `size` bytes for use on `stream`; nullptr for size 0. Throws OutOfMemoryError
  // after freeing the cache and retrying.
  void* malloc(std::size_t size, StreamId stream = 0);
  // Returns a pointer from malloc to the cache (a no-op for nullptr); ValueError if unknown.
  void free(void* ptr);
  // Marks the allocation at ptr (from malloc) as used on stream too; ValueError if unknown.
  void record_stream(void* ptr, StreamId stream);
  // Returns to the cache every freed block whose events have completed.
  void process_events();
  // Waits for all pending events, then releases every unused cached segment to the raw
  // allocator.
  void empty_cache();

  // Caps this allocator at fraction * total device memory
  // (torch.cuda.set_per_process_memory_fraction).
  void set_memory_fraction(double fraction);

  // PyTorch's keys: "{stat}.{all,large_pool,small_pool}.{current,peak,allocated,freed}" for
  // allocated_bytes, reserved_bytes, active_bytes, requested_bytes, inactive_split_bytes,
  // allocation, segment, active, inactive_split; "oversize_{allocations,segments}.{current,...}";
  // num_alloc_retries, num_ooms, num_device_alloc, num_device_free, max_split_size (-1: none).
  std::map<std::string, std::int64_t> memory_stats() const;
  void reset_peak_stats();
  // Zeroes allocated/freed totals and the OOM and retry counters.
  void reset_accumulated_stats();
  // torch.cuda.memory_summary for this device.
  std::string memory_summary(bool abbreviated = false) const;
  // Every segment (default and private pools) in address order.
  std::vector<SegmentInfo> snapshot() const;

  // Private pools (CUDA graphs). A pool holds its own segments: blocks allocated into it return
  // to it when freed, and its memory is released only after release_pool() and empty_cache().
  MempoolId create_pool();
  // Another owner (a graph sharing the pool); release_pool() once per create/retain.
  void retain_pool(MempoolId pool);
  // Creates the private pool with a caller-chosen id (ids from graph_pool_handle(), never 0 and
  // never one create_pool() handed out), or adds an owner when it lives.
  void acquire_pool(MempoolId pool);
  // Drops an owner; the last one's release returns the pool's unused segments to the device at
  // once (segments still holding live tensors go when those are freed and empty_cache() runs).
  void release_pool(MempoolId pool);
  // While active, allocations on `stream` are served from `pool`.
  void begin_allocate_to_pool(MempoolId pool, StreamId stream);
  void end_allocate_to_pool(MempoolId pool);

  int device() const { return device_; }

 private:
  struct BlockPool;
  struct Block {
    StreamId stream = 0;
    std::size_t size = 0;
    std::size_t requested_size = 0;
    BlockPool* pool = nullptr;
    std::uintptr_t ptr = 0;
    bool allocated = false;
    Block* prev = nullptr;  // neighbours in the same segment
    Block* next = nullptr;
    std::set<StreamId> stream_uses;   // other streams that used it (record_stream)
    int event_count = 0;              // outstanding events before it may be reused
    std::uint64_t gc_count_base = 0;  // the pool's search count when it was cached
    bool is_split() const { return prev != nullptr || next != nullptr; }
  };
  // Best fit: the first block on the stream at least as large as the request.
  struct BySize {
    bool operator()(const Block* a, const Block* b) const {
      if (a->stream != b->stream) return a->stream < b->stream;
      if (a->size != b->size) return a->size < b->size;
      return a->ptr < b->ptr;
    }
  };
  struct BlockPool {
    BlockPool(bool small, MempoolId id) : is_small(small), owner(id) {}
    std::set<Block*, BySize> blocks;  // free blocks only
    bool is_small;
    MempoolId owner;
    std::int64_t num_segments = 0;
    std::uint64_t free_block_searches = 0;  // ages cached blocks for garbage collection
  };
  struct PrivatePool {
    explicit PrivatePool(MempoolId id) : small(true, id), large(false, id) {}
    int use_count = 1;
    BlockPool small;
    BlockPool large;
  };
  struct Stat {
    std::int64_t current = 0, peak = 0, allocated = 0, freed = 0;
    void update(std::int64_t amount);
  };
  enum StatType { kAll = 0, kLargePool = 1, kSmallPool = 2 };
  using StatArray = std::array<Stat, 3>;
  struct Stats {
    StatArray allocation, segment, active, inactive_split;
    StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
    Stat oversize_allocations, oversize_segments;
    std::int64_t num_alloc_retries = 0, num_ooms = 0, num_device_alloc = 0, num_device_free = 0;
  };

  BlockPool& pool_for(std::size_t size, StreamId stream);
  bool get_free_block(BlockPool& pool, StreamId stream, std::size_t size, Block*& out);
  bool alloc_block(BlockPool& pool, StreamId stream, std::size_t size, bool is_retry, Block*& out);
  bool release_available_cached_blocks(BlockPool& pool, StreamId stream, std::size_t size);
  void release_cached_blocks();
  void garbage_collect_cached_blocks();
  void insert_events(Block* block);
  void process_events_locked();
  void synchronize_and_free_events();
  void release_blocks(BlockPool& pool);
  void release_block(Block* block);
  Block* alloc_found_block(Block* block, std::size_t size, std::size_t requested);
  void free_block(Block* block);
  std::size_t try_merge(Block* dst, Block* src);
  [[noreturn]] void raise_oom(std::size_t alloc_size);
  bool should_split(const Block* block, std::size_t size) const;
  static void update(StatArray& stat, const BlockPool& pool, std::int64_t amount);
  std::map<std::string, std::int64_t> stats_locked() const;
  template <class F>
  void for_each_pool(F&& f) const;

  const int device_;
  RawAllocator& raw_;
  const std::size_t max_split_size_;
  const double gc_threshold_;
  mutable std::mutex mutex_;
  BlockPool large_{false, 0};
  BlockPool small_{true, 0};
  std::map<MempoolId, std::unique_ptr<PrivatePool>> private_pools_;
  std::vector<std::pair<MempoolId, StreamId>> alloc_to_pools_;
  MempoolId next_pool_id_ = 1;
  std::unordered_map<std::uintptr_t, Block*> allocated_blocks_;
  // Freed blocks waiting for events, per stream the events were recorded on, oldest first.
  std::map<StreamId, std::deque<std::pair<EventHandle, Block*>>> stream_events_;
  std::size_t total_allocated_memory_ = 0;  // bytes held from the raw allocator
  bool set_fraction_ = false;
  std::size_t allowed_memory_maximum_ = 0;
  Stats stats_;
};

// Sizes as PyTorch's messages print them: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB".
std::string format_size(std::uint64_t bytes);

// torch.cuda.memory_summary's 75-column table from a memory_stats() map.
std::string format_memory_summary(const std::map<std::string, std::int64_t>& stats, int device,
                                  bool abbreviated);

// The one-line OutOfMemoryError text; the numbers are what the allocator knows at the failure.
struct OomReport {
  int device = 0;
  std::size_t alloc_size = 0;  // the segment size that could not be allocated
  std::size_t device_total = 0;
  std::size_t device_free = 0;
  std::size_t allowed = 0;             // 0 unless a memory fraction is set
  std::size_t allocated = 0;           // allocated_bytes.all.current
  std::size_t reserved = 0;            // reserved_bytes.all.current
  std::size_t private_cached = 0;      // free bytes held by private pools
  std::size_t largest_free_block = 0;  // in the default pools
};
std::string format_oom_message(const OomReport& report);

}  // namespace ember::alloc
