// ember::cuda for builds without CUDA: no devices; queries that need one raise a clear error.
#include <string>

#include "backend/backend.h"
#include "dynload/nvml.h"
#include "ember/backends.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember {

// No CUDA devices exist in this build: NVML's own indices are the devices that can be asked about.
dynload::NvmlLocator dynload::nvml_locator(int device) {
  dynload::NvmlLocator where;
  where.kind = dynload::NvmlLocator::kIndex;
  where.index = device;
  return where;
}

Backend* builtin_cuda_backend() { return nullptr; }

namespace {
[[noreturn]] void no_cuda(const std::string& what) {
  throw Error("[cuda] " + what +
              ": this build of ember has no CUDA support (rebuild with "
              "-DEMBER_CUDA=ON, or link ember::ember_sim for emulated devices)");
}
}  // namespace

namespace cuda {

bool is_available() { return false; }
int device_count() { return 0; }
DeviceProperties get_device_properties(int device) {
  no_cuda("invalid device ordinal " + std::to_string(device));
}
std::string get_device_name(int device) { return get_device_properties(device).name; }
std::string device_uuid(int device) { no_cuda("invalid device ordinal " + std::to_string(device)); }
int current_device() { return 0; }
void set_device(int device) { no_cuda("invalid device ordinal " + std::to_string(device)); }
void synchronize(int device) { no_cuda("synchronize"); }
DeviceGuard::DeviceGuard(int device) : original_(0) {
  no_cuda("invalid device ordinal " + std::to_string(device));
}
DeviceGuard::~DeviceGuard() = default;
size_t memory_allocated(int) { no_cuda("memory_allocated"); }
size_t max_memory_allocated(int) { no_cuda("max_memory_allocated"); }
size_t memory_reserved(int) { no_cuda("memory_reserved"); }
size_t max_memory_reserved(int) { no_cuda("max_memory_reserved"); }
void reset_peak_memory_stats(int) { no_cuda("reset_peak_memory_stats"); }
void empty_cache() {}  // nothing is cached without CUDA
std::map<std::string, int64_t> memory_stats(int) { no_cuda("memory_stats"); }
std::string memory_summary(int, bool) { no_cuda("memory_summary"); }
void set_per_process_memory_fraction(double, int) { no_cuda("set_per_process_memory_fraction"); }
std::map<std::string, int64_t> host_memory_stats() { no_cuda("host_memory_stats"); }

int Stream::priority() const { no_cuda("Stream.priority"); }
bool Stream::query() const { no_cuda("Stream.query"); }
void Stream::synchronize() const { no_cuda("Stream.synchronize"); }
void Stream::wait_event(const Event&) const { no_cuda("Stream.wait_event"); }
void Stream::wait_stream(const Stream&) const { no_cuda("Stream.wait_stream"); }
Stream current_stream(int device) {
  no_cuda("current_stream: invalid device ordinal " + std::to_string(device));
}
Stream default_stream(int device) {
  no_cuda("default_stream: invalid device ordinal " + std::to_string(device));
}
Stream get_stream_from_pool(int device, bool) {
  no_cuda("get_stream_from_pool: invalid device ordinal " + std::to_string(device));
}
Stream get_stream_from_external(void*, int device) {
  no_cuda("get_stream_from_external: invalid device ordinal " + std::to_string(device));
}
void set_current_stream(const Stream&) { no_cuda("set_current_stream"); }
StreamGuard::StreamGuard(const Stream& stream)
    : original_device_(0), original_stream_(stream), current_(stream) {
  no_cuda("StreamGuard");
}
StreamGuard::~StreamGuard() = default;

// An event is created on its first record, which needs a device.
Event::Event(bool enable_timing, bool blocking, bool interprocess)
    : enable_timing_(enable_timing), blocking_(blocking), interprocess_(interprocess) {}
Event::~Event() = default;
Event::Event(Event&& other) noexcept
    : enable_timing_(other.enable_timing_),
      blocking_(other.blocking_),
      interprocess_(other.interprocess_) {}
Event& Event::operator=(Event&& other) noexcept {
  enable_timing_ = other.enable_timing_;
  blocking_ = other.blocking_;
  interprocess_ = other.interprocess_;
  return *this;
}
void Event::record() { no_cuda("Event.record"); }
void Event::record(const Stream&) { no_cuda("Event.record"); }
void Event::wait() const {}
void Event::wait(const Stream&) const {}
bool Event::query() const { return true; }
void Event::synchronize() const {}
float Event::elapsed_time(const Event&) const { no_cuda("Event.elapsed_time"); }

void record_stream(const Tensor&, const Stream&) { no_cuda("record_stream"); }

struct CUDAGraph::State {};
MempoolId graph_pool_handle() { no_cuda("graph_pool_handle"); }
bool is_current_stream_capturing() { return false; }
CUDAGraph::CUDAGraph() : state_(std::make_unique<State>()) {}
CUDAGraph::~CUDAGraph() = default;
void CUDAGraph::capture_begin(MempoolId, CaptureErrorMode) { no_cuda("CUDAGraph.capture_begin"); }
void CUDAGraph::capture_end() { no_cuda("CUDAGraph.capture_end"); }
void CUDAGraph::replay() { no_cuda("CUDAGraph.replay"); }
void CUDAGraph::reset() {}
MempoolId CUDAGraph::pool() const { return 0; }
bool CUDAGraph::has_graph() const { return false; }
void CUDAGraph::abort_capture() noexcept {}
graph::graph(CUDAGraph& g, MempoolId, const Stream*, CaptureErrorMode) : graph_(g), exceptions_(0) {
  no_cuda("graph");
}
graph::~graph() noexcept(false) = default;
int runtime_version() { return 0; }
int driver_version() { return 0; }

}  // namespace cuda
}  // namespace ember

namespace ember::backends::cudnn {
bool is_available() { return false; }
}  // namespace ember::backends::cudnn
