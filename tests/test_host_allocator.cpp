// Host tests of the pinned host memory cache over a fake raw allocator (std::malloc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "alloc/host_allocator.h"
#include "ember/error.h"
#include "fake_events.h"

namespace {

using namespace ember::alloc;
using alloc_test::WithFakeEvents;

struct FakeHost : WithFakeEvents<RawHostAllocator> {
  void* malloc(std::size_t size) override {
    if (fail) return nullptr;
    void* p = std::malloc(size);
    live[p] = size;
    return p;
  }
  void free(void* p, std::size_t size) override {
    EXPECT_EQ(live.at(p), size);
    live.erase(p);
    std::free(p);
  }
  std::map<void*, std::size_t> live;
  bool fail = false;
};

TEST(CachingHostAllocator, PowerOfTwoBlocksAreReused) {
  FakeHost raw;
  {
    CachingHostAllocator h(raw);
    EXPECT_EQ(h.malloc(0), nullptr);
    void* p = h.malloc(3000);
    EXPECT_EQ(raw.live.at(p), 4096u);
    EXPECT_TRUE(h.is_pinned(p));
    EXPECT_FALSE(h.is_pinned(static_cast<char*>(p) + 1));
    h.free(p);
    EXPECT_FALSE(h.is_pinned(p));
    EXPECT_EQ(h.malloc(4096), p);  // same size class
    void* q = h.malloc(4097);
    EXPECT_EQ(raw.live.at(q), 8192u);
    auto st = h.stats();
    EXPECT_EQ(st["allocation.current"], 2);
    EXPECT_EQ(st["allocated_bytes.current"], 4096 + 8192);
    EXPECT_EQ(st["segment.current"], 2);
    EXPECT_EQ(st["num_host_alloc"], 2);
    h.free(q);
    h.free(p);
    EXPECT_THROW(h.free(p), ember::ValueError);
    h.empty_cache();
    EXPECT_TRUE(raw.live.empty());
    st = h.stats();
    EXPECT_EQ(st["reserved_bytes.current"], 0);
    EXPECT_EQ(st["reserved_bytes.peak"], 4096 + 8192);
    EXPECT_EQ(st["num_host_free"], 2);
  }
  EXPECT_TRUE(raw.live.empty());
}

TEST(CachingHostAllocator, BlocksUsedByStreamsWaitForTheirEvents) {
  FakeHost raw;
  CachingHostAllocator h(raw);
  void* p = h.malloc(1 << 16);
  EXPECT_TRUE(h.record_stream(p, 0, 7));
  EXPECT_TRUE(h.record_stream(p, 1, 8));
  h.free(p);
  EXPECT_EQ(raw.events.size(), 2u);
  void* q = h.malloc(1 << 16);  // the copies on 7 and 8 may still read p
  EXPECT_NE(q, p);
  raw.complete(7);
  h.process_events();
  h.empty_cache();  // p still waits for stream 8: kept
  EXPECT_TRUE(raw.live.count(p));
  raw.complete(8);
  EXPECT_EQ(h.malloc(1 << 16), p);
  EXPECT_EQ(raw.outstanding(), 0u);
  EXPECT_FALSE(h.record_stream(static_cast<char*>(p) + 64, 0, 7));
  raw.fail = true;
  EXPECT_THROW(h.malloc(1 << 20), ember::OutOfMemoryError);
  h.free(p);
  h.free(q);
}

}  // namespace
