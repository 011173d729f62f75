// CUDA graphs: capture into a private pool of the caching allocator, instantiate, replay with a
// fresh Philox offset per replay; and the registry of captures in progress that host syncs and
// random kernels consult.
#include "backend/cuda/cuda_graph.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "alloc/caching_allocator.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/random_kernels.h"
#include "core/tensor_util.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::alloc {
CachingAllocator& caching_allocator(int device);  // cuda_backend.cpp
}  // namespace ember::alloc

namespace ember::cuda {

struct CUDAGraph::State {
  int device = -1;
  cudaStream_t stream = nullptr;  // the capturing stream
  CaptureErrorMode mode = CaptureErrorMode::Global;
  std::thread::id thread;
  MempoolId pool = 0;
  bool capturing = false;
  bool allocating = false;  // the pool serves the stream's allocations
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  // Random ops: {seed, base offset} on the device, rewritten before each replay; the default
  // generator's state when the capture began and how many offsets one replay consumes.
  Tensor philox;
  GeneratorState base;
  uint64_t increment = 0;
  bool uses_random = false;
};

namespace {

std::mutex& registry_mutex() {
  static auto* mu = new std::mutex;
  return *mu;
}

// Captures in progress (never destroyed: captures may end during static destruction).
std::vector<CUDAGraph::State*>& active_captures() {
  static auto* v = new std::vector<CUDAGraph::State*>;
  return *v;
}

std::string stream_name(cudaStream_t s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", static_cast<void*>(s));
  return buf;
}

cudaStreamCaptureMode native_mode(CaptureErrorMode mode) {
  switch (mode) {
    case CaptureErrorMode::Global:
      return cudaStreamCaptureModeGlobal;
    case CaptureErrorMode::ThreadLocal:
      return cudaStreamCaptureModeThreadLocal;
    case CaptureErrorMode::Relaxed:
      return cudaStreamCaptureModeRelaxed;
  }
  return cudaStreamCaptureModeGlobal;
}

void unregister(CUDAGraph::State* s) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& v = active_captures();
  v.erase(std::remove(v.begin(), v.end(), s), v.end());
}

// Stops routing the stream's allocations to the pool and drops this graph's hold on it.
void release_pool_of(CUDAGraph::State& s) noexcept {
  try {
    auto& a = alloc::caching_allocator(s.device);
    if (s.allocating) a.end_allocate_to_pool(s.pool);
    s.allocating = false;
    if (s.pool != 0) a.release_pool(s.pool);
  } catch (...) {  // never throws: runs on error paths and in destructors
  }
  s.pool = 0;
}

}  // namespace

MempoolId graph_pool_handle() {
  // Above the ids the allocator hands out itself, so the two never meet.
  static std::atomic<MempoolId> next{MempoolId{1} << 48};
  return next.fetch_add(1);
}

bool is_current_stream_capturing() {
  if (!is_available()) return false;
  cudaStream_t s = cuda_detail::current_stream();
  if (s == nullptr) return false;  // the legacy default stream is never captured
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EMBER_CUDA_CHECK(cudaStreamIsCapturing(s, &status));
  return status != cudaStreamCaptureStatusNone;
}

CUDAGraph::CUDAGraph() : state_(std::make_unique<State>()) {}

CUDAGraph::~CUDAGraph() {
  if (state_->capturing) abort_capture();
  try {
    reset();
  } catch (...) {  // a destructor must not throw
  }
}

MempoolId CUDAGraph::pool() const { return state_->pool; }
bool CUDAGraph::has_graph() const { return state_->exec != nullptr; }

void CUDAGraph::capture_begin(MempoolId pool, CaptureErrorMode mode) {
  const char* op = "CUDAGraph.capture_begin";
  State& s = *state_;
  if (s.capturing) throw Error(std::string("[") + op + "] this graph is already capturing");
  if (s.exec != nullptr) {
    throw Error(std::string("[") + op +
                "] this graph already holds a capture; call reset() before capturing again");
  }
  if (!is_available()) throw Error(std::string("[") + op + "] no CUDA device is available");
  const int device = current_device();
  cudaStream_t stream = cuda_detail::current_stream(device);
  if (stream == nullptr) {
    throw Error(std::string("[") + op +
                "] cannot capture on the default stream: use cuda::graph (it captures on a side "
                "stream) or make a pool stream current (StreamGuard(get_stream_from_pool()))");
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EMBER_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  if (status != cudaStreamCaptureStatusNone) {
    throw Error(std::string("[") + op + "] stream " + stream_name(stream) +
                " is already capturing a graph: captures cannot nest on one stream");
  }
  s.device = device;
  s.stream = stream;
  s.mode = mode;
  s.thread = std::this_thread::get_id();
  s.philox = Tensor();  // allocated in the pool by the first captured random op
  s.base = default_generator(Device(kCUDA, device)).get_state();
  s.uses_random = false;
  s.increment = 0;
  auto& a = alloc::caching_allocator(device);
  s.pool = pool != 0 ? pool : graph_pool_handle();
  a.acquire_pool(s.pool);
  try {
    a.begin_allocate_to_pool(s.pool, reinterpret_cast<alloc::StreamId>(stream));
    s.allocating = true;
    EMBER_CUDA_CHECK(cudaStreamBeginCapture(stream, native_mode(mode)));
  } catch (...) {
    release_pool_of(s);
    s.philox = Tensor();
    throw;
  }
  s.capturing = true;
  std::lock_guard<std::mutex> lock(registry_mutex());
  active_captures().push_back(&s);
}

void CUDAGraph::capture_end() {
  const char* op = "CUDAGraph.capture_end";
  State& s = *state_;
  if (!s.capturing) throw Error(std::string("[") + op + "] capture_begin() was not called");
  if (cuda_detail::current_stream(s.device) != s.stream) {
    throw Error(std::string("[") + op + "] the current stream " +
                stream_name(cuda_detail::current_stream(s.device)) +
                " is not the capturing stream " + stream_name(s.stream) +
                "; end the capture on the stream it began on");
  }
  DeviceGuard guard(s.device);
  cudaGraph_t graph = nullptr;
  const cudaError_t err = cudaStreamEndCapture(s.stream, &graph);
  s.capturing = false;
  unregister(&s);
  // The generator did not really advance during capture: each replay advances it instead.
  Generator gen = default_generator(Device(kCUDA, s.device));
  s.increment = gen.get_state().offset - s.base.offset;
  gen.set_state(s.base);
  auto& a = alloc::caching_allocator(s.device);
  a.end_allocate_to_pool(s.pool);
  s.allocating = false;
  if (err != cudaSuccess) {
    const std::string why = cudaGetErrorString(err);
    cudaGetLastError();
    if (graph != nullptr) cudaGraphDestroy(graph);
    release_pool_of(s);
    s.philox = Tensor();
    throw Error(std::string("[") + op + "] the capture failed (" + why +
                "): an operation during capture was not permitted, e.g. a synchronising CUDA "
                "call or work on the legacy default stream; the graph is empty and its pool "
                "released");
  }
  s.graph = graph;
  const cudaError_t ierr = cudaGraphInstantiateWithFlags(&s.exec, graph, 0);
  if (ierr != cudaSuccess) {
    cudaGetLastError();
    cudaGraphDestroy(graph);
    s.graph = nullptr;
    s.exec = nullptr;
    release_pool_of(s);
    s.philox = Tensor();
    cuda_detail::throw_cuda_error(ierr, "cudaGraphInstantiateWithFlags");
  }
  if (!s.uses_random) s.philox = Tensor();
}

void CUDAGraph::replay() {
  const char* op = "CUDAGraph.replay";
  State& s = *state_;
  if (s.capturing) {
    throw Error(std::string("[") + op +
                "] called before capture_end(): the graph is still capturing");
  }
  if (s.exec == nullptr) {
    throw Error(std::string("[") + op +
                "] the graph holds no capture: call capture_begin() and capture_end() (or use "
                "cuda::graph) first");
  }
  DeviceGuard guard(s.device);
  cudaStream_t stream = cuda_detail::current_stream(s.device);
  if (s.uses_random) {
    const GeneratorState g = default_generator(Device(kCUDA, s.device)).reserve(s.increment);
    EMBER_CUDA_CHECK(cuda_kernels::set_philox_state(static_cast<uint64_t*>(s.philox.data_ptr()),
                                                    g.seed, g.offset, stream));
  }
  EMBER_CUDA_CHECK(cudaGraphLaunch(s.exec, stream));
}

void CUDAGraph::reset() {
  State& s = *state_;
  if (s.capturing) {
    throw Error(
        "[CUDAGraph.reset] the graph is capturing: end the capture (capture_end) before reset()");
  }
  if (s.device >= 0 && (s.exec != nullptr || s.graph != nullptr)) {
    DeviceGuard guard(s.device);
    // Replays already issued still run: wait for them before the pool's memory can be reused.
    cudaDeviceSynchronize();
    if (s.exec != nullptr) cudaGraphExecDestroy(s.exec);
    if (s.graph != nullptr) cudaGraphDestroy(s.graph);
    cudaGetLastError();
  }
  s.exec = nullptr;
  s.graph = nullptr;
  s.philox = Tensor();
  if (s.pool != 0) release_pool_of(s);
}

void CUDAGraph::abort_capture() noexcept {
  State& s = *state_;
  if (!s.capturing) return;
  s.capturing = false;
  unregister(&s);
  int previous = -1;
  cudaGetDevice(&previous);
  cudaSetDevice(s.device);
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(s.stream, &graph) == cudaSuccess && graph != nullptr) {
    cudaGraphDestroy(graph);
  }
  cudaGetLastError();
  try {
    default_generator(Device(kCUDA, s.device)).set_state(s.base);
  } catch (...) {
  }
  release_pool_of(s);
  s.philox = Tensor();
  if (previous >= 0) cudaSetDevice(previous);
}

// ---- the RAII capture ---------------------------------------------------------------------------

namespace {
// The side stream cuda::graph captures on when given none (PyTorch keeps one per process too).
Stream capture_stream(int device) {
  static std::mutex mu;
  static std::vector<std::optional<Stream>> streams;
  std::lock_guard<std::mutex> lock(mu);
  if (streams.empty()) streams.resize(static_cast<size_t>(device_count()));
  auto& s = streams[static_cast<size_t>(device)];
  if (!s) s = get_stream_from_pool(device);
  return *s;
}
}  // namespace

graph::graph(CUDAGraph& g, MempoolId pool, const Stream* stream, CaptureErrorMode mode)
    : graph_(g), exceptions_(std::uncaught_exceptions()) {
  // Eager work still in flight (warm-up iterations) completes before the capture starts.
  synchronize();
  guard_.emplace(stream != nullptr ? *stream : capture_stream(current_device()));
  try {
    g.capture_begin(pool, mode);
  } catch (...) {
    guard_.reset();
    throw;
  }
}

graph::~graph() noexcept(false) {
  if (std::uncaught_exceptions() > exceptions_) {
    // Unwinding: leave capture mode and give the pool back; the graph stays empty.
    graph_.abort_capture();
    guard_.reset();
    return;
  }
  try {
    graph_.capture_end();
  } catch (...) {
    guard_.reset();
    throw;
  }
  guard_.reset();
}

}  // namespace ember::cuda

namespace ember::cuda_detail {

void check_not_capturing(const char* op, const std::string& what) {
  cudaStream_t culprit = nullptr;
  bool found = false;
  {
    std::lock_guard<std::mutex> lock(cuda::registry_mutex());
    const auto me = std::this_thread::get_id();
    for (const cuda::CUDAGraph::State* s : cuda::active_captures()) {
      if (s->thread == me || s->mode == cuda::CaptureErrorMode::Global) {
        culprit = s->stream;
        found = true;
        break;
      }
    }
  }
  if (!found && cuda::is_available()) {
    // A capture begun outside ember on the current stream.
    cudaStream_t s = current_stream();
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (s != nullptr && cudaStreamIsCapturing(s, &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      culprit = s;
      found = true;
    }
    cudaGetLastError();
  }
  if (!found) return;
  throw Error(std::string("[") + op + "] cannot run while CUDA stream " +
              cuda::stream_name(culprit) + " is capturing a graph: " + what);
}

const uint64_t* capture_philox(const char* op, int device, cudaStream_t stream, uint64_t seed,
                               uint64_t& offset) {
  if (stream == nullptr) return nullptr;
  cuda::CUDAGraph::State* capture = nullptr;
  {
    std::lock_guard<std::mutex> lock(cuda::registry_mutex());
    for (cuda::CUDAGraph::State* s : cuda::active_captures()) {
      if (s->stream == stream && s->device == device) capture = s;
    }
  }
  if (capture == nullptr) return nullptr;
  const GeneratorState now = default_generator(Device(kCUDA, device)).get_state();
  if (seed != capture->base.seed || offset < capture->base.offset || offset >= now.offset) {
    throw Error(std::string("[") + op +
                "] a random op inside a CUDA graph capture must draw from the default CUDA "
                "generator, and the generator must not be reseeded during the capture");
  }
  offset -= capture->base.offset;
  if (!capture->uses_random) {
    capture->philox = make_empty({2}, kInt64, Device(kCUDA, device), false, op);
    capture->uses_random = true;
  }
  return static_cast<const uint64_t*>(capture->philox.data_ptr());
}

}  // namespace ember::cuda_detail
