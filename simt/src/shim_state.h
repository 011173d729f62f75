// The host CUDA runtime shim's shared state: devices, the allocation registry, streams, events,
// graphs and captures. Internal to cudart_shim.cpp and cudart_streams.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime.h"
#include "simt/api_counts.h"

namespace simt::detail {

// A unit of stream work: a kernel, copy, memset, event record or host function.
using Work = std::function<cudaError_t()>;
struct Capture;

}  // namespace simt::detail

// The runtime's opaque handle types, defined here as the shim's own objects.
struct CUstream_st {
  int device = 0;
  unsigned flags = cudaStreamDefault;
  int priority = 0;
  bool legacy = false;                             // the device's legacy default stream
  std::deque<simt::detail::Work> queue;            // work held back under SIMT_DEFER_STREAMS
  std::shared_ptr<simt::detail::Capture> capture;  // set while the stream is being captured
  std::uint64_t captured_ops = 0;
  bool joined = true;  // a forked capture stream's work all flows back into the capture
};

struct CUevent_st {
  int device = 0;
  unsigned flags = cudaEventDefault;
  bool recorded = false;
  bool pending = false;  // recorded on a deferred stream whose work has not run yet
  CUstream_st* stream = nullptr;
  std::chrono::steady_clock::time_point when;
  // Recorded inside a capture: where, so that waiting on it forks or joins the capture.
  std::weak_ptr<simt::detail::Capture> capture;
  CUstream_st* capture_stream = nullptr;
  std::uint64_t capture_pos = 0;
};

struct CUgraph_st {
  std::vector<simt::detail::Work> nodes;  // in capture order, which respects every dependency
};

struct CUgraphExec_st {
  std::vector<simt::detail::Work> nodes;
};

namespace simt::detail {

struct Capture {
  unsigned long long id = 0;  // unique per process, as cudaStreamGetCaptureInfo reports it
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  CUstream_st* origin = nullptr;
  std::vector<CUstream_st*> members;
  std::unique_ptr<CUgraph_st> graph;
  bool invalidated = false;
};

struct Allocation {
  std::size_t size = 0;
  int device = 0;
  bool pinned = false;  // page-locked host memory rather than device memory
};

struct DeviceState {
  int physical = 0;  // the emulated board it is (CUDA_VISIBLE_DEVICES may select and reorder)
  std::size_t capacity = 0;
  std::size_t used = 0;
  cudaError_t sticky = cudaSuccess;  // a kernel fault poisons the device until cudaDeviceReset
  std::unique_ptr<CUstream_st> legacy;
};

struct Shim {
  // Recursive: work runs under the lock and host functions it calls may use the API again.
  std::recursive_mutex mutex;
  std::vector<DeviceState> devices;
  std::map<std::uintptr_t, Allocation> allocations;  // by base address
  std::unordered_set<CUstream_st*> streams;
  std::unordered_set<CUevent_st*> events;
  std::unordered_set<CUgraph_st*> graphs;
  std::unordered_set<CUgraphExec_st*> execs;
  std::vector<std::shared_ptr<Capture>> captures;  // active ones
  unsigned long long next_capture_id = 1;
  std::unordered_map<const void*, int> max_dynamic_smem;
  bool defer = false;
  std::string last_message;
  simt::ApiCounts counts;  // simt::api_counts()
  simt::MemcpyRecord last_memcpy_async;
};

Shim& shim();

// The boards visible to this process, in CUDA order, out of `count` emulated ones: all of them,
// or those CUDA_VISIBLE_DEVICES names (shim_devices.cpp).
std::vector<int> visible_devices(int count);
using Lock = std::lock_guard<std::recursive_mutex>;

int current_device();
// Records error as the calling thread's last error and message as last_error_message().
cudaError_t fail(cudaError_t error, const std::string& message);
cudaError_t record(cudaError_t error);
// The current device's sticky error, recorded as the last error too.
cudaError_t sticky_error();

// The stream a handle names (0 and cudaStreamLegacy: the legacy stream), or nullptr.
CUstream_st* resolve(cudaStream_t stream);
// Runs, queues or captures work on a stream.
cudaError_t submit(CUstream_st* stream, Work work, const char* api);
// Runs everything queued on a stream (deferred mode).
cudaError_t flush(CUstream_st* stream);
// What a synchronous call waits for: the legacy stream and every blocking stream.
cudaError_t flush_blocking(int device);
cudaError_t flush_device(int device);
// Calls that synchronise implicitly are illegal while a global-mode capture runs; this
// invalidates the offending captures and returns cudaErrorStreamCaptureUnsupported.
cudaError_t check_capture_safe(const char* api);

}  // namespace simt::detail
