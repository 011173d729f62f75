// ember::cuda: device queries and selection. Works in every build: without CUDA (or without a
// GPU or driver) is_available() is false and device_count() is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ember {
class Tensor;
}

namespace ember::cuda {

bool is_available();
int device_count();
std::string get_device_name(int device = 0);

struct DeviceProperties {
  std::string name;
  int major = 0, minor = 0;  // compute capability
  size_t total_memory = 0;   // bytes
  int multi_processor_count = 0;
  size_t l2_cache_size = 0;  // bytes
};
DeviceProperties get_device_properties(int device = 0);

// The calling thread's current device (0 when none was set).
int current_device();
void set_device(int device);
// Waits for all work on device (-1: the current device).
void synchronize(int device = -1);

// Sets the current device for a scope and restores the previous one on exit.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  int original_device() const { return original_; }

 private:
  int original_;
};

// CUDA runtime version linked into ember (e.g. 13000), and the driver's (0 without a driver).
int runtime_version();
int driver_version();

// ---- memory (device = -1: the current device) --------------------------------------------------
// Bytes held by tensors now, and the most since the last reset_peak_memory_stats.
size_t memory_allocated(int device = -1);
size_t max_memory_allocated(int device = -1);
// Bytes the caching allocator has obtained from the device (in use or cached).
size_t memory_reserved(int device = -1);
size_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
// Returns every unused cached block of every device to the driver.
void empty_cache();
// PyTorch's memory_stats keys: "allocated_bytes.all.current", "num_ooms", ...
std::map<std::string, int64_t> memory_stats(int device = -1);
// PyTorch's memory_summary table (75 columns).
std::string memory_summary(int device = -1, bool abbreviated = false);
// Caps the caching allocator of device at fraction of its total memory (0 < fraction <= 1).
void set_per_process_memory_fraction(double fraction, int device = -1);
// The pinned host memory cache (torch.cuda.host_memory_stats): "allocated_bytes.current",
// "reserved_bytes.peak", "allocation.current", "segment.current", "num_host_alloc", ...
std::map<std::string, int64_t> host_memory_stats();

// ---- streams and events ------------------------------------------------------------------------
class Event;

// A CUDA stream of one device (PyTorch's CUDAStream). Copyable; the streams it names live for
// the whole process. Every kernel and copy of ember goes to the current stream of its device.
class Stream {
 public:
  int device_index() const { return device_; }
  // The cudaStream_t; nullptr is the device's legacy default stream.
  void* native_handle() const { return handle_; }
  // Unique among the streams of a device; 0 for the default stream.
  int64_t id() const { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(handle_)); }
  // The CUDA priority (lower is more urgent): 0 for the default stream and low-priority streams.
  int priority() const;
  // True when all work issued to the stream has completed.
  bool query() const;
  void synchronize() const;
  // Work issued to this stream later waits for the event / for all work now on other.
  void wait_event(const Event& event) const;
  void wait_stream(const Stream& other) const;

  bool operator==(const Stream& o) const { return device_ == o.device_ && handle_ == o.handle_; }
  bool operator!=(const Stream& o) const { return !(*this == o); }

 private:
  Stream(int device, void* handle) : device_(device), handle_(handle) {}
  friend Stream current_stream(int);
  friend Stream default_stream(int);
  friend Stream get_stream_from_pool(int, bool);
  friend Stream get_stream_from_external(void*, int);
  int device_;
  void* handle_;
};

// The calling thread's current stream of device (-1: the current device); the default stream
// until set_current_stream or a StreamGuard changes it. Current streams are per thread.
Stream current_stream(int device = -1);
Stream default_stream(int device = -1);
// A stream from the device's pool: 32 streams per priority, handed out round-robin, created on
// first use and never destroyed.
Stream get_stream_from_pool(int device = -1, bool high_priority = false);
// Wraps a cudaStream_t created elsewhere on device (-1: the current device).
Stream get_stream_from_external(void* handle, int device = -1);
// Makes stream the current stream of its device for the calling thread (the current device is
// unchanged).
void set_current_stream(const Stream& stream);

// Makes stream and its device current for a scope; restores both on exit.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  Stream original_stream() const { return original_stream_; }
  Stream current_stream() const { return current_; }
  int original_device() const { return original_device_; }

 private:
  int original_device_;
  Stream original_stream_;  // the previous current stream of the stream's device
  Stream current_;
};

// A CUDA event (PyTorch's CUDAEvent). Created lazily on the device of the first stream it is
// recorded on; before that, query() is true and synchronize() and wait() do nothing. Move-only.
class Event {
 public:
  explicit Event(bool enable_timing = false, bool blocking = false, bool interprocess = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Captures the work issued so far to stream (default: the current stream).
  void record();
  void record(const Stream& stream);
  // Work issued later to stream (default: the current stream) waits for this event.
  void wait() const;
  void wait(const Stream& stream) const;
  bool query() const;
  void synchronize() const;
  // Milliseconds from this event to end; both need enable_timing, must be recorded and complete.
  float elapsed_time(const Event& end) const;

  bool is_created() const { return handle_ != nullptr; }
  int device_index() const { return device_; }  // -1 before the first record
  void* native_handle() const { return handle_; }

 private:
  bool enable_timing_, blocking_, interprocess_;
  int device_ = -1;
  void* handle_ = nullptr;  // cudaEvent_t
};

// Marks tensor's memory as used by stream (Tensor.record_stream): when the tensor is freed its
// block is reused only after the work issued to stream by then has completed.
void record_stream(const Tensor& tensor, const Stream& stream);

// ---- CUDA graphs (docs/cuda-graphs.md) ---------------------------------------------------------
// A private memory pool of the caching allocator: what a graph's capture allocates lives there
// until the graph is reset. 0 (the default) means "a new pool for this graph".
using MempoolId = uint64_t;
// A fresh pool id that several graphs may pass to capture_begin to share one pool (graphs that
// share a pool must be replayed in the order they were captured).
MempoolId graph_pool_handle();

// Which CUDA calls the capture forbids (PyTorch's capture_error_mode): Global forbids unsafe calls
// (synchronisation, cudaMalloc, ...) from every thread, ThreadLocal only from the capturing
// thread, Relaxed from none. ember's own host syncs (item(), to(kCPU), synchronize) are refused
// on the capturing thread in every mode, and in Global mode on every thread.
enum class CaptureErrorMode { Global, ThreadLocal, Relaxed };

// True when the calling thread's current stream of the current device is capturing a graph.
bool is_current_stream_capturing();

// A captured sequence of kernels and copies that replay() launches again on the current stream
// (PyTorch's torch.cuda.CUDAGraph). Tensors the capture allocates come from the graph's private
// pool and stay valid (their memory reserved for the graph) until reset(). Move-only.
class CUDAGraph {
 public:
  CUDAGraph();
  ~CUDAGraph();  // reset()
  CUDAGraph(const CUDAGraph&) = delete;
  CUDAGraph& operator=(const CUDAGraph&) = delete;

  // Starts capturing the current stream (not the default stream: use cuda::graph, which captures
  // on a side stream). pool: 0 for a new private pool, or a graph_pool_handle() / another graph's
  // pool() to share it.
  void capture_begin(MempoolId pool = {}, CaptureErrorMode mode = CaptureErrorMode::Global);
  // Ends the capture and instantiates the graph. Raises (and leaves the stream out of capture,
  // the pool released) when the capture was invalidated by an illegal call.
  void capture_end();
  // Launches the captured work on the current stream; random ops draw fresh numbers each time.
  void replay();
  // Frees the graph and gives its private pool back (reserved memory returns on empty_cache()).
  void reset();
  // The graph's private pool (0 before capture_begin).
  MempoolId pool() const;
  // Whether capture_end() has produced a graph that replay() can launch.
  bool has_graph() const;

  struct State;  // internal

 private:
  friend class graph;
  void abort_capture() noexcept;
  std::unique_ptr<State> state_;
};

// RAII capture (PyTorch's torch.cuda.graph): synchronizes the device, makes a side stream (or
// `stream`) current and begins capturing into g; the destructor ends the capture and restores the
// stream. When the scope exits by an exception the capture is abandoned: the stream leaves
// capture mode, the pool is released and g stays empty.
//   cuda::CUDAGraph g;  { cuda::graph capture(g); loss = step(static_x, static_y); }  g.replay();
class graph {
 public:
  explicit graph(CUDAGraph& g, MempoolId pool = {}, const Stream* stream = nullptr,
                 CaptureErrorMode mode = CaptureErrorMode::Global);
  ~graph() noexcept(false);
  graph(const graph&) = delete;
  graph& operator=(const graph&) = delete;

 private:
  CUDAGraph& graph_;
  std::optional<StreamGuard> guard_;
  int exceptions_;
};

// ---- CUDA libraries, opened at run time (never linked) -----------------------------------------
// Versions as each library reports them (cuBLAS 130100 = 13.1.0, cuDNN 91300 = 9.13.0, NCCL 22703
// = 2.27.3); 0 when the library is not found. Every build reports what the loader finds on this
// machine, also the emulated build and the build without CUDA. EMBER_CUBLASLT_LIBRARY,
// EMBER_CUDNN_LIBRARY, EMBER_NCCL_LIBRARY name a file to load instead ("none": load nothing).
int cublas_version();
int cudnn_version();
int nccl_version();
// For "cublas" (libcublasLt), "cudnn" or "nccl": the file loaded, or "" when absent; and why it is
// absent, or "" when present. Other names raise an error.
std::string library_path(const std::string& name);
std::string library_error(const std::string& name);
// "9.13.0" for ("cudnn", 91300); "" for version 0.
std::string format_library_version(const std::string& name, int version);

// ---- GPU health through NVML (libnvidia-ml.so.1, opened at run time) ---------------------------
struct ProcessInfo {
  unsigned pid = 0;
  size_t used_memory = 0;  // bytes; 0 when NVML may not say
  std::string name;
};
struct DeviceHealth {
  bool available = false;  // false without NVML or for a device NVML does not see; error says why
  std::string error;
  int utilization_gpu = -1, utilization_memory = -1;  // percent; -1: not reported
  size_t memory_used = 0, memory_total = 0;           // bytes
  int temperature_c = -1;
  double power_w = -1, power_limit_w = -1;
  int clock_sm_mhz = -1;
  std::vector<ProcessInfo> processes;  // compute processes on the device
};
// The health of CUDA device `device` (NVML device `device` in a build without CUDA; emulated
// devices have none). Never throws for a missing driver or NVML; a negative ordinal, or with NVML
// present one past the CUDA devices, raises "[device_health] invalid device ordinal ...".
DeviceHealth device_health(int device = 0);
// The NVIDIA driver release ("580.65.06") and the number of GPUs NVML sees (whatever this build
// can use); "" and 0 without NVML.
std::string driver_release();
int nvml_device_count();

// The UUID of CUDA device `device` as nvidia-smi prints it ("GPU-3b6f...-..."): the one name that
// is the same for CUDA (after CUDA_VISIBLE_DEVICES) and for NVML.
std::string device_uuid(int device = 0);

// ---- every GPU the NVIDIA driver sees, for `ember smi` -----------------------------------------
// A field the device or driver does not report keeps its "unknown" value (-1, or empty).
struct GpuStatus {
  int index = 0;  // NVML's index: nvidia-smi's numbering (PCI bus order)
  int cuda_device =
      -1;  // this process's CUDA ordinal for the GPU (matched by UUID); -1: not visible
  std::string uuid, name, pci_bus_id;
  std::string error;  // set when NVML lost the device; the metrics below are then unknown
  int utilization_gpu = -1, utilization_memory = -1;  // percent of time the SMs / memory were busy
  size_t memory_used = 0, memory_total = 0;           // bytes
  int temperature_c = -1;
  double power_w = -1, power_limit_w = -1;
  int clock_sm_mhz = -1, clock_memory_mhz = -1;          // now
  int clock_sm_max_mhz = -1, clock_memory_max_mhz = -1;  // the most the board allows
  int pcie_generation = -1, pcie_generation_max = -1, pcie_width = -1, pcie_width_max = -1;
  int nvlinks_active = -1;  // active NVLink links; -1: the board has none or NVML does not say
  bool throttle_known = false;
  std::vector<std::string> throttle_reasons;           // e.g. "sw_power_cap", "hw_thermal_slowdown"
  int ecc_enabled = -1;                                // 1 on, 0 off, -1 not supported
  long long ecc_corrected = -1, ecc_uncorrected = -1;  // volatile counts since the driver loaded
  std::vector<ProcessInfo> processes;  // compute processes; name "" when the process is gone
};
struct GpuSnapshot {
  bool available = false;  // false: no NVML, or NVML refused; error says why
  std::string error;
  bool permission_denied = false;  // NVML answered "insufficient permissions"
  std::string driver_release;
  std::vector<GpuStatus> gpus;  // by NVML index
};
// One reading of every GPU NVML sees. Never throws for a missing driver or NVML.
GpuSnapshot gpu_snapshot();

}  // namespace ember::cuda
