// Streams, events, graph capture and graphs for the host CUDA runtime shim. Work runs eagerly
// unless SIMT_DEFER_STREAMS holds it until a synchronising call; capture records each piece of
// work as a closure that a graph launch replays in capture order.
#include <algorithm>
#include <cstring>

#include "shim_state.h"

namespace simt::detail {

namespace {

thread_local std::vector<CUstream_st*> t_per_thread_streams;  // per device, never freed
thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;

bool blocking(const CUstream_st* s) { return (s->flags & cudaStreamNonBlocking) == 0; }

cudaError_t run(int device, Work& work) {
  if (const cudaError_t sticky = shim().devices[device].sticky) return record(sticky);
  return work();
}

std::vector<CUstream_st*> device_streams(int device) {
  std::vector<CUstream_st*> out;
  for (CUstream_st* s : shim().streams) {
    if (s->device == device) out.push_back(s);
  }
  return out;
}

bool capture_active(const std::shared_ptr<Capture>& capture) {
  const auto& all = shim().captures;
  return capture && std::find(all.begin(), all.end(), capture) != all.end();
}

CUevent_st* find_event(cudaEvent_t event) { return shim().events.count(event) ? event : nullptr; }

cudaError_t bad_stream(const char* api) {
  return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": invalid stream handle");
}

cudaError_t bad_event(const char* api) {
  return fail(cudaErrorInvalidResourceHandle, std::string(api) + ": invalid event handle");
}

cudaError_t create_stream(cudaStream_t* stream, unsigned flags, int priority) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (stream == nullptr || (flags & ~static_cast<unsigned>(cudaStreamNonBlocking)) != 0) {
    return fail(cudaErrorInvalidValue, "cudaStreamCreate: bad arguments");
  }
  auto* s = new CUstream_st;
  s->device = current_device();
  s->flags = flags;
  s->priority = std::clamp(priority, -5, 0);
  shim().streams.insert(s);
  *stream = s;
  return cudaSuccess;
}

cudaError_t create_event(cudaEvent_t* event, unsigned flags) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
  if (event == nullptr || (flags & ~known) != 0) {
    return fail(cudaErrorInvalidValue, "cudaEventCreate: bad arguments");
  }
  auto* e = new CUevent_st;
  e->device = current_device();
  e->flags = flags;
  shim().events.insert(e);
  *event = e;
  return cudaSuccess;
}

}  // namespace

CUstream_st* resolve(cudaStream_t stream) {
  auto& st = shim();
  const int device = current_device();
  if (stream == nullptr || stream == cudaStreamLegacy) {
    if (device < 0 || device >= static_cast<int>(st.devices.size())) return nullptr;
    return st.devices[device].legacy.get();
  }
  if (stream == cudaStreamPerThread) {
    if (device < 0 || device >= static_cast<int>(st.devices.size())) return nullptr;
    t_per_thread_streams.resize(st.devices.size(), nullptr);
    if (t_per_thread_streams[device] == nullptr) {
      auto* s = new CUstream_st;  // behaves as a blocking stream of this thread
      s->device = device;
      st.streams.insert(s);
      t_per_thread_streams[device] = s;
    }
    return t_per_thread_streams[device];
  }
  return st.streams.count(stream) ? stream : nullptr;
}

cudaError_t submit(CUstream_st* s, Work work, const char* api) {
  auto& st = shim();
  if (s->capture) {
    Capture& capture = *s->capture;
    if (capture.invalidated) {
      return fail(cudaErrorStreamCaptureInvalidated,
                  std::string(api) + ": the stream's capture was invalidated by an earlier error");
    }
    capture.graph->nodes.push_back(std::move(work));
    ++s->captured_ops;
    if (s != capture.origin) s->joined = false;
    return cudaSuccess;
  }
  if (s->legacy) {
    // The legacy stream would wait for a blocking stream that is being captured.
    bool implicit = false;
    for (auto& capture : st.captures) {
      for (CUstream_st* member : capture->members) {
        if (member->device == s->device && blocking(member) && !capture->invalidated) {
          capture->invalidated = true;
          implicit = true;
        }
      }
    }
    if (implicit) {
      return fail(cudaErrorStreamCaptureImplicit,
                  std::string(api) +
                      ": work on the legacy default stream while a blocking stream is captured");
    }
  }
  if (!st.defer) return run(s->device, work);
  // Legacy semantics: the legacy stream waits for blocking streams, and they wait for it.
  if (s->legacy) {
    for (CUstream_st* other : device_streams(s->device)) {
      if (blocking(other)) flush(other);
    }
  } else if (blocking(s)) {
    flush(st.devices[s->device].legacy.get());
  }
  s->queue.push_back(std::move(work));
  return cudaSuccess;
}

cudaError_t flush(CUstream_st* s) {
  cudaError_t first = cudaSuccess;
  while (!s->queue.empty()) {
    Work work = std::move(s->queue.front());
    s->queue.pop_front();
    const cudaError_t e = run(s->device, work);
    if (first == cudaSuccess) first = e;
  }
  return first;
}

cudaError_t flush_blocking(int device) {
  if (!shim().defer) return cudaSuccess;  // eager streams hold no work
  cudaError_t first = flush(shim().devices[device].legacy.get());
  for (CUstream_st* s : device_streams(device)) {
    if (!blocking(s)) continue;
    const cudaError_t e = flush(s);
    if (first == cudaSuccess) first = e;
  }
  return first;
}

cudaError_t flush_device(int device) {
  if (!shim().defer) return cudaSuccess;
  cudaError_t first = flush(shim().devices[device].legacy.get());
  for (CUstream_st* s : device_streams(device)) {
    const cudaError_t e = flush(s);
    if (first == cudaSuccess) first = e;
  }
  return first;
}

cudaError_t check_capture_safe(const char* api) {
  const auto me = std::this_thread::get_id();
  bool prohibited = false;
  for (auto& capture : shim().captures) {
    if (capture->invalidated) continue;
    const bool mine = capture->thread == me && capture->mode != cudaStreamCaptureModeRelaxed;
    const bool global = capture->thread != me && capture->mode == cudaStreamCaptureModeGlobal;
    const bool hit = t_capture_mode == cudaStreamCaptureModeGlobal        ? mine || global
                     : t_capture_mode == cudaStreamCaptureModeThreadLocal ? mine
                                                                          : false;
    if (hit) {
      capture->invalidated = true;
      prohibited = true;
    }
  }
  if (prohibited) {
    return fail(cudaErrorStreamCaptureUnsupported,
                std::string(api) +
                    " is not permitted while a stream is being captured "
                    "(it would synchronise; the capture is now invalid)");
  }
  return cudaSuccess;
}

}  // namespace simt::detail

namespace simt {

// The call counts the shim keeps (emu.h); cudaStreamSynchronize is counted below, the memory
// calls in cudart_shim.cpp.
ApiCounts api_counts() {
  detail::Lock lock(detail::shim().mutex);
  return detail::shim().counts;
}

void reset_api_counts() {
  detail::Lock lock(detail::shim().mutex);
  detail::shim().counts = ApiCounts{};
  detail::shim().last_memcpy_async = MemcpyRecord{};
}

MemcpyRecord last_memcpy_async() {
  detail::Lock lock(detail::shim().mutex);
  return detail::shim().last_memcpy_async;
}

}  // namespace simt

using simt::detail::fail;
using simt::detail::Lock;
using simt::detail::record;
using simt::detail::resolve;
using simt::detail::shim;
using simt::detail::sticky_error;

extern "C" {

// ---- streams ------------------------------------------------------------------------------------

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  return simt::detail::create_stream(stream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  return simt::detail::create_stream(stream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  return simt::detail::create_stream(stream, flags, priority);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread ||
      !shim().streams.count(stream)) {
    return simt::detail::bad_stream("cudaStreamDestroy");
  }
  if (stream->capture) {
    stream->capture->invalidated = true;
    return fail(cudaErrorIllegalState, "cudaStreamDestroy: the stream is being captured");
  }
  simt::detail::flush(stream);  // pending work still completes, as on a GPU
  shim().streams.erase(stream);
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  Lock lock(shim().mutex);
  ++shim().counts.stream_synchronize;
  if (auto e = sticky_error()) return e;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamSynchronize");
  if (s->capture) {
    s->capture->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaStreamSynchronize on a stream that is being captured");
  }
  if (s->legacy) {
    if (auto e = simt::detail::check_capture_safe("cudaStreamSynchronize")) return e;
  }
  if (auto e = simt::detail::flush(s)) return e;
  return sticky_error();
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamQuery");
  if (s->capture) {
    s->capture->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaStreamQuery on a stream that is being captured");
  }
  if (s->queue.empty()) return cudaSuccess;
  // Not ready this time; running the work now guarantees a polling loop makes progress.
  if (auto e = simt::detail::flush(s)) return e;
  return cudaErrorNotReady;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamWaitEvent");
  CUevent_st* e = simt::detail::find_event(event);
  if (e == nullptr) return simt::detail::bad_event("cudaStreamWaitEvent");
  auto capture = e->capture.lock();
  if (simt::detail::capture_active(capture)) {
    // Waiting on an event recorded in a capture forks this stream into it, or joins back.
    if (s->capture && s->capture != capture) {
      return fail(cudaErrorStreamCaptureIsolation,
                  "cudaStreamWaitEvent: the event belongs to another capture");
    }
    if (!s->capture) {
      s->capture = capture;
      s->captured_ops = 0;
      s->joined = false;
      capture->members.push_back(s);
    }
    CUstream_st* from = e->capture_stream;
    if (from != s && from != capture->origin && e->capture_pos == from->captured_ops) {
      from->joined = true;
    }
    return cudaSuccess;
  }
  if (s->capture) return cudaSuccess;  // a dependency on work outside the graph: already done
  if (e->pending) return simt::detail::flush(e->stream);
  return cudaSuccess;
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int* flags) {
  Lock lock(shim().mutex);
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamGetFlags");
  if (flags == nullptr) return record(cudaErrorInvalidValue);
  *flags = s->flags;
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int* priority) {
  Lock lock(shim().mutex);
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamGetPriority");
  if (priority == nullptr) return record(cudaErrorInvalidValue);
  *priority = s->priority;
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* user_data) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaLaunchHostFunc");
  if (fn == nullptr) return record(cudaErrorInvalidValue);
  return simt::detail::submit(
      s,
      [fn, user_data] {
        fn(user_data);
        return cudaSuccess;
      },
      "cudaLaunchHostFunc");
}

// ---- events -------------------------------------------------------------------------------------

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return simt::detail::create_event(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return simt::detail::create_event(event, flags);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Lock lock(shim().mutex);
  CUevent_st* e = simt::detail::find_event(event);
  if (e == nullptr) return simt::detail::bad_event("cudaEventDestroy");
  if (e->pending) simt::detail::flush(e->stream);  // the queued record refers to the event
  shim().events.erase(e);
  delete e;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto err = sticky_error()) return err;
  CUevent_st* e = simt::detail::find_event(event);
  if (e == nullptr) return simt::detail::bad_event("cudaEventRecord");
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaEventRecord");
  if (s->capture) {
    if (s->capture->invalidated) return record(cudaErrorStreamCaptureInvalidated);
    e->capture = s->capture;
    e->capture_stream = s;
    e->capture_pos = s->captured_ops;
    return cudaSuccess;
  }
  e->capture.reset();
  e->recorded = true;
  e->stream = s;
  e->pending = shim().defer;
  return simt::detail::submit(
      s,
      [e] {
        e->when = std::chrono::steady_clock::now();
        e->pending = false;
        return cudaSuccess;
      },
      "cudaEventRecord");
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  Lock lock(shim().mutex);
  if (auto err = sticky_error()) return err;
  CUevent_st* e = simt::detail::find_event(event);
  if (e == nullptr) return simt::detail::bad_event("cudaEventQuery");
  if (simt::detail::capture_active(e->capture.lock())) {
    return fail(cudaErrorCapturedEvent, "cudaEventQuery: the event was recorded in a capture");
  }
  if (!e->pending) return cudaSuccess;
  if (auto err = simt::detail::flush(e->stream)) return err;
  return cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Lock lock(shim().mutex);
  if (auto err = sticky_error()) return err;
  CUevent_st* e = simt::detail::find_event(event);
  if (e == nullptr) return simt::detail::bad_event("cudaEventSynchronize");
  if (simt::detail::capture_active(e->capture.lock())) {
    return fail(cudaErrorCapturedEvent,
                "cudaEventSynchronize: the event was recorded in a capture");
  }
  if (e->pending) {
    if (auto err = simt::detail::flush(e->stream)) return err;
  }
  return sticky_error();
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  Lock lock(shim().mutex);
  if (auto err = sticky_error()) return err;
  CUevent_st* a = simt::detail::find_event(start);
  CUevent_st* b = simt::detail::find_event(end);
  if (ms == nullptr) return record(cudaErrorInvalidValue);
  if (a == nullptr || b == nullptr) return simt::detail::bad_event("cudaEventElapsedTime");
  if (((a->flags | b->flags) & cudaEventDisableTiming) != 0 || !a->recorded || !b->recorded) {
    return fail(cudaErrorInvalidResourceHandle,
                "cudaEventElapsedTime: both events must be recorded and time-stamped "
                "(no cudaEventDisableTiming)");
  }
  if (a->pending || b->pending) return cudaErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(b->when - a->when).count();
  return cudaSuccess;
}

// ---- capture ------------------------------------------------------------------------------------

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamBeginCapture");
  if (s->legacy) {
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaStreamBeginCapture: the legacy default stream cannot be captured");
  }
  if (s->capture) {
    return fail(cudaErrorIllegalState, "cudaStreamBeginCapture: the stream is already capturing");
  }
  simt::detail::flush(s);
  auto capture = std::make_shared<simt::detail::Capture>();
  capture->id = shim().next_capture_id++;
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->origin = s;
  capture->members.push_back(s);
  capture->graph = std::make_unique<CUgraph_st>();
  s->capture = capture;
  s->captured_ops = 0;
  s->joined = true;
  shim().captures.push_back(std::move(capture));
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  Lock lock(shim().mutex);
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamEndCapture");
  if (graph == nullptr) return record(cudaErrorInvalidValue);
  *graph = nullptr;
  if (!s->capture) {
    return fail(cudaErrorIllegalState, "cudaStreamEndCapture: the stream is not capturing");
  }
  auto capture = s->capture;
  if (capture->origin != s) {
    return fail(cudaErrorStreamCaptureUnmatched,
                "cudaStreamEndCapture: the capture began on another stream");
  }
  if (capture->mode != cudaStreamCaptureModeRelaxed &&
      capture->thread != std::this_thread::get_id()) {
    return fail(cudaErrorStreamCaptureWrongThread,
                "cudaStreamEndCapture: called from another thread than cudaStreamBeginCapture");
  }
  bool unjoined = false;
  for (CUstream_st* member : capture->members) {
    unjoined = unjoined || (member != s && !member->joined);
    member->capture.reset();
  }
  auto& captures = shim().captures;
  captures.erase(std::remove(captures.begin(), captures.end(), capture), captures.end());
  if (capture->invalidated) {
    return fail(cudaErrorStreamCaptureInvalidated,
                "cudaStreamEndCapture: the capture was invalidated by an illegal call");
  }
  if (unjoined) {
    return fail(cudaErrorStreamCaptureUnjoined,
                "cudaStreamEndCapture: a forked stream did not join back into the capture");
  }
  *graph = capture->graph.release();
  shim().graphs.insert(*graph);
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  Lock lock(shim().mutex);
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamIsCapturing");
  if (status == nullptr) return record(cudaErrorInvalidValue);
  *status = !s->capture               ? cudaStreamCaptureStatusNone
            : s->capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                      : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* status,
                                     unsigned long long* id, cudaGraph_t* graph,
                                     const cudaGraphNode_t** dependencies,
                                     const cudaGraphEdgeData** edge_data,
                                     size_t* num_dependencies) {
  Lock lock(shim().mutex);
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaStreamGetCaptureInfo");
  if (status == nullptr) return record(cudaErrorInvalidValue);
  const auto& capture = s->capture;
  *status = !capture               ? cudaStreamCaptureStatusNone
            : capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                   : cudaStreamCaptureStatusActive;
  if (!capture) return cudaSuccess;  // the other outputs are undefined, as in CUDA
  if (id != nullptr) *id = capture->id;
  // The graph under construction is internal to the capture here; it cannot be edited.
  if (graph != nullptr) *graph = nullptr;
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edge_data != nullptr) *edge_data = nullptr;
  if (num_dependencies != nullptr) *num_dependencies = 0;
  return cudaSuccess;
}

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return record(cudaErrorInvalidValue);
  std::swap(*mode, simt::detail::t_capture_mode);
  return cudaSuccess;
}

// ---- graphs -------------------------------------------------------------------------------------

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (exec == nullptr || graph == nullptr || !shim().graphs.count(graph)) {
    return fail(cudaErrorInvalidValue, "cudaGraphInstantiate: invalid graph");
  }
  auto* instance = new CUgraphExec_st;
  instance->nodes = graph->nodes;
  shim().execs.insert(instance);
  *exec = instance;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                          unsigned long long flags) {
  return cudaGraphInstantiate(exec, graph, flags);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  Lock lock(shim().mutex);
  if (auto e = sticky_error()) return e;
  if (exec == nullptr || !shim().execs.count(exec)) {
    return fail(cudaErrorInvalidValue,
                "cudaGraphLaunch: invalid graph instance (destroyed, or never instantiated)");
  }
  CUstream_st* s = resolve(stream);
  if (s == nullptr) return simt::detail::bad_stream("cudaGraphLaunch");
  if (s->capture) {
    // Launching into a capture would embed the graph as a child node: not emulated.
    s->capture->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported,
                "cudaGraphLaunch into a capturing stream is not emulated");
  }
  // The nodes are copied so that the instance may be destroyed while the launch is pending.
  return simt::detail::submit(
      s,
      [nodes = exec->nodes]() mutable {
        for (auto& node : nodes) {
          if (const cudaError_t e = node()) return e;
        }
        return cudaSuccess;
      },
      "cudaGraphLaunch");
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  Lock lock(shim().mutex);
  if (exec == nullptr || !shim().execs.erase(exec)) {
    return fail(cudaErrorInvalidValue, "cudaGraphExecDestroy: invalid or destroyed graph instance");
  }
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  Lock lock(shim().mutex);
  if (graph == nullptr || !shim().graphs.erase(graph)) {
    return fail(cudaErrorInvalidValue, "cudaGraphDestroy: invalid or destroyed graph");
  }
  delete graph;
  return cudaSuccess;
}

// Node handles are only counted here: the emulator's graphs are sequences of closures.
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  Lock lock(shim().mutex);
  if (graph == nullptr || count == nullptr || !shim().graphs.count(graph)) {
    return record(cudaErrorInvalidValue);
  }
  if (nodes != nullptr) {
    const std::size_t n = std::min(*count, graph->nodes.size());
    for (std::size_t i = 0; i < n; ++i) nodes[i] = reinterpret_cast<cudaGraphNode_t>(i + 1);
  }
  *count = graph->nodes.size();
  return cudaSuccess;
}

}  // extern "C"
