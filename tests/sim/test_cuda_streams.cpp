// Streams, events, record_stream, pinned memory and asynchronous transfers on emulated devices.
// Streams are deferred (SIMT_DEFER_STREAMS): work waits in its stream until something
// synchronises with it, so a test sees whether work went to the stream it expects, and whether
// a call returned before its work ran.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "simt/api_counts.h"

using namespace ember;

namespace {

const bool kEnvSet = [] {
  return setenv("EMBER_SIM_DEVICES", "2", 1) == 0 && setenv("SIMT_DEFER_STREAMS", "1", 1) == 0;
}();

const TensorOptions kCuda0 = TensorOptions().device(Device("cuda:0"));
const TensorOptions kPinned = TensorOptions().pinned_memory(true);

void expect_error(const std::function<void()>& fn, const std::string& prefix,
                  const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "expected an ember::Error starting with " << prefix;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

int64_t host_stat(const std::string& key) { return cuda::host_memory_stats().at(key); }

}  // namespace

TEST(CudaStreams, CurrentStreamIsPerThreadAndPerDevice) {
  ASSERT_TRUE(kEnvSet);
  ASSERT_EQ(cuda::device_count(), 2);
  const cuda::Stream def = cuda::default_stream();
  EXPECT_EQ(cuda::current_stream(), def);
  EXPECT_EQ(def.native_handle(), nullptr);
  EXPECT_EQ(def.id(), 0);
  EXPECT_EQ(def.device_index(), 0);
  EXPECT_EQ(def.priority(), 0);
  EXPECT_EQ(cuda::default_stream(1).device_index(), 1);
  EXPECT_NE(cuda::default_stream(1), def);

  const cuda::Stream side = cuda::get_stream_from_pool();
  EXPECT_NE(side, def);
  EXPECT_NE(side.native_handle(), nullptr);
  EXPECT_NE(side.id(), 0);
  cuda::set_current_stream(side);
  EXPECT_EQ(cuda::current_stream(), side);
  EXPECT_EQ(cuda::current_stream(0), side);
  EXPECT_EQ(cuda::current_stream(1), cuda::default_stream(1));  // per device
  std::thread([&] {
    EXPECT_EQ(cuda::current_stream(), cuda::default_stream());  // per thread
    cuda::set_current_stream(cuda::get_stream_from_pool());
  }).join();
  EXPECT_EQ(cuda::current_stream(), side);
  cuda::set_current_stream(def);
  EXPECT_EQ(cuda::current_stream(), def);
}

TEST(CudaStreams, StreamGuardRestoresStreamAndDevice) {
  const cuda::Stream s1 = cuda::get_stream_from_pool(1);
  const cuda::Stream s0 = cuda::get_stream_from_pool(0);
  EXPECT_EQ(s1.device_index(), 1);
  {
    cuda::StreamGuard g(s1);
    EXPECT_EQ(cuda::current_device(), 1);
    EXPECT_EQ(cuda::current_stream(), s1);
    EXPECT_EQ(cuda::current_stream(0), cuda::default_stream(0));
    EXPECT_EQ(g.original_device(), 0);
    EXPECT_EQ(g.original_stream(), cuda::default_stream(1));
    EXPECT_EQ(g.current_stream(), s1);
    {
      cuda::StreamGuard inner(s0);
      EXPECT_EQ(cuda::current_device(), 0);
      EXPECT_EQ(cuda::current_stream(), s0);
      EXPECT_EQ(cuda::current_stream(1), s1);
    }
    EXPECT_EQ(cuda::current_device(), 1);
    EXPECT_EQ(cuda::current_stream(0), cuda::default_stream(0));
  }
  EXPECT_EQ(cuda::current_device(), 0);
  EXPECT_EQ(cuda::current_stream(1), cuda::default_stream(1));
}

TEST(CudaStreams, PoolHandsOut32StreamsPerPriorityRoundRobin) {
  std::vector<cuda::Stream> low, high;
  for (int i = 0; i < 64; ++i) low.push_back(cuda::get_stream_from_pool(0));
  for (int i = 0; i < 33; ++i) high.push_back(cuda::get_stream_from_pool(0, true));
  std::set<void*> distinct;
  for (int i = 0; i < 32; ++i) distinct.insert(low[static_cast<size_t>(i)].native_handle());
  EXPECT_EQ(distinct.size(), 32u);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(low[static_cast<size_t>(i)], low[static_cast<size_t>(i) + 32]);
  EXPECT_EQ(high[0], high[32]);
  for (const auto& h : high) EXPECT_FALSE(distinct.count(h.native_handle()));
  EXPECT_EQ(low[0].priority(), 0);
  EXPECT_LT(high[0].priority(), low[0].priority());  // more urgent
  EXPECT_NE(cuda::get_stream_from_pool(1), low[0]);
}

TEST(CudaStreams, WorkUnderAGuardGoesToThatStream) {
  const cuda::Stream side = cuda::get_stream_from_pool();
  Tensor x;
  {
    cuda::StreamGuard g(side);
    x = empty({4096}, kCuda0);
    x.fill_(3.0f);
  }
  EXPECT_TRUE(cuda::default_stream().query());  // nothing went to the default stream
  EXPECT_FALSE(side.query());                   // the fill waits in the side stream
  side.synchronize();
  EXPECT_TRUE(side.query());
  EXPECT_EQ(x.to_vector<float>(), std::vector<float>(4096, 3.0f));
}

TEST(CudaStreams, WaitStreamOrdersDeferredWork) {
  const cuda::Stream producer = cuda::get_stream_from_pool();
  const cuda::Stream consumer = cuda::get_stream_from_pool();
  ASSERT_NE(producer, consumer);
  Tensor x = empty({2048}, kCuda0);
  Tensor y;
  {
    cuda::StreamGuard g(producer);
    x.fill_(7.0f);
  }
  consumer.wait_stream(producer);
  {
    cuda::StreamGuard g(consumer);
    y = x.clone();  // a device copy on the consumer, after the producer's fill
    EXPECT_EQ(y.to_vector<float>(), std::vector<float>(2048, 7.0f));
  }
  consumer.wait_stream(consumer);  // a stream never waits for itself
}

TEST(CudaStreams, EventsQueryTimeAndOrder) {
  const cuda::Stream side = cuda::get_stream_from_pool();
  cuda::Event start(true), end(true);
  EXPECT_FALSE(start.is_created());
  EXPECT_TRUE(start.query());  // nothing recorded yet
  start.synchronize();
  expect_error([&] { start.elapsed_time(end); }, "[elapsed_time]", "must be recorded");

  Tensor x = empty({1024}, kCuda0);
  {
    cuda::StreamGuard g(side);
    start.record();
    x.fill_(1.0f);
    end.record();
  }
  EXPECT_TRUE(start.is_created());
  EXPECT_EQ(end.device_index(), 0);
  EXPECT_FALSE(end.query());  // the fill before it has not run
  end.synchronize();
  EXPECT_TRUE(end.query());
  EXPECT_GE(start.elapsed_time(end), 0.0f);

  // A stream waiting on an event runs after the work the event captured.
  cuda::Event ready;
  {
    cuda::StreamGuard g(side);
    x.fill_(5.0f);
    ready.record();
  }
  const cuda::Stream reader = cuda::get_stream_from_pool();
  reader.wait_event(ready);
  {
    cuda::StreamGuard g(reader);
    EXPECT_EQ(x.to_vector<float>(), std::vector<float>(1024, 5.0f));
  }

  cuda::Event a, b;
  a.record(side);
  b.record(side);
  expect_error([&] { a.elapsed_time(b); }, "[elapsed_time]", "enable_timing=true");
  expect_error([&] { a.record(cuda::get_stream_from_pool(1)); }, "[Event.record]",
               "device 0 but the stream is on device 1");
  cuda::Event moved = std::move(a);
  EXPECT_TRUE(moved.is_created());
  EXPECT_FALSE(a.is_created());  // NOLINT(bugprone-use-after-move)
  moved.synchronize();
  expect_error([] { cuda::Event e(true, false, true); }, "[Event]", "interprocess");
}

TEST(CudaStreams, RecordStreamKeepsABlockFromReuseUntilTheStreamIsDone) {
  // 12 MiB blocks: whole segments of the large pool, the only ones on the default stream.
  const int64_t kBig = 3 << 20;
  const cuda::Stream side = cuda::get_stream_from_pool();
  cuda::synchronize();
  // Control: a block freed on its own stream is reused at once.
  Tensor w = empty({kBig}, kCuda0);
  void* pw = w.data_ptr();
  w = Tensor();
  Tensor v = empty({kBig}, kCuda0);
  EXPECT_EQ(v.data_ptr(), pw);

  {
    cuda::StreamGuard g(side);
    v.fill_(2.0f);  // the side stream uses v
  }
  cuda::record_stream(v, side);
  void* pv = v.data_ptr();
  v = Tensor();
  Tensor u = empty({kBig}, kCuda0);
  EXPECT_NE(u.data_ptr(), pv);  // side's fill may still be writing it
  cuda::synchronize();          // the event has completed: the block is free again
  Tensor t = empty({kBig}, kCuda0);
  EXPECT_EQ(t.data_ptr(), pv);

  expect_error([] { cuda::record_stream(ones({4}), cuda::default_stream()); }, "[record_stream]",
               "pinned");
  expect_error([&] { cuda::record_stream(t, cuda::default_stream(1)); }, "[record_stream]",
               "cuda:0");
}

TEST(CudaStreams, PinMemory) {
  Tensor h = arange(100, TensorOptions(kFloat32));
  EXPECT_FALSE(h.is_pinned());
  const int64_t allocs = host_stat("allocation.current");
  Tensor p = h.pin_memory();
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.narrow(0, 10, 20).is_pinned());  // a view of pinned memory
  EXPECT_TRUE(p.pin_memory().is_same(p));
  EXPECT_EQ(p.to_vector<float>(), iota(100));
  EXPECT_EQ(host_stat("allocation.current"), allocs + 1);
  EXPECT_EQ(host_stat("allocated_bytes.current") % 512, 0);  // power-of-two blocks
  Tensor e = empty({10}, kPinned);
  EXPECT_TRUE(e.is_pinned());
  EXPECT_FALSE(p.clone().is_pinned());
  EXPECT_FALSE(ones({3}, kCuda0).is_pinned());
  expect_error([] { ones({3}, kCuda0).pin_memory(); }, "[pin_memory]", "only CPU tensors");
  p = Tensor();
  e = Tensor();
  EXPECT_EQ(host_stat("allocation.current"), allocs);
  cuda::empty_cache();
  EXPECT_EQ(host_stat("reserved_bytes.current"), 0);
}

TEST(CudaStreams, NonBlockingFromPinnedMemoryIsAsynchronous) {
  const int n = 1 << 14;
  const cuda::Stream side = cuda::get_stream_from_pool();
  cuda::synchronize();

  // Host to device: the call returns with the copy still queued.
  Tensor src = arange(n, TensorOptions(kFloat32)).pin_memory();
  Tensor d;
  {
    cuda::StreamGuard g(side);
    d = src.to(Device("cuda:0"), true);
  }
  EXPECT_FALSE(side.query());
  side.synchronize();
  EXPECT_EQ(d.to_vector<float>(), iota(n));

  // The source may go at once: its block is not handed out again before the copy ran.
  Tensor src2 = full({n}, 4.0f, TensorOptions(kFloat32)).pin_memory();
  Tensor d2;
  {
    cuda::StreamGuard g(side);
    d2 = src2.to(Device("cuda:0"), true);
  }
  void* freed = src2.data_ptr();
  const int64_t host_allocs = host_stat("num_host_alloc");
  src2 = Tensor();
  Tensor other = empty({n}, kPinned);
  EXPECT_NE(other.data_ptr(), freed);
  EXPECT_EQ(host_stat("num_host_alloc"), host_allocs + 1);
  other.fill_(-1.0f);
  side.synchronize();
  EXPECT_EQ(d2.to_vector<float>(), std::vector<float>(static_cast<size_t>(n), 4.0f));

  // Device to host: lands in pinned memory, complete only after synchronising.
  Tensor back;
  {
    cuda::StreamGuard g(side);
    back = d.to(Device(kCPU), true);
  }
  EXPECT_TRUE(back.is_pinned());
  EXPECT_FALSE(side.query());
  side.synchronize();
  EXPECT_EQ(back.to_vector<float>(), iota(n));

  // copy_ into existing pinned memory, non-blocking on the current stream.
  Tensor into = empty({n}, kPinned);
  {
    cuda::StreamGuard g(side);
    into.copy_(d2, true);
  }
  EXPECT_FALSE(side.query());
  side.synchronize();
  EXPECT_EQ(into.to_vector<float>(), std::vector<float>(static_cast<size_t>(n), 4.0f));
}

// The runtime calls a transfer makes (the emulated runtime counts them): pinned memory is
// copied by one cudaMemcpyAsync straight between the tensors, with no staging buffer and, when
// non_blocking, no synchronisation; a pageable or blocking copy adds only the stream's sync.
TEST(CudaStreams, PinnedTransfersAreOneDirectCopy) {
  const int n = 1 << 12;
  Tensor d = arange(n, TensorOptions(kFloat32).device(Device("cuda:0")));
  Tensor pinned = empty({n}, kPinned);
  Tensor pageable = empty({n});
  cuda::synchronize();
  const auto stream = static_cast<cudaStream_t>(cuda::current_stream().native_handle());
  auto expect_one_copy = [&](const char* what, const void* dst, const void* src,
                             cudaMemcpyKind kind, uint64_t syncs) {
    const simt::ApiCounts c = simt::api_counts();
    EXPECT_EQ(c.memcpy_async, 1u) << what;
    EXPECT_EQ(c.memcpy, 0u) << what;
    EXPECT_EQ(c.stream_synchronize, syncs) << what;
    EXPECT_EQ(c.device_synchronize, 0u) << what;
    EXPECT_EQ(c.malloc + c.host_alloc, 0u) << what;
    const simt::MemcpyRecord r = simt::last_memcpy_async();
    EXPECT_EQ(r.dst, dst) << what;
    EXPECT_EQ(r.src, src) << what;
    EXPECT_EQ(r.count, n * sizeof(float)) << what;
    EXPECT_EQ(r.kind, kind) << what;
    EXPECT_EQ(r.stream, stream) << what;
    simt::reset_api_counts();
  };
  simt::reset_api_counts();
  pinned.copy_(d, true);
  expect_one_copy("D2H pinned, non_blocking", pinned.data_ptr(), d.data_ptr(),
                  cudaMemcpyDeviceToHost, 0);
  cuda::synchronize();
  simt::reset_api_counts();
  d.copy_(pinned, true);
  expect_one_copy("H2D pinned, non_blocking", d.data_ptr(), pinned.data_ptr(),
                  cudaMemcpyHostToDevice, 0);
  cuda::synchronize();
  simt::reset_api_counts();
  pinned.copy_(d);
  expect_one_copy("D2H pinned, blocking", pinned.data_ptr(), d.data_ptr(), cudaMemcpyDeviceToHost,
                  1);
  pageable.copy_(d);
  expect_one_copy("D2H pageable", pageable.data_ptr(), d.data_ptr(), cudaMemcpyDeviceToHost, 1);
  d.copy_(pageable);
  expect_one_copy("H2D pageable", d.data_ptr(), pageable.data_ptr(), cudaMemcpyHostToDevice, 1);
  EXPECT_EQ(pinned.to_vector<float>(), iota(n));
}

TEST(CudaStreams, NonBlockingFromPageableMemoryIsSynchronous) {
  const int n = 4096;
  Tensor h = arange(n, TensorOptions(kFloat32));
  const cuda::Stream side = cuda::get_stream_from_pool();
  cuda::StreamGuard g(side);
  Tensor d = h.to(Device("cuda:0"), true);
  EXPECT_TRUE(side.query());  // nothing left queued: the host buffer was read already
  h.fill_(0.0f);
  EXPECT_EQ(d.to_vector<float>(), iota(n));
  Tensor back = zeros({n});
  back.copy_(d, true);  // pageable destination: complete on return
  EXPECT_TRUE(side.query());
  EXPECT_EQ(back.to_vector<float>(), iota(n));
  // Dtype conversion and a non-contiguous destination take the same synchronous path.
  Tensor half = empty({n / 2}, TensorOptions(kFloat16).device(Device("cuda:0")));
  half.copy_(h.narrow(0, 0, n / 2).add(1.0), true);
  EXPECT_EQ(half.to(kFloat32).to_vector<float>(), std::vector<float>(n / 2, 1.0f));
}

TEST(CudaStreams, CopiesBetweenDevicesFollowBothCurrentStreams) {
  const cuda::Stream s0 = cuda::get_stream_from_pool(0);
  const cuda::Stream s1 = cuda::get_stream_from_pool(1);
  Tensor x = empty({3000}, kCuda0);
  Tensor y = empty({3000}, TensorOptions().device(Device("cuda:1")));
  {
    cuda::StreamGuard g0(s0);
    x.fill_(9.0f);  // queued on s0
    cuda::StreamGuard g1(s1);
    y.copy_(x);  // copied on s0 after the fill; s1 waits for the copy
  }
  {
    cuda::StreamGuard g1(s1);
    EXPECT_EQ(y.to_vector<float>(), std::vector<float>(3000, 9.0f));
  }
}

TEST(CudaStreams, BadDevicesAreErrors) {
  expect_error([] { cuda::current_stream(5); }, "[current_stream]", "invalid device ordinal 5");
  expect_error([] { cuda::default_stream(2); }, "[default_stream]", "invalid device ordinal 2");
  expect_error([] { cuda::get_stream_from_pool(-2); }, "[get_stream_from_pool]",
               "invalid device ordinal -2");
  expect_error([] { cuda::get_stream_from_external(nullptr, 3); }, "[get_stream_from_external]",
               "2 CUDA devices available");
  const cuda::Stream ext = cuda::get_stream_from_external(nullptr);
  EXPECT_EQ(ext, cuda::default_stream());
}
