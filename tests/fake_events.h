// Fake events for the host tests of the caching allocators: a raw allocator interface whose
// event operations complete only when the test says so.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "alloc/caching_allocator.h"

namespace alloc_test {

using ember::alloc::EventHandle;
using ember::alloc::StreamId;

// Events that complete only when a test says so: complete(stream) finishes every event recorded
// on stream so far, as a GPU finishes a stream's work in order.
struct FakeEvents {
  struct Event {
    StreamId stream;
    bool done = false;
    bool released = false;
  };
  EventHandle record(StreamId stream) {
    events.push_back(std::make_unique<Event>(Event{stream}));
    return events.back().get();
  }
  bool query(EventHandle h) {
    EXPECT_FALSE(ev(h).released);
    return ev(h).done;
  }
  void synchronize(EventHandle h) {
    EXPECT_FALSE(ev(h).released);
    ev(h).done = true;
    syncs += 1;
  }
  void release(EventHandle h) {
    EXPECT_FALSE(ev(h).released);
    ev(h).released = true;
  }
  void complete(StreamId stream) {
    for (auto& e : events) {
      if (e->stream == stream) e->done = true;
    }
  }
  std::size_t outstanding() const {
    return std::count_if(events.begin(), events.end(), [](auto& e) { return !e->released; });
  }
  static Event& ev(EventHandle h) { return *static_cast<Event*>(h); }
  std::vector<std::unique_ptr<Event>> events;  // every event ever recorded, in order
  int syncs = 0;
};

// Base (a raw allocator interface) with its EventOps served by FakeEvents.
template <class Base>
struct WithFakeEvents : Base, FakeEvents {
  EventHandle record_event(int, StreamId stream) override { return record(stream); }
  bool query_event(EventHandle h) override { return query(h); }
  void synchronize_event(EventHandle h) override { synchronize(h); }
  void release_event(EventHandle h) override { release(h); }
};

}  // namespace alloc_test
