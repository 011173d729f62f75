// Streams, events and graphs in the cudart shim: eager and deferred execution, legacy default
// stream semantics, event timing, graph capture and replay, and the calls capture forbids.
#include <numeric>

#include "test_util.h"

namespace {

class Streams : public ::testing::Test {
 protected:
  void TearDown() override {
    simt::set_deferred_streams(false);
    cudaDeviceReset();
    cudaGetLastError();
  }
};

TEST_F(Streams, CreateQueryDestroy) {
  cudaStream_t s = nullptr, nb = nullptr, prio = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithPriority(&prio, cudaStreamDefault, -3));
  unsigned flags = 7;
  ASSERT_CUDA(cudaStreamGetFlags(nb, &flags));
  EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
  int priority = 0, least = 0, greatest = 0;
  ASSERT_CUDA(cudaStreamGetPriority(prio, &priority));
  ASSERT_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(priority, -3);
  EXPECT_LE(greatest, priority);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  ASSERT_CUDA(cudaStreamSynchronize(cudaStreamPerThread));
  for (cudaStream_t x : {s, nb, prio}) ASSERT_CUDA(cudaStreamDestroy(x));
  EXPECT_EQ(cudaStreamDestroy(nullptr), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaStreamCreateWithFlags(&s, 0x10), cudaErrorInvalidValue);
}

TEST_F(Streams, EagerWorkIsDoneAtLaunch) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 256;
  DeviceBuffer<float> a(ramp(n)), b(ramp(n)), c(n);
  std::vector<float> host(n, 0.0f);
  launch_add(a.get(), b.get(), c.get(), n, 2, 128, s);
  ASSERT_CUDA(cudaMemcpyAsync(host.data(), c.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  EXPECT_EQ(host[5], 2 * ramp(n)[5]);  // no synchronisation needed without deferral
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Streams, DeferredWorkWaitsForSynchronisation) {
  simt::set_deferred_streams(true);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 64;
  const auto x = ramp(n, 1.0f, 1.0f);
  DeviceBuffer<float> a(x), c(n);
  std::vector<float> host(n, 0.0f);
  launch_add(a.get(), a.get(), c.get(), n, 1, 64, s);
  ASSERT_CUDA(cudaMemcpyAsync(host.data(), c.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  EXPECT_EQ(host[3], 0.0f);  // a host reading before synchronising sees nothing yet
  // A synchronous copy waits for the legacy and blocking streams, not for a non-blocking one.
  std::vector<float> early(n);
  ASSERT_CUDA(cudaMemcpy(early.data(), c.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(early[3]));  // still the allocation's poison
  EXPECT_EQ(cudaStreamQuery(s), cudaErrorNotReady);
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);  // polling makes progress
  EXPECT_EQ(host[3], 2 * x[3]);
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Streams, DeferredCopiesFromPinnedMemoryReadTheSourceWhenTheyRun) {
  simt::set_deferred_streams(true);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 32;
  float* pinned = nullptr;
  ASSERT_CUDA(
      cudaHostAlloc(reinterpret_cast<void**>(&pinned), n * sizeof(float), cudaHostAllocDefault));
  for (int i = 0; i < n; ++i) pinned[i] = 1.0f;
  DeviceBuffer<float> d(n);
  ASSERT_CUDA(cudaMemcpyAsync(d.get(), pinned, n * sizeof(float), cudaMemcpyHostToDevice, s));
  cudaEvent_t copied;
  ASSERT_CUDA(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  ASSERT_CUDA(cudaEventRecord(copied, s));
  // The copy reads its source when it runs, as on a GPU: a host write before then shows.
  for (int i = 0; i < n; ++i) pinned[i] = 2.0f;
  ASSERT_CUDA(cudaEventSynchronize(copied));
  std::vector<float> host(n);
  ASSERT_CUDA(cudaMemcpy(host.data(), d.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[7], 2.0f);
  // cudaFreeHost waits for the device: queued copies still see valid memory.
  ASSERT_CUDA(cudaMemcpyAsync(d.get(), pinned, n * sizeof(float), cudaMemcpyHostToDevice, s));
  ASSERT_CUDA(cudaFreeHost(pinned));
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  ASSERT_CUDA(cudaEventDestroy(copied));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Streams, LegacyStreamOrdersBlockingStreams) {
  simt::set_deferred_streams(true);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));  // blocking
  const int n = 32;
  DeviceBuffer<float> a(ramp(n)), c(n);
  launch_add(a.get(), a.get(), c.get(), n, 1, 32, s);
  std::vector<float> host(n);
  // The synchronous copy runs on the legacy stream, which waits for the blocking stream.
  ASSERT_CUDA(cudaMemcpy(host.data(), c.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
  EXPECT_EQ(host[7], 2 * ramp(n)[7]);
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Streams, EventsTimeAndOrderWork) {
  cudaEvent_t start, stop, untimed;
  ASSERT_CUDA(cudaEventCreate(&start));
  ASSERT_CUDA(cudaEventCreateWithFlags(&stop, cudaEventBlockingSync));
  ASSERT_CUDA(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
  EXPECT_EQ(cudaEventQuery(start), cudaSuccess);  // never recorded: complete
  float ms = -1;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle);
  ASSERT_CUDA(cudaEventRecord(start, nullptr));
  DeviceBuffer<float> a(ramp(4096)), c(4096);
  launch_add(a.get(), a.get(), c.get(), 4096, 4, 256, nullptr);
  ASSERT_CUDA(cudaEventRecord(stop, nullptr));
  ASSERT_CUDA(cudaEventRecord(untimed, nullptr));
  ASSERT_CUDA(cudaEventSynchronize(stop));
  ASSERT_CUDA(cudaEventElapsedTime(&ms, start, stop));
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  for (cudaEvent_t e : {start, stop, untimed}) ASSERT_CUDA(cudaEventDestroy(e));
}

TEST_F(Streams, DeferredEventsAndCrossStreamWaits) {
  simt::set_deferred_streams(true);
  cudaStream_t producer, consumer;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  ASSERT_CUDA(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t ready;
  ASSERT_CUDA(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  const int n = 128;
  const auto x = ramp(n, 1.0f, 1.0f);
  DeviceBuffer<float> a(x), b(n), c(n);
  launch_add(a.get(), a.get(), b.get(), n, 1, 128, producer);  // b = 2a
  ASSERT_CUDA(cudaEventRecord(ready, producer));
  EXPECT_EQ(cudaEventQuery(ready), cudaErrorNotReady);
  ASSERT_CUDA(cudaStreamWaitEvent(consumer, ready, 0));
  launch_add(b.get(), a.get(), c.get(), n, 1, 128, consumer);  // c = 3a
  ASSERT_CUDA(cudaStreamSynchronize(consumer));
  EXPECT_EQ(c.download()[9], 3 * x[9]);
  ASSERT_CUDA(cudaEventDestroy(ready));
  ASSERT_CUDA(cudaStreamDestroy(producer));
  ASSERT_CUDA(cudaStreamDestroy(consumer));
}

TEST_F(Streams, HostFunctionsRunInStreamOrder) {
  simt::set_deferred_streams(true);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  std::vector<int> order;
  auto push = [](void* p) { static_cast<std::vector<int>*>(p)->push_back(1); };
  auto push2 = [](void* p) { static_cast<std::vector<int>*>(p)->push_back(2); };
  ASSERT_CUDA(cudaLaunchHostFunc(s, push, &order));
  ASSERT_CUDA(cudaLaunchHostFunc(s, push2, &order));
  EXPECT_TRUE(order.empty());
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Streams, StreamOrderedAllocation) {
  for (bool deferred : {false, true}) {
    simt::set_deferred_streams(deferred);
    cudaStream_t s;
    ASSERT_CUDA(cudaStreamCreate(&s));
    DeviceBuffer<float> a(ramp(256));
    size_t free0 = 0, free1 = 0, total = 0;
    ASSERT_CUDA(cudaMemGetInfo(&free0, &total));
    float* p = nullptr;
    ASSERT_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p), 256 * sizeof(float), s));
    launch_add(a.get(), a.get(), p, 256, 1, 256, s);
    std::vector<float> host(256);
    ASSERT_CUDA(cudaMemcpyAsync(host.data(), p, sizeof(float) * 256, cudaMemcpyDeviceToHost, s));
    ASSERT_CUDA(cudaFreeAsync(p, s));  // after the work queued before it
    ASSERT_CUDA(cudaStreamSynchronize(s));
    EXPECT_EQ(host[10], 2 * ramp(256)[10]);
    ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
    EXPECT_EQ(free1, free0);
    EXPECT_EQ(cudaFreeAsync(p, s), cudaErrorInvalidValue);  // freed already
    ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_EQ(cudaMallocAsync(reinterpret_cast<void**>(&p), 64, s),
              cudaErrorStreamCaptureUnsupported);  // not emulated
    cudaGraph_t graph;
    ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
    ASSERT_CUDA(cudaGraphDestroy(graph));
    ASSERT_CUDA(cudaStreamDestroy(s));
    cudaGetLastError();
  }
}

// ---- graphs -------------------------------------------------------------------------------------

class Graphs : public Streams {};

TEST_F(Graphs, CaptureRecordsAndReplayRepeats) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int n = 100;
  // A graph's copies read and write page-locked host memory at each replay.
  float *input = nullptr, *output = nullptr;
  ASSERT_CUDA(cudaMallocHost(reinterpret_cast<void**>(&input), n * sizeof(float)));
  ASSERT_CUDA(cudaMallocHost(reinterpret_cast<void**>(&output), n * sizeof(float)));
  for (int i = 0; i < n; ++i) output[i] = -1.0f;
  DeviceBuffer<float> a(n), c(n);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status;
  ASSERT_CUDA(cudaStreamIsCapturing(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_CUDA(cudaMemcpyAsync(a.get(), input, n * sizeof(float), cudaMemcpyHostToDevice, s));
  launch_add(a.get(), a.get(), c.get(), n, 1, 128, s);
  ASSERT_CUDA(cudaGetLastError());
  launch_add(c.get(), a.get(), c.get(), n, 1, 128, s);  // c = 3 * input
  ASSERT_CUDA(cudaMemcpyAsync(output, c.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  EXPECT_EQ(output[0], -1.0f);  // capture runs nothing
  size_t nodes = 0;
  ASSERT_CUDA(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 4u);
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < n; ++i) input[i] = static_cast<float>(i * round);
    ASSERT_CUDA(cudaGraphLaunch(exec, s));
    ASSERT_CUDA(cudaStreamSynchronize(s));
    for (int i = 0; i < n; ++i) ASSERT_EQ(output[i], 3.0f * i * round) << i;
  }
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaStreamIsCapturing(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  ASSERT_CUDA(cudaFreeHost(input));
  ASSERT_CUDA(cudaFreeHost(output));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Graphs, CaptureInfoNamesEachCapture) {
  cudaStream_t s, t;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaStreamCreate(&t));
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_CUDA(cudaStreamGetCaptureInfo(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  ASSERT_CUDA(cudaStreamBeginCapture(t, cudaStreamCaptureModeThreadLocal));
  unsigned long long id_s = 0, id_t = 0;
  ASSERT_CUDA(cudaStreamGetCaptureInfo(s, &status, &id_s));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_CUDA(cudaStreamGetCaptureInfo(t, &status, &id_t));
  EXPECT_NE(id_s, 0u);
  EXPECT_NE(id_s, id_t);
  // A second capture on a capturing stream is refused; the first one goes on.
  EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
  ASSERT_CUDA(cudaStreamGetCaptureInfo(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  cudaGraph_t gs, gt;
  ASSERT_CUDA(cudaStreamEndCapture(s, &gs));
  ASSERT_CUDA(cudaStreamEndCapture(t, &gt));
  for (cudaGraph_t g : {gs, gt}) ASSERT_CUDA(cudaGraphDestroy(g));
  EXPECT_EQ(cudaGraphDestroy(gs), cudaErrorInvalidValue);  // destroyed twice
  for (cudaStream_t x : {s, t}) ASSERT_CUDA(cudaStreamDestroy(x));
  cudaGetLastError();
}

// Buggy captures: each is refused with CUDA's error code, and the stream leaves capture cleanly.
TEST_F(Graphs, PageableCopyInvalidatesTheCapture) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  DeviceBuffer<float> a(16);
  std::vector<float> pageable(16, 1.0f);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  EXPECT_EQ(cudaMemcpyAsync(a.get(), pageable.data(), 64, cudaMemcpyHostToDevice, s),
            cudaErrorStreamCaptureUnsupported);
  EXPECT_NE(std::string(simt::last_error_message()).find("pageable"), std::string::npos);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  cudaStreamCaptureStatus status;
  ASSERT_CUDA(cudaStreamIsCapturing(s, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  // Outside a capture the same copy is fine.
  ASSERT_CUDA(cudaMemcpyAsync(a.get(), pageable.data(), 64, cudaMemcpyHostToDevice, s));
  ASSERT_CUDA(cudaStreamDestroy(s));
  cudaGetLastError();
}

TEST_F(Graphs, LaunchErrorsNameTheProblem) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  DeviceBuffer<float> a(32);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch_add(a.get(), a.get(), a.get(), 32, 1, 32, s);
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  EXPECT_EQ(cudaGraphInstantiate(&exec, nullptr, 0), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  // Launching a graph into a capture (a child graph) is not emulated: refused, not ignored.
  cudaStream_t t;
  ASSERT_CUDA(cudaStreamCreate(&t));
  ASSERT_CUDA(cudaStreamBeginCapture(t, cudaStreamCaptureModeThreadLocal));
  EXPECT_EQ(cudaGraphLaunch(exec, t), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t nested;
  EXPECT_EQ(cudaStreamEndCapture(t, &nested), cudaErrorStreamCaptureInvalidated);
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  EXPECT_EQ(cudaGraphLaunch(exec, s), cudaErrorInvalidValue);  // destroyed instance
  EXPECT_NE(std::string(simt::last_error_message()).find("destroyed"), std::string::npos);
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaGraphDestroy(graph));
  for (cudaStream_t x : {s, t}) ASSERT_CUDA(cudaStreamDestroy(x));
  cudaGetLastError();
}

TEST_F(Graphs, ReplayUnderDeferredStreams) {
  simt::set_deferred_streams(true);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  const int n = 64;
  DeviceBuffer<int> out(n);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  launch_bump_param(out.get(), 5, n, s);  // the arguments outlive this call for replay
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphDestroy(graph));  // the instance keeps its own copy
  ASSERT_CUDA(cudaGraphLaunch(exec, s));
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  const auto v = out.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], 5 + i);
  ASSERT_CUDA(cudaStreamDestroy(s));
}

// Each call below synchronises implicitly, which global-mode capture forbids.
TEST_F(Graphs, SynchronousCallsInvalidateAGlobalCapture) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  DeviceBuffer<float> a(16);
  std::vector<float> host(16);
  const std::vector<std::function<cudaError_t()>> illegal = {
      [&] {
        void* p;
        return cudaMalloc(&p, 64);
      },
      [&] { return cudaMemcpy(host.data(), a.get(), 64, cudaMemcpyDeviceToHost); },
      [&] { return cudaMemset(a.get(), 0, 64); },
      [&] { return cudaDeviceSynchronize(); },
      [&] { return cudaStreamSynchronize(s); },
      [&] { return cudaStreamQuery(s); },
  };
  for (std::size_t i = 0; i < illegal.size(); ++i) {
    SCOPED_TRACE("call " + std::to_string(i));
    ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    EXPECT_EQ(illegal[i](), cudaErrorStreamCaptureUnsupported);
    cudaStreamCaptureStatus status;
    ASSERT_CUDA(cudaStreamIsCapturing(s, &status));
    EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated);
    EXPECT_EQ(cudaMemsetAsync(a.get(), 0, 64, s), cudaErrorStreamCaptureInvalidated);
    cudaGraph_t graph = reinterpret_cast<cudaGraph_t>(0x1);
    EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaErrorStreamCaptureInvalidated);
    EXPECT_EQ(graph, nullptr);
    cudaGetLastError();
  }
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Graphs, RelaxedCaptureAllowsMalloc) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  ASSERT_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 64));
  ASSERT_CUDA(cudaThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, cudaStreamCaptureModeRelaxed);
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  ASSERT_CUDA(cudaGraphDestroy(graph));
  ASSERT_CUDA(cudaFree(p));
  ASSERT_CUDA(cudaStreamDestroy(s));
}

TEST_F(Graphs, LegacyStreamCannotBeCapturedOrUsedDuringCapture) {
  EXPECT_EQ(cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal),
            cudaErrorStreamCaptureUnsupported);
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  DeviceBuffer<float> a(32);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch_add(a.get(), a.get(), a.get(), 32, 1, 32, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorStreamCaptureImplicit);
  cudaGraph_t graph;
  EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(cudaStreamEndCapture(s, &graph), cudaErrorIllegalState);  // no capture any more
  ASSERT_CUDA(cudaStreamDestroy(s));
  cudaGetLastError();
}

TEST_F(Graphs, ForkAndJoinAcrossStreams) {
  cudaStream_t origin, side;
  ASSERT_CUDA(cudaStreamCreate(&origin));
  ASSERT_CUDA(cudaStreamCreate(&side));
  cudaEvent_t fork, join;
  ASSERT_CUDA(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  ASSERT_CUDA(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  const int n = 64;
  const auto x = ramp(n, 1.0f, 1.0f);
  DeviceBuffer<float> a(x), b(n), c(n), d(n);

  auto capture = [&](bool rejoin, cudaGraph_t* graph) {
    EXPECT_EQ(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), cudaSuccess);
    EXPECT_EQ(cudaEventRecord(fork, origin), cudaSuccess);
    EXPECT_EQ(cudaStreamWaitEvent(side, fork, 0), cudaSuccess);
    launch_add(a.get(), a.get(), b.get(), n, 1, 64, side);    // b = 2a on the side stream
    launch_add(a.get(), a.get(), c.get(), n, 1, 64, origin);  // c = 2a meanwhile
    if (rejoin) {
      EXPECT_EQ(cudaEventRecord(join, side), cudaSuccess);
      EXPECT_EQ(cudaStreamWaitEvent(origin, join, 0), cudaSuccess);
    }
    launch_add(b.get(), c.get(), d.get(), n, 1, 64, origin);  // d = 4a
    return cudaStreamEndCapture(origin, graph);
  };
  cudaGraph_t graph;
  ASSERT_CUDA(capture(true, &graph));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, origin));
  ASSERT_CUDA(cudaStreamSynchronize(origin));
  EXPECT_EQ(d.download()[11], 4 * x[11]);
  ASSERT_CUDA(cudaGraphExecDestroy(exec));
  ASSERT_CUDA(cudaGraphDestroy(graph));

  EXPECT_EQ(capture(false, &graph), cudaErrorStreamCaptureUnjoined);
  cudaStreamCaptureStatus status;
  ASSERT_CUDA(cudaStreamIsCapturing(side, &status));
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  for (cudaEvent_t e : {fork, join}) ASSERT_CUDA(cudaEventDestroy(e));
  for (cudaStream_t st : {origin, side}) ASSERT_CUDA(cudaStreamDestroy(st));
  cudaGetLastError();
}

TEST_F(Graphs, KernelFaultDuringReplayIsSticky) {
  cudaStream_t s;
  ASSERT_CUDA(cudaStreamCreate(&s));
  std::vector<int> v(32, 1);
  DeviceBuffer<int> data(v);
  ASSERT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  launch_trap(data.get(), s);
  cudaGraph_t graph;
  ASSERT_CUDA(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  ASSERT_CUDA(cudaGraphLaunch(exec, s));  // no thread traps yet
  v[3] = -1;
  data.upload(v);
  EXPECT_EQ(cudaGraphLaunch(exec, s), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaStreamSynchronize(s), cudaErrorLaunchFailure);
}

}  // namespace
