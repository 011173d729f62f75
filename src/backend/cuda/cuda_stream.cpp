// Streams and events: per-thread current streams, the per-device stream pools, and cudaEvents
// behind ember::cuda::Event.
#include "backend/cuda/cuda_stream.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_graph.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::cuda {

namespace {

constexpr int kStreamsPerPool = 32;

// Index 0: low priority, 1: high priority.
struct DevicePools {
  std::once_flag created[2];
  std::array<cudaStream_t, kStreamsPerPool> streams[2]{};
  std::atomic<unsigned> next[2]{};
};

DevicePools& device_pools(int device) {
  // Never destroyed: the streams outlive every user.
  static DevicePools* pools = new DevicePools[static_cast<size_t>(device_count())];
  return pools[device];
}

// The calling thread's current stream per device (nullptr: the legacy default stream).
std::vector<cudaStream_t>& thread_streams() {
  thread_local std::vector<cudaStream_t> streams(static_cast<size_t>(device_count()), nullptr);
  return streams;
}

int resolve_device(int device, const char* op) {
  if (device == -1) device = current_device();
  cuda_detail::check_device(device, op);
  return device;
}

cudaStream_t native(const Stream& s) { return static_cast<cudaStream_t>(s.native_handle()); }
cudaEvent_t native(void* e) { return static_cast<cudaEvent_t>(e); }

// cudaSuccess -> true, cudaErrorNotReady -> false, anything else throws.
bool ready(cudaError_t err, const char* call) {
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) {
    cudaGetLastError();
    return false;
  }
  cuda_detail::throw_cuda_error(err, call);
}

}  // namespace

// ---- streams -----------------------------------------------------------------------------------

int Stream::priority() const {
  DeviceGuard guard(device_);
  int p = 0;
  EMBER_CUDA_CHECK(cudaStreamGetPriority(native(*this), &p));
  return p;
}

bool Stream::query() const {
  cuda_detail::check_not_capturing(
      "Stream.query",
      "it waits for work on the device, which a capture forbids; synchronize after capture_end() "
      "or after replay() instead");
  DeviceGuard guard(device_);
  return ready(cudaStreamQuery(native(*this)), "cudaStreamQuery");
}

void Stream::synchronize() const {
  cuda_detail::check_not_capturing(
      "Stream.synchronize",
      "it waits for work on the device, which a capture forbids; synchronize after capture_end() "
      "or after replay() instead");
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(native(*this)));
}

void Stream::wait_event(const Event& event) const { event.wait(*this); }

void Stream::wait_stream(const Stream& other) const {
  if (other == *this) return;
  Event e;
  e.record(other);
  e.wait(*this);
}

Stream current_stream(int device) {
  device = resolve_device(device, "current_stream");
  return Stream(device, thread_streams()[static_cast<size_t>(device)]);
}

Stream default_stream(int device) {
  return Stream(resolve_device(device, "default_stream"), nullptr);
}

Stream get_stream_from_pool(int device, bool high_priority) {
  device = resolve_device(device, "get_stream_from_pool");
  DevicePools& pools = device_pools(device);
  const int p = high_priority ? 1 : 0;
  std::call_once(pools.created[p], [&] {
    DeviceGuard guard(device);
    int least = 0, greatest = 0;
    EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    for (cudaStream_t& s : pools.streams[p]) {
      EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking,
                                                    high_priority ? greatest : least));
    }
  });
  const unsigned i = pools.next[p].fetch_add(1, std::memory_order_relaxed) % kStreamsPerPool;
  return Stream(device, pools.streams[p][i]);
}

Stream get_stream_from_external(void* handle, int device) {
  return Stream(resolve_device(device, "get_stream_from_external"), handle);
}

void set_current_stream(const Stream& stream) {
  cuda_detail::check_device(stream.device_index(), "set_current_stream");
  thread_streams()[static_cast<size_t>(stream.device_index())] = native(stream);
}

StreamGuard::StreamGuard(const Stream& stream)
    : original_device_(current_device()),
      original_stream_(cuda::current_stream(stream.device_index())),
      current_(stream) {
  if (stream.device_index() != original_device_) set_device(stream.device_index());
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  thread_streams()[static_cast<size_t>(original_stream_.device_index())] = native(original_stream_);
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now != original_device_)
    cudaSetDevice(original_device_);
}

// ---- events ------------------------------------------------------------------------------------

Event::Event(bool enable_timing, bool blocking, bool interprocess)
    : enable_timing_(enable_timing), blocking_(blocking), interprocess_(interprocess) {
  if (interprocess && enable_timing) {
    throw ValueError("[Event] an interprocess event cannot have enable_timing=true");
  }
}

Event::~Event() {
  if (handle_ != nullptr) cudaEventDestroy(native(handle_));  // never throws
}

Event::Event(Event&& other) noexcept
    : enable_timing_(other.enable_timing_),
      blocking_(other.blocking_),
      interprocess_(other.interprocess_),
      device_(std::exchange(other.device_, -1)),
      handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) cudaEventDestroy(native(handle_));
    enable_timing_ = other.enable_timing_;
    blocking_ = other.blocking_;
    interprocess_ = other.interprocess_;
    device_ = std::exchange(other.device_, -1);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Event::record() { record(cuda::current_stream()); }

void Event::record(const Stream& stream) {
  if (handle_ == nullptr) {
    DeviceGuard guard(stream.device_index());
    unsigned flags = enable_timing_ ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking_) flags |= cudaEventBlockingSync;
    if (interprocess_) flags |= cudaEventInterprocess;
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    handle_ = e;
    device_ = stream.device_index();
  } else if (device_ != stream.device_index()) {
    throw ValueError("[Event.record] the event is on device " + std::to_string(device_) +
                     " but the stream is on device " + std::to_string(stream.device_index()));
  }
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaEventRecord(native(handle_), native(stream)));
}

void Event::wait() const { wait(cuda::current_stream()); }

void Event::wait(const Stream& stream) const {
  if (handle_ == nullptr) return;  // nothing recorded: nothing to wait for
  DeviceGuard guard(stream.device_index());
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(native(stream), native(handle_), 0));
}

bool Event::query() const {
  if (handle_ == nullptr) return true;
  cuda_detail::check_not_capturing(
      "Event.query",
      "it waits for work on the device, which a capture forbids; synchronize after capture_end() "
      "or after replay() instead");
  DeviceGuard guard(device_);
  return ready(cudaEventQuery(native(handle_)), "cudaEventQuery");
}

void Event::synchronize() const {
  if (handle_ == nullptr) return;
  cuda_detail::check_not_capturing(
      "Event.synchronize",
      "it waits for work on the device, which a capture forbids; synchronize after capture_end() "
      "or after replay() instead");
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaEventSynchronize(native(handle_)));
}

float Event::elapsed_time(const Event& end) const {
  if (!enable_timing_ || !end.enable_timing_) {
    throw Error("[elapsed_time] both events must be created with enable_timing=true");
  }
  if (handle_ == nullptr || end.handle_ == nullptr) {
    throw Error("[elapsed_time] both events must be recorded before calculating elapsed time");
  }
  if (!query() || !end.query()) {
    throw Error("[elapsed_time] both events must be completed before calculating elapsed time");
  }
  DeviceGuard guard(device_);
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, native(handle_), native(end.handle_)));
  return ms;
}

}  // namespace ember::cuda

namespace ember::cuda_detail {

cudaStream_t current_stream(int device) {
  if (device == -1) device = cuda::current_device();
  check_device(device, "current_stream");
  return cuda::thread_streams()[static_cast<size_t>(device)];
}

}  // namespace ember::cuda_detail
