// Host tests of the device caching allocator over a fixed-capacity fake device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "alloc/caching_allocator.h"
#include "ember/error.h"
#include "fake_events.h"

namespace {

using namespace ember::alloc;
using alloc_test::WithFakeEvents;

constexpr std::size_t KiB = 1024, MiB = 1024 * 1024;

// Hands out never-reused addresses from a virtual arena; nothing is ever dereferenced.
struct FakeDevice : WithFakeEvents<RawAllocator> {
  explicit FakeDevice(std::size_t capacity) : capacity(capacity) {}
  void* malloc(std::size_t size, int, StreamId) override {
    if (fail_next || used + size > capacity) {
      fail_next = false;
      return nullptr;
    }
    used += size;
    std::uintptr_t p = next;
    next += size + 4096;
    live[p] = size;
    mallocs.push_back(size);
    return reinterpret_cast<void*>(p);
  }
  void free(void* ptr, std::size_t size, int) override {
    auto it = live.find(reinterpret_cast<std::uintptr_t>(ptr));
    EXPECT_NE(it, live.end());
    if (it == live.end()) return;
    EXPECT_EQ(it->second, size);
    used -= size;
    live.erase(it);
  }
  MemInfo mem_get_info(int) override { return {capacity - used, capacity}; }

  std::size_t capacity, used = 0;
  std::uintptr_t next = std::uintptr_t{1} << 32;
  bool fail_next = false;
  std::map<std::uintptr_t, std::size_t> live;
  std::vector<std::size_t> mallocs;
};

std::uintptr_t addr(void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(CachingAllocator, RoundingAndPoolChoice) {
  struct Case {
    std::size_t request, block, segment;
    bool small;
  };
  // A remainder of 1 MiB or less stays with a large block.
  for (Case c :
       {Case{1, 512, 2 * MiB, true}, Case{1000, 1024, 2 * MiB, true}, Case{MiB, MiB, 2 * MiB, true},
        Case{MiB + 1, MiB + 512, 20 * MiB, false},
        Case{10 * MiB - 513, 10 * MiB - 512, 20 * MiB, false},
        Case{10 * MiB - 1, 10 * MiB, 10 * MiB, false}, Case{10 * MiB, 10 * MiB, 10 * MiB, false},
        Case{11 * MiB + 1, 12 * MiB, 12 * MiB, false}}) {
    FakeDevice dev(1024 * MiB);
    CachingAllocator a(0, dev);
    void* p = a.malloc(c.request);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(dev.mallocs, std::vector<std::size_t>{c.segment}) << c.request;
    auto s = a.memory_stats();
    const std::string pool = c.small ? "small_pool" : "large_pool";
    const std::string other = c.small ? "large_pool" : "small_pool";
    EXPECT_EQ(s["allocated_bytes." + pool + ".current"], (int64_t)c.block) << c.request;
    EXPECT_EQ(s["allocated_bytes." + other + ".current"], 0);
    EXPECT_EQ(s["requested_bytes.all.current"], (int64_t)c.request);
    EXPECT_EQ(s["reserved_bytes." + pool + ".current"], (int64_t)c.segment);
    a.free(p);
  }
}

TEST(CachingAllocator, ZeroSizeAndBadPointers) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  EXPECT_EQ(a.malloc(0), nullptr);
  a.free(nullptr);
  EXPECT_TRUE(dev.mallocs.empty());
  int x = 0;
  EXPECT_THROW(a.free(&x), ember::ValueError);
  void* p = a.malloc(4096);
  EXPECT_THROW(a.free(static_cast<char*>(p) + 512), ember::ValueError);
  a.free(p);
  EXPECT_THROW(a.free(p), ember::ValueError);  // double free
  EXPECT_THROW(CachingAllocator(0, dev, AllocatorOptions{10 * MiB}), ember::ValueError);
}

TEST(CachingAllocator, ReuseAfterFree) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  void* p = a.malloc(1000);
  a.free(p);
  EXPECT_EQ(a.malloc(800), p);  // best fit in the cache, no new segment
  EXPECT_EQ(dev.mallocs.size(), 1u);
  void* big = a.malloc(3 * MiB);
  a.free(big);
  EXPECT_EQ(a.malloc(2 * MiB), big);
  EXPECT_EQ(dev.mallocs.size(), 2u);
}

TEST(CachingAllocator, SplitAndMerge) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  void* x = a.malloc(4096);
  void* y = a.malloc(4096);
  void* z = a.malloc(4096);
  EXPECT_EQ(addr(y), addr(x) + 4096);
  EXPECT_EQ(addr(z), addr(x) + 8192);
  auto s = a.memory_stats();
  EXPECT_EQ(s["inactive_split.all.current"], 1);
  EXPECT_EQ(s["inactive_split_bytes.small_pool.current"], (int64_t)(2 * MiB - 3 * 4096));

  a.free(y);  // a hole between two live blocks
  s = a.memory_stats();
  EXPECT_EQ(s["inactive_split.all.current"], 2);
  EXPECT_EQ(s["inactive_split_bytes.all.current"], (int64_t)(2 * MiB - 2 * 4096));
  a.free(x);  // merges with the hole
  s = a.memory_stats();
  EXPECT_EQ(s["inactive_split.all.current"], 2);
  EXPECT_EQ(s["inactive_split_bytes.all.current"], (int64_t)(2 * MiB - 4096));
  auto snap = a.snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 3u);
  EXPECT_EQ(snap[0].blocks[0].size, 8192u);
  EXPECT_FALSE(snap[0].blocks[0].allocated);
  EXPECT_TRUE(snap[0].blocks[1].allocated);
  EXPECT_EQ(snap[0].blocks[1].requested_size, 4096u);
  EXPECT_EQ(snap[0].allocated_size, 4096u);

  a.free(z);  // both neighbours free: one block, the whole segment
  s = a.memory_stats();
  EXPECT_EQ(s["inactive_split.all.current"], 0);
  EXPECT_EQ(s["inactive_split_bytes.all.current"], 0);
  snap = a.snapshot();
  ASSERT_EQ(snap.size(), 1u);
  ASSERT_EQ(snap[0].blocks.size(), 1u);
  EXPECT_EQ(snap[0].blocks[0].size, 2 * MiB);
  EXPECT_EQ(snap[0].address, addr(x));
  EXPECT_FALSE(snap[0].is_large);

  // A large remainder of 1 MiB or less is not split off.
  void* l = a.malloc(19 * MiB + 512);
  EXPECT_EQ(a.snapshot().back().blocks.size(), 1u);
  EXPECT_EQ(a.memory_stats()["allocated_bytes.large_pool.current"], (int64_t)(20 * MiB));
  a.free(l);
}

TEST(CachingAllocator, PerStreamIsolation) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  void* p = a.malloc(4096, 1);
  a.free(p);
  void* q = a.malloc(4096, 2);
  EXPECT_NE(q, p);
  EXPECT_EQ(dev.mallocs.size(), 2u);
  EXPECT_EQ(a.malloc(4096, 1), p);
  auto snap = a.snapshot();
  ASSERT_EQ(snap.size(), 2u);
  EXPECT_EQ(snap[0].stream, 1u);
  EXPECT_EQ(snap[1].stream, 2u);
}

TEST(CachingAllocator, RetryAfterFreeingTheCache) {
  FakeDevice dev(20 * MiB);
  CachingAllocator a(0, dev);
  a.free(a.malloc(2 * MiB, 0));    // a cached 20 MiB segment on stream 0
  void* p = a.malloc(2 * MiB, 1);  // the device is full until the cache is released
  EXPECT_NE(p, nullptr);
  auto s = a.memory_stats();
  EXPECT_EQ(s["num_alloc_retries"], 1);
  EXPECT_EQ(s["num_ooms"], 0);
  EXPECT_EQ(s["num_device_free"], 1);
  EXPECT_EQ(s["segment.all.current"], 1);
  EXPECT_EQ(s["segment.all.freed"], 1);
}

const std::string kHint =
    " If reserved but unallocated memory is large try setting "
    "EMBER_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation "
    "for Memory Management  (docs/allocator.md).";

TEST(CachingAllocator, OutOfMemoryMessage) {
  FakeDevice dev(30 * MiB);
  CachingAllocator a(0, dev);
  a.malloc(2 * MiB);  // 20 MiB segment, 18 MiB of it free
  a.malloc(1000);     // 2 MiB small segment
  try {
    a.malloc(12 * MiB, 1);
    FAIL() << "expected OutOfMemoryError";
  } catch (const ember::OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              std::string("CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total "
                          "capacity of 30.00 MiB of which 8.00 MiB is free. Of the allocated "
                          "memory 2.00 MiB is allocated by ember, and 20.00 MiB is reserved by "
                          "ember but unallocated.") +
                  kHint +
                  " Largest free cached block: 18.00 MiB; fragmentation: 0.10 (1 - largest "
                  "free block / reserved but unallocated).");
  }
  auto s = a.memory_stats();
  EXPECT_EQ(s["num_ooms"], 1);
  EXPECT_EQ(s["num_alloc_retries"], 1);
  EXPECT_EQ(s["allocated_bytes.all.current"], (int64_t)(2 * MiB + 1024));  // unchanged
}

TEST(CachingAllocator, OutOfMemoryWithFractionAndPrivatePool) {
  FakeDevice dev(40 * MiB);
  CachingAllocator a(0, dev);
  a.set_memory_fraction(0.5);
  MempoolId pool = a.create_pool();
  a.begin_allocate_to_pool(pool, 7);
  void* g = a.malloc(1000, 7);  // 2 MiB private segment
  a.end_allocate_to_pool(pool);
  a.free(g);  // stays cached in the private pool while the pool lives
  try {
    a.malloc(2 * MiB);  // a 20 MiB segment would exceed the 20 MiB allowed
    FAIL() << "expected OutOfMemoryError";
  } catch (const ember::OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of "
              "40.00 MiB of which 38.00 MiB is free. 20.00 MiB allowed; Of the allocated memory "
              "2.00 MiB is allocated by ember, with 2.00 MiB allocated in private pools (e.g., "
              "CUDA Graphs), and 0 bytes is reserved by ember but unallocated." +
                  kHint +
                  " Largest free cached block: 0 bytes; fragmentation: 0.00 (1 - largest free "
                  "block / reserved but unallocated).");
  }
  EXPECT_EQ(dev.used, 2 * MiB);
  // Once the pool is released the retry path may reclaim its segment.
  a.release_pool(pool);
  EXPECT_NE(a.malloc(2 * MiB), nullptr);
  EXPECT_EQ(dev.used, 20 * MiB);
  EXPECT_THROW(a.set_memory_fraction(1.5), ember::ValueError);
}

// Graphs sharing a pool: acquire_pool under a caller's id counts owners; the last release
// returns unused segments at once, and a segment with a live block once it is freed.
TEST(CachingAllocator, SharedPoolReleasedByItsLastOwner) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  const MempoolId pool = MempoolId{1} << 48;
  a.acquire_pool(pool);
  a.acquire_pool(pool);  // a second graph
  a.begin_allocate_to_pool(pool, 7);
  void* kept = a.malloc(1000, 7);
  void* temp = a.malloc(3 * MiB, 7);
  a.end_allocate_to_pool(pool);
  a.free(temp);
  EXPECT_EQ(dev.used, 2 * MiB + 20 * MiB);
  void* eager = a.malloc(3 * MiB, 7);  // never the pool's free segment
  EXPECT_NE(eager, temp);
  a.free(eager);
  a.release_pool(pool);
  EXPECT_EQ(dev.used, 2 * MiB + 40 * MiB);  // one owner left: nothing returns
  a.empty_cache();
  EXPECT_EQ(dev.used, 2 * MiB + 20 * MiB);  // the eager cache went; the pool stays
  a.release_pool(pool);
  EXPECT_EQ(dev.used, 2 * MiB);  // the unused pool segment went at once
  a.free(kept);
  a.empty_cache();
  EXPECT_EQ(dev.used, 0u);
  EXPECT_EQ(a.memory_stats()["reserved_bytes.all.current"], 0);
  EXPECT_THROW(a.release_pool(pool), ember::ValueError);
  EXPECT_THROW(a.acquire_pool(0), ember::ValueError);
}

TEST(CachingAllocator, StatsAfterScript) {
  FakeDevice dev(256 * MiB);
  CachingAllocator a(0, dev);
  void* s1 = a.malloc(1000);
  void* l1 = a.malloc(3 * MiB);
  void* l2 = a.malloc(5 * MiB);
  a.free(s1);
  a.free(l1);
  auto s = a.memory_stats();
  EXPECT_EQ(s.size(), 9u * 3 * 4 + 2 * 4 + 5);
  EXPECT_EQ(s["allocation.all.current"], 1);
  EXPECT_EQ(s["allocation.all.peak"], 3);
  EXPECT_EQ(s["allocation.all.allocated"], 3);
  EXPECT_EQ(s["allocation.all.freed"], 2);
  EXPECT_EQ(s["allocation.small_pool.freed"], 1);
  EXPECT_EQ(s["allocated_bytes.all.current"], (int64_t)(5 * MiB));
  EXPECT_EQ(s["allocated_bytes.all.peak"], (int64_t)(8 * MiB + 1024));
  EXPECT_EQ(s["allocated_bytes.all.allocated"], (int64_t)(8 * MiB + 1024));
  EXPECT_EQ(s["allocated_bytes.all.freed"], (int64_t)(3 * MiB + 1024));
  EXPECT_EQ(s["allocated_bytes.large_pool.peak"], (int64_t)(8 * MiB));
  EXPECT_EQ(s["requested_bytes.all.peak"], (int64_t)(8 * MiB + 1000));
  EXPECT_EQ(s["reserved_bytes.all.current"], (int64_t)(22 * MiB));
  EXPECT_EQ(s["reserved_bytes.large_pool.current"], (int64_t)(20 * MiB));
  EXPECT_EQ(s["segment.all.current"], 2);
  EXPECT_EQ(s["active.all.current"], 1);
  EXPECT_EQ(s["active_bytes.all.current"], (int64_t)(5 * MiB));
  // Large segment: [free 3 MiB][l2 5 MiB][free 12 MiB]; small segment is whole again.
  EXPECT_EQ(s["inactive_split.all.current"], 2);
  EXPECT_EQ(s["inactive_split_bytes.large_pool.current"], (int64_t)(15 * MiB));
  EXPECT_EQ(s["inactive_split_bytes.small_pool.current"], 0);
  EXPECT_EQ(s["oversize_allocations.current"], 0);
  EXPECT_EQ(s["max_split_size"], -1);

  a.reset_peak_stats();
  s = a.memory_stats();
  EXPECT_EQ(s["allocated_bytes.all.peak"], (int64_t)(5 * MiB));
  EXPECT_EQ(s["allocation.all.peak"], 1);
  EXPECT_EQ(s["allocated_bytes.all.allocated"], (int64_t)(8 * MiB + 1024));  // totals kept
  a.reset_accumulated_stats();
  s = a.memory_stats();
  EXPECT_EQ(s["allocated_bytes.all.allocated"], 0);
  EXPECT_EQ(s["allocated_bytes.all.current"], (int64_t)(5 * MiB));
  a.free(l2);
}

TEST(CachingAllocator, EmptyCacheReturnsMemory) {
  FakeDevice dev(256 * MiB);
  CachingAllocator a(0, dev);
  void* keep = a.malloc(1000);
  void* x = a.malloc(3 * MiB);
  void* y = a.malloc(30 * MiB);
  a.free(x);
  a.free(y);
  EXPECT_EQ(dev.used, 2 * MiB + 20 * MiB + 30 * MiB);
  a.empty_cache();
  EXPECT_EQ(dev.used, 2 * MiB);  // the small segment still holds `keep`
  auto s = a.memory_stats();
  EXPECT_EQ(s["reserved_bytes.all.current"], (int64_t)(2 * MiB));
  EXPECT_EQ(s["segment.all.freed"], 2);
  a.free(keep);
  a.empty_cache();
  EXPECT_EQ(dev.used, 0u);
  EXPECT_TRUE(a.snapshot().empty());
}

// The table torch.cuda.memory_summary prints for the same statistics (title aside).
const char* const kGoldenSummary[] = {
    "|===========================================================================|",
    "|                   ember CUDA memory summary, device ID 3                  |",
    "|---------------------------------------------------------------------------|",
    "|            CUDA OOMs: 1            |        cudaMalloc retries: 1         |",
    "|===========================================================================|",
    "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |",
    "|---------------------------------------------------------------------------|",
    "| Allocated memory      |    900 MiB |    903 MiB |    903 MiB |   3073 KiB |",
    "|       from large pool |    900 MiB |    903 MiB |    903 MiB |   3072 KiB |",
    "|       from small pool |      0 MiB |      0 MiB |      0 MiB |      1 KiB |",
    "|---------------------------------------------------------------------------|",
    "| Active memory         |    900 MiB |    903 MiB |    903 MiB |   3073 KiB |",
    "|       from large pool |    900 MiB |    903 MiB |    903 MiB |   3072 KiB |",
    "|       from small pool |      0 MiB |      0 MiB |      0 MiB |      1 KiB |",
    "|---------------------------------------------------------------------------|",
    "| Requested memory      |    900 MiB |    903 MiB |    903 MiB |   3072 KiB |",
    "|       from large pool |    900 MiB |    903 MiB |    903 MiB |   3072 KiB |",
    "|       from small pool |      0 MiB |      0 MiB |      0 MiB |      0 KiB |",
    "|---------------------------------------------------------------------------|",
    "| GPU reserved memory   |    922 MiB |    922 MiB |    922 MiB |      0 B   |",
    "|       from large pool |    920 MiB |    920 MiB |    920 MiB |      0 B   |",
    "|       from small pool |      2 MiB |      2 MiB |      2 MiB |      0 B   |",
    "|---------------------------------------------------------------------------|",
    "| Non-releasable memory |   2047 KiB |  19455 KiB |  19456 KiB |  17408 KiB |",
    "|       from large pool |      0 KiB |  17408 KiB |  17408 KiB |  17408 KiB |",
    "|       from small pool |   2047 KiB |   2047 KiB |   2048 KiB |      0 KiB |",
    "|---------------------------------------------------------------------------|",
    "| Allocations           |       2    |       4    |       4    |       2    |",
    "|       from large pool |       1    |       2    |       2    |       1    |",
    "|       from small pool |       1    |       2    |       2    |       1    |",
    "|---------------------------------------------------------------------------|",
    "| Active allocs         |       2    |       4    |       4    |       2    |",
    "|       from large pool |       1    |       2    |       2    |       1    |",
    "|       from small pool |       1    |       2    |       2    |       1    |",
    "|---------------------------------------------------------------------------|",
    "| GPU reserved segments |       3    |       3    |       3    |       0    |",
    "|       from large pool |       2    |       2    |       2    |       0    |",
    "|       from small pool |       1    |       1    |       1    |       0    |",
    "|---------------------------------------------------------------------------|",
    "| Non-releasable allocs |       2    |       3    |       3    |       1    |",
    "|       from large pool |       0    |       1    |       1    |       1    |",
    "|       from small pool |       2    |       2    |       2    |       0    |",
    "|---------------------------------------------------------------------------|",
    "| Oversize allocations  |       0    |       0    |       0    |       0    |",
    "|---------------------------------------------------------------------------|",
    "| Oversize GPU segments |       0    |       0    |       0    |       0    |",
    "|===========================================================================|",
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(text.substr(start, nl - start));
  }
  EXPECT_EQ(start, text.size()) << "the table ends with a newline";
  return out;
}

TEST(CachingAllocator, MemorySummaryGolden) {
  FakeDevice dev(2000 * MiB);
  CachingAllocator a(3, dev);
  void* s1 = a.malloc(1000);
  void* l1 = a.malloc(3 * MiB);
  a.malloc(900 * MiB);
  a.malloc(200);
  a.free(s1);
  EXPECT_THROW(a.malloc(1500 * MiB, 1), ember::OutOfMemoryError);
  a.free(l1);
  const std::vector<std::string> lines = split_lines(a.memory_summary());
  const std::size_t n = sizeof(kGoldenSummary) / sizeof(kGoldenSummary[0]);
  ASSERT_EQ(lines.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(lines[i], kGoldenSummary[i]) << "line " << i;
    EXPECT_EQ(lines[i].size(), 77u) << "line " << i;
  }
  // Abbreviated: the same table without the per-pool rows.
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::string(kGoldenSummary[i]).find("from ") == std::string::npos) {
      expected.push_back(kGoldenSummary[i]);
    }
  }
  EXPECT_EQ(split_lines(a.memory_summary(true)), expected);
}

TEST(CachingAllocator, MemorySummaryUnits) {
  std::map<std::string, std::int64_t> s;              // missing keys read as 0
  s["allocated_bytes.all.current"] = 4781506560;      // 4560 MiB
  s["allocated_bytes.all.peak"] = 805306368;          // 768 MiB: steps up exactly at 768
  s["allocated_bytes.all.allocated"] = 786431;        // one byte under 768 KiB stays in B
  s["allocated_bytes.all.freed"] = 1234567890123;     // GiB
  s["allocated_bytes.small_pool.current"] = 1 << 20;  // in the row's unit, MiB
  s["allocation.all.current"] = 749999;
  s["allocation.all.peak"] = 750000;
  s["allocation.all.allocated"] = 2500000000;
  s["allocation.all.freed"] = 12;
  s["num_ooms"] = 2;
  const std::vector<std::string> lines = split_lines(format_memory_summary(s, 0, false));
  EXPECT_EQ(lines[1],
            "|                   ember CUDA memory summary, device ID 0                  |");
  EXPECT_EQ(lines[3],
            "|            CUDA OOMs: 2            |        cudaMalloc retries: 0         |");
  EXPECT_EQ(lines[7],
            "| Allocated memory      |   4560 MiB |    768 MiB | 786431 B   |   1149 GiB |");
  EXPECT_EQ(lines[9],
            "|       from small pool |      1 MiB |      0 MiB |      0 B   |      0 GiB |");
  EXPECT_EQ(lines[27],
            "| Allocations           |  749999    |     750 K  |    2500 M  |      12    |");
}

TEST(CachingAllocator, MaxSplitSize) {
  FakeDevice dev(100 * MiB);
  CachingAllocator a(0, dev, AllocatorOptions{40 * MiB});
  void* big = a.malloc(70 * MiB);
  void* mid = a.malloc(20 * MiB);
  auto s = a.memory_stats();
  EXPECT_EQ(s["oversize_allocations.current"], 1);
  EXPECT_EQ(s["oversize_segments.current"], 1);
  EXPECT_EQ(s["max_split_size"], (int64_t)(40 * MiB));
  a.free(big);
  EXPECT_EQ(a.memory_stats()["oversize_allocations.current"], 0);
  // 70 MiB is at least 44 + 20: not reused for 44 MiB, but released to make room for it.
  void* p = a.malloc(44 * MiB);
  s = a.memory_stats();
  EXPECT_EQ(s["num_alloc_retries"], 0);
  EXPECT_EQ(s["num_device_free"], 1);
  EXPECT_EQ(s["oversize_segments.current"], 1);
  EXPECT_EQ(s["allocated_bytes.all.current"], (int64_t)(64 * MiB));  // not split
  a.free(p);
  // A small request never takes an oversize block.
  void* q = a.malloc(4 * MiB);
  EXPECT_EQ(dev.mallocs.size(), 4u);
  // A large request takes one within 20 MiB of its size, whole.
  void* r = a.malloc(42 * MiB);
  EXPECT_EQ(dev.mallocs.size(), 4u);
  EXPECT_EQ(a.memory_stats()["allocated_bytes.all.current"],
            (int64_t)(20 * MiB + 4 * MiB + 44 * MiB));
  a.free(q);
  a.free(r);
  a.free(mid);
  // Without the limit the same 70 MiB block is split for a 30 MiB request.
  FakeDevice dev2(100 * MiB);
  CachingAllocator b(0, dev2);
  b.free(b.malloc(70 * MiB));
  b.malloc(30 * MiB);
  EXPECT_EQ(dev2.mallocs.size(), 1u);
  EXPECT_EQ(b.memory_stats()["inactive_split_bytes.all.current"], (int64_t)(40 * MiB));
}

TEST(CachingAllocator, PrivatePoolIsolation) {
  FakeDevice dev(256 * MiB);
  CachingAllocator a(0, dev);
  MempoolId pool = a.create_pool();
  EXPECT_NE(pool, 0u);
  a.begin_allocate_to_pool(pool, 5);
  void* g = a.malloc(4096, 5);
  void* other = a.malloc(4096, 6);  // another stream is not captured
  a.end_allocate_to_pool(pool);
  a.free(g);
  void* d = a.malloc(4096, 5);  // default pool: the private block is not visible
  EXPECT_NE(d, g);
  EXPECT_EQ(dev.mallocs.size(), 3u);
  a.begin_allocate_to_pool(pool, 5);
  EXPECT_EQ(a.malloc(4096, 5), g);  // back in the pool: reused
  EXPECT_THROW(a.begin_allocate_to_pool(pool, 5), ember::ValueError);
  a.end_allocate_to_pool(pool);
  EXPECT_THROW(a.end_allocate_to_pool(pool), ember::ValueError);
  int in_pool = 0;
  for (const SegmentInfo& seg : a.snapshot()) in_pool += seg.pool_id == pool;
  EXPECT_EQ(in_pool, 1);

  a.free(g);
  a.free(d);
  a.free(other);
  a.empty_cache();  // the live pool keeps its segment
  EXPECT_EQ(dev.used, 2 * MiB);
  a.retain_pool(pool);
  a.release_pool(pool);
  a.empty_cache();
  EXPECT_EQ(dev.used, 2 * MiB);  // still one owner
  a.release_pool(pool);
  a.empty_cache();
  EXPECT_EQ(dev.used, 0u);
  EXPECT_THROW(a.release_pool(pool), ember::ValueError);
  EXPECT_THROW(a.begin_allocate_to_pool(pool, 5), ember::ValueError);
}

TEST(CachingAllocator, TwoThreads) {
  FakeDevice dev(1024 * MiB);
  CachingAllocator a(0, dev);
  auto work = [&](StreamId stream, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<void*> live;
    for (int i = 0; i < 3000; ++i) {
      if (live.size() < 16 && rng() % 3 != 0) {
        const std::size_t size = (rng() % 2) ? rng() % (64 * KiB) + 1 : rng() % (4 * MiB) + 1;
        live.push_back(a.malloc(size, stream));
      } else if (!live.empty()) {
        const std::size_t k = rng() % live.size();
        a.free(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    for (void* p : live) a.free(p);
  };
  std::thread t1(work, 1, 1u), t2(work, 2, 2u);
  t1.join();
  t2.join();
  auto s = a.memory_stats();
  EXPECT_EQ(s["allocated_bytes.all.current"], 0);
  EXPECT_EQ(s["inactive_split.all.current"], 0);
  a.empty_cache();
  EXPECT_EQ(dev.used, 0u);
}

}  // namespace

// ---- stream semantics: record_stream and events ---------------------------------------------

TEST(CachingAllocatorStreams, RecordStreamHoldsTheBlockUntilItsEventCompletes) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  const StreamId s1 = 1, s2 = 2;
  void* p = a.malloc(1000, s1);
  a.record_stream(p, s1);  // the allocating stream needs no event
  a.record_stream(p, s2);
  a.record_stream(p, s2);  // once per stream
  a.free(p);
  ASSERT_EQ(dev.events.size(), 1u);
  EXPECT_EQ(dev.events[0]->stream, s2);
  auto st = a.memory_stats();
  EXPECT_EQ(st["allocated_bytes.all.current"], 0);
  EXPECT_EQ(st["allocation.all.current"], 0);
  EXPECT_EQ(st["active.all.current"], 1);  // still in use by s2
  EXPECT_EQ(st["requested_bytes.all.current"], 1000);
  ASSERT_EQ(a.snapshot()[0].blocks.size(), 2u);
  EXPECT_TRUE(a.snapshot()[0].blocks[0].pending_free);

  void* q = a.malloc(1000, s1);
  EXPECT_NE(q, p);  // s2 may still read p
  dev.complete(s2);
  void* r = a.malloc(1000, s1);  // processes the completed event first
  EXPECT_EQ(r, p);
  EXPECT_EQ(dev.outstanding(), 0u);
  EXPECT_EQ(a.memory_stats()["active.all.current"], 2);

  // Without record_stream a free is immediate.
  a.free(q);
  EXPECT_EQ(a.malloc(1000, s1), q);
  EXPECT_EQ(dev.events.size(), 1u);

  int x = 0;
  EXPECT_THROW(a.record_stream(&x, s2), ember::ValueError);
}

TEST(CachingAllocatorStreams, EventsOnSeveralStreamsAndProcessEvents) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  void* p = a.malloc(MiB, 1);
  a.record_stream(p, 2);
  a.record_stream(p, 3);
  a.free(p);
  EXPECT_EQ(dev.events.size(), 2u);
  dev.complete(2);
  a.process_events();
  EXPECT_EQ(a.memory_stats()["active.all.current"], 1);  // stream 3 still uses it
  dev.complete(3);
  a.process_events();
  EXPECT_EQ(a.memory_stats()["active.all.current"], 0);
  EXPECT_EQ(a.malloc(MiB, 1), p);
  EXPECT_EQ(dev.syncs, 0);
}

TEST(CachingAllocatorStreams, PendingBlocksDoNotMergeUntilProcessed) {
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev);
  void* x = a.malloc(4096, 1);
  void* y = a.malloc(4096, 1);
  a.record_stream(y, 2);
  a.free(y);
  a.free(x);  // its neighbour is pending: no merge
  auto seg = a.snapshot().at(0);
  ASSERT_EQ(seg.blocks.size(), 3u);
  EXPECT_FALSE(seg.blocks[0].allocated);
  EXPECT_TRUE(seg.blocks[1].pending_free);
  dev.complete(2);
  a.process_events();
  seg = a.snapshot().at(0);
  ASSERT_EQ(seg.blocks.size(), 1u);
  EXPECT_EQ(seg.blocks[0].size, 2 * MiB);
  EXPECT_EQ(a.memory_stats()["inactive_split.all.current"], 0);
}

TEST(CachingAllocatorStreams, EmptyCacheAndOomRetryWaitForEvents) {
  FakeDevice dev(64 * MiB);
  {
    CachingAllocator a(0, dev);
    void* p = a.malloc(30 * MiB, 1);
    a.record_stream(p, 2);
    a.free(p);
    a.empty_cache();  // synchronizes the event, then releases the segment
    EXPECT_EQ(dev.syncs, 1);
    EXPECT_EQ(dev.used, 0u);
    EXPECT_EQ(dev.outstanding(), 0u);

    p = a.malloc(40 * MiB, 1);
    a.record_stream(p, 2);
    a.free(p);
    void* q = a.malloc(40 * MiB, 3);  // only fits once p's segment is released
    EXPECT_NE(q, nullptr);
    EXPECT_EQ(dev.syncs, 2);
    EXPECT_EQ(a.memory_stats()["num_alloc_retries"], 1);
    void* r = a.malloc(8 * MiB, 3);
    a.record_stream(r, 1);
    a.free(r);  // pending when the allocator goes away
  }
  EXPECT_EQ(dev.used, 0u);
  EXPECT_TRUE(dev.live.empty());
  EXPECT_EQ(dev.outstanding(), 0u);
}

// ---- garbage collection and EMBER_CUDA_ALLOC_CONF -------------------------------------------

TEST(CachingAllocatorGc, ReleasesTheOldestCachedSegmentsBeforeGrowing) {
  FakeDevice dev(1024 * MiB);
  AllocatorOptions opt;
  opt.garbage_collection_threshold = 0.5;
  CachingAllocator a(0, dev, opt);
  a.set_memory_fraction(0.5);  // 512 MiB allowed; collection above 256 MiB
  void* b[4];
  for (auto& p : b) p = a.malloc(100 * MiB, 1);
  a.free(b[0]);
  void* t = a.malloc(2 * MiB, 2);  // one more search: b[0] ages
  a.free(b[1]);
  a.free(b[2]);
  void* u = a.malloc(2 * MiB, 2);
  a.free(b[3]);  // the youngest
  void* big = a.malloc(150 * MiB, 1);
  auto st = a.memory_stats();
  EXPECT_EQ(st["num_alloc_retries"], 0);  // collected before the device refused
  EXPECT_EQ(st["num_device_free"], 3);
  std::set<std::uintptr_t> segments;
  for (auto& seg : a.snapshot()) segments.insert(seg.address);
  EXPECT_FALSE(segments.count(addr(b[0])));
  EXPECT_FALSE(segments.count(addr(b[2])));
  EXPECT_TRUE(segments.count(addr(b[3])));
  a.free(big);
  a.free(t);
  a.free(u);

  // Without the threshold the same script reaches the allowed maximum and retries.
  FakeDevice dev2(1024 * MiB);
  CachingAllocator plain(0, dev2);
  plain.set_memory_fraction(0.5);
  for (auto& p : b) p = plain.malloc(100 * MiB, 1);
  for (auto& p : b) plain.free(p);
  plain.malloc(150 * MiB, 2);
  EXPECT_EQ(plain.memory_stats()["num_alloc_retries"], 1);
}

void expect_conf_error(const std::string& conf, const std::string& needle) {
  try {
    parse_alloc_conf(conf);
    ADD_FAILURE() << "accepted: " << conf;
  } catch (const ember::ValueError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[EMBER_CUDA_ALLOC_CONF] ", 0), 0u) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

TEST(AllocConf, ParsesPyTorchSyntax) {
  AllocatorOptions o = parse_alloc_conf("");
  EXPECT_EQ(o.max_split_size, SIZE_MAX);
  EXPECT_EQ(o.garbage_collection_threshold, 0.0);
  o = parse_alloc_conf("max_split_size_mb:128,garbage_collection_threshold:0.6");
  EXPECT_EQ(o.max_split_size, 128 * MiB);
  EXPECT_DOUBLE_EQ(o.garbage_collection_threshold, 0.6);
  o = parse_alloc_conf(" expandable_segments : True , max_split_size_mb:21,");
  EXPECT_TRUE(o.expandable_segments);
  EXPECT_EQ(o.max_split_size, 21 * MiB);
  EXPECT_FALSE(parse_alloc_conf("expandable_segments:False").expandable_segments);
  // The parsed options are accepted by the allocator.
  FakeDevice dev(64 * MiB);
  CachingAllocator a(0, dev,
                     parse_alloc_conf("max_split_size_mb:64,garbage_collection_threshold:0.9"));
  EXPECT_EQ(a.memory_stats()["max_split_size"], (int64_t)(64 * MiB));
}

TEST(AllocConf, ErrorsNameTheKeyOrValue) {
  expect_conf_error("max_split_sz_mb:128", "unknown option 'max_split_sz_mb'");
  expect_conf_error("max_split_size_mb:20", "max_split_size_mb must be");
  expect_conf_error("max_split_size_mb:big", "'big'");
  expect_conf_error("max_split_size_mb:64.5", "max_split_size_mb");
  expect_conf_error("max_split_size_mb:", "max_split_size_mb");
  expect_conf_error("garbage_collection_threshold:0", "garbage_collection_threshold");
  expect_conf_error("garbage_collection_threshold:1.0", "garbage_collection_threshold");
  expect_conf_error("garbage_collection_threshold:-0.5", "'-0.5'");
  expect_conf_error("expandable_segments:maybe", "expandable_segments expects True or False");
  expect_conf_error("max_split_size_mb", "expected key:value");
}

// ---- randomised stress against a model ----------------------------------------------------------

TEST(CachingAllocatorStress, RandomOperationsOnThreeStreamsKeepEveryInvariant) {
  FakeDevice dev(256 * MiB);
  CachingAllocator a(0, dev);
  std::mt19937_64 rng(12345);
  struct Live {
    std::size_t size;
    StreamId stream;
  };
  struct Pending {
    std::size_t size;
    std::vector<std::size_t> events;  // indices into dev.events
  };
  std::map<std::uintptr_t, Live> live;
  std::map<std::uintptr_t, Pending> pending;
  std::map<std::uintptr_t, std::set<StreamId>> uses;
  int64_t ooms = 0;
  const StreamId streams[] = {11, 22, 33};

  auto random_size = [&]() -> std::size_t {
    // Log-uniform from 1 byte to 48 MiB: both pools, splits and oversize requests.
    std::uniform_real_distribution<double> e(0.0, std::log2(48.0 * MiB));
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::exp2(e(rng))));
  };
  // The allocator processed events: pending blocks whose events all completed are free.
  auto processed = [&] {
    for (auto it = pending.begin(); it != pending.end();) {
      const bool done = std::all_of(it->second.events.begin(), it->second.events.end(),
                                    [&](std::size_t i) { return dev.events[i]->done; });
      it = done ? pending.erase(it) : std::next(it);
    }
  };
  auto pick = [&](auto& m) {
    auto it = m.begin();
    std::advance(it, std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng));
    return it;
  };
  auto check = [&](int step) {
    SCOPED_TRACE("step " + std::to_string(step));
    auto st = a.memory_stats();
    std::int64_t live_req = 0, pending_req = 0;
    for (auto& [p, l] : live) live_req += l.size;
    for (auto& [p, q] : pending) pending_req += q.size;
    ASSERT_EQ(st["requested_bytes.all.current"], live_req + pending_req);
    ASSERT_EQ(st["allocation.all.current"], (int64_t)live.size());
    ASSERT_EQ(st["active.all.current"], (int64_t)(live.size() + pending.size()));
    ASSERT_EQ(st["reserved_bytes.all.current"], (int64_t)dev.used);
    ASSERT_EQ(st["segment.all.current"], (int64_t)dev.live.size());
    ASSERT_EQ(st["num_ooms"], ooms);
    for (auto& [key, value] : st) {
      const auto dot = key.rfind('.');
      if (dot == std::string::npos || key.substr(dot) != ".current") continue;
      const std::string base = key.substr(0, dot);
      ASSERT_GE(value, 0) << key;
      ASSERT_LE(value, st.at(base + ".peak")) << key;
      ASSERT_EQ(value, st.at(base + ".allocated") - st.at(base + ".freed")) << key;
    }
    // Segments match the device; blocks tile them; live blocks sit in a block of their stream.
    auto snap = a.snapshot();
    std::int64_t allocated = 0, reserved = 0;
    std::map<std::uintptr_t, std::pair<std::size_t, StreamId>> blocks;  // allocated + pending
    for (auto& seg : snap) {
      ASSERT_TRUE(dev.live.count(seg.address));
      ASSERT_EQ(dev.live[seg.address], seg.total_size);
      reserved += seg.total_size;
      std::uintptr_t at = seg.address;
      for (auto& b : seg.blocks) {
        if (b.allocated) allocated += b.size;
        if (b.allocated || b.pending_free) blocks[at] = {b.size, seg.stream};
        at += b.size;
      }
      ASSERT_EQ(at, seg.address + seg.total_size);
    }
    ASSERT_EQ(reserved, (int64_t)dev.used);
    ASSERT_EQ(allocated, st["allocated_bytes.all.current"]);
    ASSERT_EQ(blocks.size(), live.size() + pending.size());
    std::uintptr_t end = 0;
    for (auto& [p, b] : blocks) {
      ASSERT_EQ(p % kMinBlockSize, 0u);
      ASSERT_GE(p, end) << "overlapping blocks";
      end = p + b.first;
      if (auto it = live.find(p); it != live.end()) {
        ASSERT_GE(b.first, it->second.size);
        ASSERT_EQ(b.second, it->second.stream);
      } else {
        ASSERT_TRUE(pending.count(p));
        ASSERT_GE(b.first, pending[p].size);
      }
    }
  };

  auto do_malloc = [&](std::size_t size, StreamId s) {
    void* p = a.malloc(size, s);
    processed();
    ASSERT_NE(p, nullptr);
    ASSERT_FALSE(live.count(addr(p)));
    ASSERT_FALSE(pending.count(addr(p))) << "a block was reused before its events completed";
    live[addr(p)] = {size, s};
  };
  auto do_free = [&](std::uintptr_t p) {
    const std::size_t first_event = dev.events.size();
    a.free(reinterpret_cast<void*>(p));
    const Live l = live.at(p);
    live.erase(p);
    auto u = uses[p];
    uses.erase(p);
    u.erase(l.stream);
    if (u.empty()) return;
    ASSERT_EQ(dev.events.size(), first_event + u.size());
    Pending q{l.size, {}};
    for (std::size_t i = first_event; i < dev.events.size(); ++i) q.events.push_back(i);
    pending[p] = q;
  };

  const int kSteps = 4000;
  for (int step = 0; step < kSteps; ++step) {
    if (step == kSteps / 2) {
      // A request no device could serve, in the middle of everything: state is unchanged.
      EXPECT_THROW(a.malloc(512 * MiB, streams[0]), ember::OutOfMemoryError);
      ooms += 1;
      processed();  // the failed request released the cache after waiting for all events
      check(step);
      // Recovery: free half of what is live, then go on.
      while (live.size() > 0 && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
        do_free(pick(live)->first);
      }
      continue;
    }
    const int op = std::uniform_int_distribution<int>(0, 99)(rng);
    if (op < 50 || live.empty()) {
      const std::size_t size = random_size();
      const StreamId s = streams[std::uniform_int_distribution<int>(0, 2)(rng)];
      try {
        do_malloc(size, s);
      } catch (const ember::OutOfMemoryError&) {
        ooms += 1;
        processed();
        check(step);
        // Recovery: free about a third of the live blocks and retry once.
        for (auto it = live.begin(); it != live.end();) {
          auto next = std::next(it);
          if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) do_free(it->first);
          it = next;
        }
        for (StreamId st : streams) dev.complete(st);
        try {
          do_malloc(size, s);
        } catch (const ember::OutOfMemoryError&) {
          ooms += 1;
          processed();
        }
      }
    } else if (op < 85) {
      do_free(pick(live)->first);
    } else if (op < 93) {
      const auto it = pick(live);
      const StreamId s = streams[std::uniform_int_distribution<int>(0, 2)(rng)];
      a.record_stream(reinterpret_cast<void*>(it->first), s);
      uses[it->first].insert(s);
    } else if (op < 99) {
      dev.complete(streams[std::uniform_int_distribution<int>(0, 2)(rng)]);
      if (op == 98) {
        a.process_events();
        processed();
      }
    } else {
      a.empty_cache();
      processed();
      ASSERT_TRUE(pending.empty());
    }
    check(step);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(ooms, 1);  // the arena filled up on its own at least once
  for (auto& [p, l] : std::map<std::uintptr_t, Live>(live)) do_free(p);
  a.empty_cache();
  processed();
  check(kSteps);
  EXPECT_EQ(dev.used, 0u);
  EXPECT_EQ(dev.outstanding(), 0u);
}
