// The host cuDNN for emulated builds: the legacy convolution subset ember calls (handles, tensor,
// filter and convolution descriptors, algorithm queries, workspace sizes, forward, backward data,
// backward filter), compiled against the real cudnn.h so every signature is checked. Descriptors
// are validated as cuDNN does (dims, dtypes, groups, output sizes) and more strictly: a workspace
// smaller than the size reported for the algorithm, an operand outside the emulated device
// memory or an unknown handle is an error. The convolution is a plain reference loop with double
// accumulation, run as stream work so it is ordered, deferred and captured like a kernel.
// clang-format off
// shim_state.h first: it brings in the emulator's CUDA qualifiers before any CUDA header.
#include "shim_state.h"
#include "tf32.h"
// clang-format on

#include "simt/cudnn_shim.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

// The opaque types of cudnn.h, defined here as the shim's own objects.
struct cudnnContext {
  cudaStream_t stream = nullptr;
  int device = 0;
};
struct cudnnTensorStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::array<int, 4> dims{}, strides{};
};
struct cudnnFilterStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  std::array<int, 4> dims{};  // K, C / groups, R, S
};
struct cudnnConvolutionStruct {
  bool set = false;
  std::array<int, 2> pad{}, stride{}, dilation{};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace simt {

namespace {

using detail::to_tf32;

thread_local std::string t_message;
std::atomic<std::uint64_t> g_convs{0};
std::atomic<std::uint64_t> g_finds{0};
std::atomic<int> g_fail_next{CUDNN_STATUS_SUCCESS};
CudnnConvRecord g_last;  // under the shim's mutex

// Live objects, so that a destroyed or made-up handle is refused rather than dereferenced.
std::mutex g_objects_mutex;
std::unordered_set<const void*> g_objects;

template <class T>
cudnnStatus_t create(T** out) {
  if (out == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *out = new T();
  std::lock_guard<std::mutex> lock(g_objects_mutex);
  g_objects.insert(*out);
  return CUDNN_STATUS_SUCCESS;
}
template <class T>
cudnnStatus_t destroy(T* p) {
  {
    std::lock_guard<std::mutex> lock(g_objects_mutex);
    if (p == nullptr || g_objects.erase(p) == 0) return CUDNN_STATUS_BAD_PARAM;
  }
  delete p;
  return CUDNN_STATUS_SUCCESS;
}
bool alive(const void* p) {
  std::lock_guard<std::mutex> lock(g_objects_mutex);
  return p != nullptr && g_objects.count(p) != 0;
}

cudnnStatus_t ok() {
  t_message.clear();
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t fail(cudnnStatus_t status, std::string message) {
  t_message = std::move(message);
  return status;
}
std::string str(std::int64_t v) { return std::to_string(v); }

size_t element_size(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
      return 2;
    case CUDNN_DATA_FLOAT:
      return 4;
    case CUDNN_DATA_DOUBLE:
      return 8;
    default:
      return 0;
  }
}

double load(const void* p, std::int64_t i, cudnnDataType_t t, bool tf32) {
  switch (t) {
    case CUDNN_DATA_HALF:
      return __half2float(static_cast<const __half*>(p)[i]);
    case CUDNN_DATA_BFLOAT16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case CUDNN_DATA_FLOAT: {
      const float v = static_cast<const float*>(p)[i];
      return tf32 ? to_tf32(v) : v;
    }
    default:
      return static_cast<const double*>(p)[i];
  }
}

void store(void* p, std::int64_t i, cudnnDataType_t t, double v) {
  switch (t) {
    case CUDNN_DATA_HALF:
      static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v));
      break;
    case CUDNN_DATA_BFLOAT16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v));
      break;
    case CUDNN_DATA_FLOAT:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    default:
      static_cast<double*>(p)[i] = v;
      break;
  }
}

// [p, p + bytes) must lie in one device allocation of the current device.
bool in_device_memory(const void* p, std::uint64_t bytes) {
  if (bytes == 0) return true;
  auto& allocations = detail::shim().allocations;
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocations.upper_bound(addr);
  if (it == allocations.begin()) return false;
  --it;
  const detail::Allocation& a = it->second;
  return !a.pinned && a.device == detail::current_device() && addr - it->first <= a.size &&
         bytes <= a.size - (addr - it->first);
}

// ---- the problem --------------------------------------------------------------------------------

enum Kind { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

// A validated convolution: x (n, c, h, w) * w (k, c / g, r, s) -> y (n, k, oh, ow).
struct Problem {
  cudnnTensorStruct x, y;
  cudnnFilterStruct w;
  cudnnConvolutionStruct conv;
  bool tf32 = false;
  std::int64_t extent(const cudnnTensorStruct& t) const {
    std::int64_t last = 0;
    for (int i = 0; i < 4; ++i) {
      if (t.dims[i] == 0) return 0;
      last += static_cast<std::int64_t>(t.dims[i] - 1) * t.strides[i];
    }
    return (last + 1) * static_cast<std::int64_t>(element_size(t.type));
  }
  std::int64_t filter_bytes() const {
    return static_cast<std::int64_t>(w.dims[0]) * w.dims[1] * w.dims[2] * w.dims[3] *
           static_cast<std::int64_t>(element_size(w.type));
  }
};

cudnnStatus_t check_tensor(const char* api, const char* name, const cudnnTensorStruct* t) {
  if (!alive(t))
    return fail(CUDNN_STATUS_BAD_PARAM,
                std::string(api) + ": " + name + " is not a live tensor descriptor");
  if (!t->set)
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": " + name + " was never set");
  return CUDNN_STATUS_SUCCESS;
}

// Everything cuDNN checks about (x, w, conv, y), and the output size rule.
cudnnStatus_t validate(const char* api, cudnnHandle_t handle, const cudnnTensorStruct* x,
                       const cudnnFilterStruct* w, const cudnnConvolutionStruct* conv,
                       const cudnnTensorStruct* y, Problem& p) {
  if (!alive(handle)) return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": invalid handle");
  if (const int injected = g_fail_next.exchange(CUDNN_STATUS_SUCCESS)) {
    return fail(static_cast<cudnnStatus_t>(injected), std::string(api) + ": injected failure");
  }
  if (auto s = check_tensor(api, "x", x)) return s;
  if (auto s = check_tensor(api, "y", y)) return s;
  if (!alive(w) || !w->set) {
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": invalid filter descriptor");
  }
  if (!alive(conv) || !conv->set) {
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": invalid convolution descriptor");
  }
  const std::string a = std::string(api) + ": ";
  if (x->type != w->type || y->type != w->type) {
    return fail(CUDNN_STATUS_BAD_PARAM, a + "x, w and y data types differ");
  }
  if (w->format != CUDNN_TENSOR_NCHW) {
    return fail(CUDNN_STATUS_NOT_SUPPORTED, a + "only NCHW filters are emulated");
  }
  const cudnnDataType_t t = x->type;
  const bool compute_ok =
      t == CUDNN_DATA_DOUBLE ? conv->compute == CUDNN_DATA_DOUBLE
      : t == CUDNN_DATA_HALF ? conv->compute == CUDNN_DATA_FLOAT || conv->compute == CUDNN_DATA_HALF
                             : conv->compute == CUDNN_DATA_FLOAT;
  if (!compute_ok)
    return fail(CUDNN_STATUS_NOT_SUPPORTED, a + "unsupported compute type for the data type");
  const int g = conv->groups;
  if (x->dims[0] != y->dims[0])
    return fail(CUDNN_STATUS_BAD_PARAM, a + "x and y batch sizes differ");
  if (x->dims[1] != w->dims[1] * g) {
    return fail(CUDNN_STATUS_BAD_PARAM, a + "x has " + str(x->dims[1]) + " channels, the filter " +
                                            str(w->dims[1]) + " per group x " + str(g) + " groups");
  }
  if (w->dims[0] % g != 0) {
    return fail(CUDNN_STATUS_BAD_PARAM, a + "filter count " + str(w->dims[0]) +
                                            " not divisible by the group count " + str(g));
  }
  if (y->dims[1] != w->dims[0]) {
    return fail(CUDNN_STATUS_BAD_PARAM, a + "y has " + str(y->dims[1]) + " channels, the filter " +
                                            str(w->dims[0]) + " outputs");
  }
  for (int i = 0; i < 2; ++i) {
    const int in = x->dims[2 + i], k = w->dims[2 + i];
    const int span = conv->dilation[i] * (k - 1) + 1;
    const int padded = in + 2 * conv->pad[i];
    const int out = padded < span ? 0 : (padded - span) / conv->stride[i] + 1;
    if (out <= 0 || y->dims[2 + i] != out) {
      return fail(CUDNN_STATUS_BAD_PARAM, a + "y spatial dim " + str(i) + " is " +
                                              str(y->dims[2 + i]) + ", the convolution gives " +
                                              str(out));
    }
  }
  p.x = *x;
  p.y = *y;
  p.w = *w;
  p.conv = *conv;
  // cuDNN's default math may use TF32 tensor cores for float; FMA math never does.
  p.tf32 = t == CUDNN_DATA_FLOAT && conv->math != CUDNN_FMA_MATH;
  return CUDNN_STATUS_SUCCESS;
}

// ---- algorithms ---------------------------------------------------------------------------------

// The algorithms offered per kind, best first: the first needs a workspace (so callers must
// size one), some are nondeterministic (so the deterministic switch has something to avoid).
struct AlgoInfo {
  int algo;
  bool deterministic;
  int workspace_kind;  // 0 none, 1 one float per filter element, 2 the column matrix
};
constexpr AlgoInfo kForwardAlgos[] = {{CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, true, 1},
                                      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, true, 0},
                                      {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, true, 2}};
constexpr AlgoInfo kDataAlgos[] = {{CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, false, 0},
                                   {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, true, 1}};
constexpr AlgoInfo kFilterAlgos[] = {{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, false, 0},
                                     {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, true, 1},
                                     {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, false, 2}};

template <size_t N>
const AlgoInfo* find_algo(const AlgoInfo (&list)[N], int algo) {
  for (const AlgoInfo& a : list)
    if (a.algo == algo) return &a;
  return nullptr;
}

size_t workspace_bytes(const Problem& p, const AlgoInfo& a) {
  if (a.workspace_kind == 0) return 0;
  const size_t filter = static_cast<size_t>(p.filter_bytes());
  if (a.workspace_kind == 1) return filter + 256;
  return static_cast<size_t>(p.x.dims[1]) * p.w.dims[2] * p.w.dims[3] * p.y.dims[2] * p.y.dims[3] *
         element_size(p.x.type);
}

template <class Perf, size_t N>
void fill_perf(const Problem& p, const AlgoInfo (&list)[N], int requested, int* returned,
               Perf* perf) {
  int n = 0;
  for (const AlgoInfo& a : list) {
    if (n >= requested) break;
    Perf r{};
    r.algo = static_cast<decltype(r.algo)>(a.algo);
    r.status = CUDNN_STATUS_SUCCESS;
    r.time = 1.0f + static_cast<float>(n);
    r.memory = workspace_bytes(p, a);
    r.determinism = a.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    r.mathType = p.conv.math;
    perf[n++] = r;
  }
  *returned = n;
}

// ---- the reference loops ------------------------------------------------------------------------

std::int64_t offset(const cudnnTensorStruct& t, int n, int c, int h, int w) {
  return static_cast<std::int64_t>(n) * t.strides[0] + static_cast<std::int64_t>(c) * t.strides[1] +
         static_cast<std::int64_t>(h) * t.strides[2] + static_cast<std::int64_t>(w) * t.strides[3];
}

// Calls f(n, k, oh, ow, c, ih, iw, filter index) for every product term of the convolution.
template <class F>
void for_each_term_of_output(const Problem& p, int n, int k, int oh, int ow, F&& f) {
  const int g = p.conv.groups, cg = p.w.dims[1], kg = p.w.dims[0] / g, R = p.w.dims[2],
            S = p.w.dims[3];
  const int grp = k / kg;
  const bool flip = p.conv.mode == CUDNN_CONVOLUTION;
  for (int c = 0; c < cg; ++c) {
    for (int r = 0; r < R; ++r) {
      const int ih = oh * p.conv.stride[0] - p.conv.pad[0] + r * p.conv.dilation[0];
      if (ih < 0 || ih >= p.x.dims[2]) continue;
      for (int s = 0; s < S; ++s) {
        const int iw = ow * p.conv.stride[1] - p.conv.pad[1] + s * p.conv.dilation[1];
        if (iw < 0 || iw >= p.x.dims[3]) continue;
        const int fr = flip ? R - 1 - r : r, fs = flip ? S - 1 - s : s;
        const std::int64_t wi = ((static_cast<std::int64_t>(k) * cg + c) * R + fr) * S + fs;
        f(grp * cg + c, ih, iw, c, wi);
      }
    }
  }
}

// kind picks which of x, w, y is written (y, x or w); alpha * result + beta * old.
void run_conv(const Problem& p, Kind kind, double alpha, double beta, const void* x, const void* w,
              const void* y, void* out) {
  const cudnnDataType_t t = p.x.type;
  const int N = p.x.dims[0], K = p.w.dims[0], OH = p.y.dims[2], OW = p.y.dims[3];
  auto blend = [&](void* dst, std::int64_t i, double v) {
    store(dst, i, t, alpha * v + (beta != 0.0 ? beta * load(dst, i, t, false) : 0.0));
  };
  if (kind == kForward) {
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow) {
            double acc = 0;
            for_each_term_of_output(
                p, n, k, oh, ow, [&](int c, int ih, int iw, int, std::int64_t wi) {
                  acc += load(x, offset(p.x, n, c, ih, iw), t, p.tf32) * load(w, wi, t, p.tf32);
                });
            blend(out, offset(p.y, n, k, oh, ow), acc);
          }
    return;
  }
  // The backward passes accumulate in double scratch, then blend once per element.
  const bool data = kind == kBackwardData;
  const size_t count = data ? static_cast<size_t>(N) * p.x.dims[1] * p.x.dims[2] * p.x.dims[3]
                            : static_cast<size_t>(p.filter_bytes() / element_size(t));
  std::vector<double> acc(count, 0.0);
  const int C = p.x.dims[1], H = p.x.dims[2], W = p.x.dims[3];
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          const double dy = load(y, offset(p.y, n, k, oh, ow), t, p.tf32);
          for_each_term_of_output(p, n, k, oh, ow,
                                  [&](int c, int ih, int iw, int, std::int64_t wi) {
                                    if (data) {
                                      acc[((static_cast<size_t>(n) * C + c) * H + ih) * W + iw] +=
                                          dy * load(w, wi, t, p.tf32);
                                    } else {
                                      acc[static_cast<size_t>(wi)] +=
                                          dy * load(x, offset(p.x, n, c, ih, iw), t, p.tf32);
                                    }
                                  });
        }
  if (data) {
    for (int n = 0; n < N; ++n)
      for (int c = 0; c < C; ++c)
        for (int h = 0; h < H; ++h)
          for (int ww = 0; ww < W; ++ww)
            blend(out, offset(p.x, n, c, h, ww),
                  acc[((static_cast<size_t>(n) * C + c) * H + h) * W + ww]);
  } else {
    for (size_t i = 0; i < count; ++i) blend(out, static_cast<std::int64_t>(i), acc[i]);
  }
}

// The checks and the submission every execution shares. ptrs: x, w, y as the kind uses them.
cudnnStatus_t execute(const char* api, Kind kind, cudnnHandle_t handle, const Problem& p,
                      const AlgoInfo* algo, const void* alpha, const void* beta, const void* x,
                      const void* w, const void* y, void* out, void* workspace,
                      size_t workspace_size) {
  const std::string a = std::string(api) + ": ";
  if (algo == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, a + "unknown algorithm");
  if (alpha == nullptr || beta == nullptr)
    return fail(CUDNN_STATUS_BAD_PARAM, a + "null alpha or beta");
  const size_t need = workspace_bytes(p, *algo);
  if (workspace_size < need) {
    return fail(CUDNN_STATUS_BAD_PARAM,
                a + "workspace of " + str(static_cast<std::int64_t>(workspace_size)) +
                    " bytes, the algorithm needs " + str(static_cast<std::int64_t>(need)));
  }
  // Scaling factors are double for double data, float otherwise.
  double al, be;
  if (p.x.type == CUDNN_DATA_DOUBLE) {
    std::memcpy(&al, alpha, 8);
    std::memcpy(&be, beta, 8);
  } else {
    float f;
    std::memcpy(&f, alpha, 4);
    al = f;
    std::memcpy(&f, beta, 4);
    be = f;
  }
  detail::Lock lock(detail::shim().mutex);
  if (detail::sticky_error() != cudaSuccess) {
    return fail(CUDNN_STATUS_EXECUTION_FAILED, a + "the device has a sticky error");
  }
  if (handle->device != detail::current_device()) {
    return fail(CUDNN_STATUS_BAD_PARAM, a + "the handle belongs to device " + str(handle->device) +
                                            ", the current device is " +
                                            str(detail::current_device()));
  }
  CUstream_st* s = detail::resolve(handle->stream);
  if (s == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, a + "the handle's stream is not valid");
  const struct {
    const char* name;
    const void* ptr;
    std::int64_t bytes;
  } operands[] = {{"x", x, p.extent(p.x)}, {"w", w, p.filter_bytes()}, {"y", y, p.extent(p.y)}};
  for (const auto& o : operands) {
    if (!in_device_memory(o.ptr, static_cast<std::uint64_t>(o.bytes))) {
      return fail(CUDNN_STATUS_EXECUTION_FAILED,
                  a + o.name + " (" + str(o.bytes) +
                      " bytes) is not inside one allocation of the current device");
    }
  }
  if (!in_device_memory(workspace, workspace_size)) {
    return fail(CUDNN_STATUS_EXECUTION_FAILED, a + "workspace is not device memory");
  }
  CudnnConvRecord rec;
  rec.kind = kind;
  rec.algo = algo->algo;
  rec.math_type = p.conv.math;
  rec.groups = p.conv.groups;
  rec.data_type = p.x.type;
  rec.workspace_bytes = workspace_size;
  const cudaError_t e = detail::submit(
      s,
      [p, kind, al, be, x, w, y, out, rec] {
        run_conv(p, kind, al, be, x, w, y, out);
        g_last = rec;
        ++g_convs;
        return cudaSuccess;
      },
      api);
  if (e != cudaSuccess) return fail(CUDNN_STATUS_EXECUTION_FAILED, a + last_error_message());
  return ok();
}

// Find*Ex runs every algorithm, clobbering its output: the emulation poisons it with NaN.
cudnnStatus_t poison(const char* api, cudnnHandle_t handle, void* out, std::int64_t bytes,
                     void* workspace, size_t workspace_size) {
  detail::Lock lock(detail::shim().mutex);
  CUstream_st* s = detail::resolve(handle->stream);
  if (s == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": invalid stream");
  if (!in_device_memory(out, static_cast<std::uint64_t>(bytes)) ||
      !in_device_memory(workspace, workspace_size)) {
    return fail(CUDNN_STATUS_EXECUTION_FAILED,
                std::string(api) + ": a buffer is not inside one device allocation");
  }
  const cudaError_t e = detail::submit(
      s,
      [out, bytes] {
        std::memset(out, 0xFF, static_cast<size_t>(bytes));
        return cudaSuccess;
      },
      api);
  if (e != cudaSuccess)
    return fail(CUDNN_STATUS_EXECUTION_FAILED, std::string(api) + ": " + last_error_message());
  ++g_finds;
  // Finding is synchronous in cuDNN.
  if (detail::flush(s) != cudaSuccess) return fail(CUDNN_STATUS_EXECUTION_FAILED, api);
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

std::string cudnn_last_message() { return t_message; }
CudnnConvRecord cudnn_last_conv() {
  detail::Lock lock(detail::shim().mutex);
  return g_last;
}
std::uint64_t cudnn_conv_count() { return g_convs.load(); }
std::uint64_t cudnn_find_count() { return g_finds.load(); }
void cudnn_fail_next_call(int status) { g_fail_next.store(status); }

}  // namespace simt

using simt::fail;
using simt::ok;

extern "C" {

// ---- library, handles, errors -------------------------------------------------------------------

size_t cudnnGetVersion(void) { return CUDNN_VERSION; }

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
      return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR:
      return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED:
      return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_ALLOC_FAILED:
      return "CUDNN_STATUS_ALLOC_FAILED";
    default:
      return "CUDNN_STATUS_UNKNOWN";
  }
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (simt::create(handle) != CUDNN_STATUS_SUCCESS)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnCreate: null handle");
  simt::detail::Lock lock(simt::detail::shim().mutex);
  (*handle)->device = simt::detail::current_device();
  return ok();
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) { return simt::destroy(handle); }

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (!simt::alive(handle)) return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: invalid handle");
  simt::detail::Lock lock(simt::detail::shim().mutex);
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: invalid stream");
  if (stream != nullptr && stream != cudaStreamLegacy && s->device != handle->device) {
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetStream: the stream belongs to another device");
  }
  handle->stream = stream;
  return ok();
}

// ---- descriptors --------------------------------------------------------------------------------

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) { return simt::create(d); }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return simt::destroy(d); }

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t d, cudnnDataType_t type,
                                         int nb_dims, const int dims[], const int strides[]) {
  if (!simt::alive(d))
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: invalid descriptor");
  if (nb_dims != 4) {
    return fail(
        CUDNN_STATUS_NOT_SUPPORTED,
        "cudnnSetTensorNdDescriptor: only 4-d tensors are emulated, got " + simt::str(nb_dims));
  }
  if (simt::element_size(type) == 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: unsupported data type");
  for (int i = 0; i < 4; ++i) {
    if (dims[i] <= 0 || strides[i] <= 0) {
      return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetTensorNdDescriptor: dim " + simt::str(i) +
                                              " is " + simt::str(dims[i]) + " with stride " +
                                              simt::str(strides[i]));
    }
  }
  d->type = type;
  std::copy(dims, dims + 4, d->dims.begin());
  std::copy(strides, strides + 4, d->strides.begin());
  d->set = true;
  return ok();
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) { return simt::create(d); }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return simt::destroy(d); }

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int nb_dims,
                                         const int dims[]) {
  if (!simt::alive(d))
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: invalid descriptor");
  if (nb_dims != 4)
    return fail(CUDNN_STATUS_NOT_SUPPORTED,
                "cudnnSetFilterNdDescriptor: only 4-d filters are emulated");
  if (simt::element_size(type) == 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: unsupported data type");
  if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) {
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: bad format");
  }
  for (int i = 0; i < 4; ++i) {
    if (dims[i] <= 0)
      return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetFilterNdDescriptor: non-positive dim");
  }
  d->type = type;
  d->format = format;
  std::copy(dims, dims + 4, d->dims.begin());
  d->set = true;
  return ok();
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  return simt::create(d);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return simt::destroy(d);
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t d, int length,
                                              const int pad[], const int stride[],
                                              const int dilation[], cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  if (!simt::alive(d))
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: invalid descriptor");
  if (length != 2)
    return fail(CUDNN_STATUS_NOT_SUPPORTED,
                "cudnnSetConvolutionNdDescriptor: only 2 spatial dims are emulated");
  for (int i = 0; i < 2; ++i) {
    if (pad[i] < 0 || stride[i] <= 0 || dilation[i] <= 0) {
      return fail(CUDNN_STATUS_BAD_PARAM,
                  "cudnnSetConvolutionNdDescriptor: bad pad, stride or dilation");
    }
  }
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: bad mode");
  }
  if (simt::element_size(compute) == 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionNdDescriptor: bad compute type");
  std::copy(pad, pad + 2, d->pad.begin());
  std::copy(stride, stride + 2, d->stride.begin());
  std::copy(dilation, dilation + 2, d->dilation.begin());
  d->mode = mode;
  d->compute = compute;
  d->set = true;
  return ok();
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (!simt::alive(d) || groups <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionGroupCount: bad descriptor or count");
  d->groups = groups;
  return ok();
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t math) {
  if (!simt::alive(d))
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType: invalid descriptor");
  if (math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH &&
      math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && math != CUDNN_FMA_MATH) {
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnSetConvolutionMathType: bad math type");
  }
  d->math = math;
  return ok();
}

// ---- algorithm queries --------------------------------------------------------------------------

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
    int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
  simt::Problem p;
  if (auto s = simt::validate("cudnnGetConvolutionForwardAlgorithm_v7", handle, x, w, conv, y, p))
    return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetConvolutionForwardAlgorithm_v7: bad output");
  simt::fill_perf(p, simt::kForwardAlgos, requested, returned, perf);
  return ok();
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx, const int requested,
    int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
  simt::Problem p;
  if (auto s =
          simt::validate("cudnnGetConvolutionBackwardDataAlgorithm_v7", handle, dx, w, conv, dy, p))
    return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetConvolutionBackwardDataAlgorithm_v7: bad output");
  simt::fill_perf(p, simt::kDataAlgos, requested, returned, perf);
  return ok();
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw, const int requested,
    int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
  simt::Problem p;
  if (auto s = simt::validate("cudnnGetConvolutionBackwardFilterAlgorithm_v7", handle, x, dw, conv,
                              dy, p))
    return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM,
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7: bad output");
  simt::fill_perf(p, simt::kFilterAlgos, requested, returned, perf);
  return ok();
}

cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnFilterDescriptor_t wd, const void* w, const cudnnConvolutionDescriptor_t conv,
    const cudnnTensorDescriptor_t yd, void* y, const int requested, int* returned,
    cudnnConvolutionFwdAlgoPerf_t* perf, void* workspace, size_t workspace_size) {
  const char* api = "cudnnFindConvolutionForwardAlgorithmEx";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, xd, wd, conv, yd, p)) return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": bad output");
  if (auto s = simt::poison(api, handle, y, p.extent(p.y), workspace, workspace_size)) return s;
  simt::fill_perf(p, simt::kForwardAlgos, requested, returned, perf);
  // Algorithms whose workspace does not fit were not run.
  for (int i = 0; i < *returned; ++i)
    if (perf[i].memory > workspace_size) perf[i].status = CUDNN_STATUS_ALLOC_FAILED;
  return ok();
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wd, const void* w,
    const cudnnTensorDescriptor_t dyd, const void* dy, const cudnnConvolutionDescriptor_t conv,
    const cudnnTensorDescriptor_t dxd, void* dx, const int requested, int* returned,
    cudnnConvolutionBwdDataAlgoPerf_t* perf, void* workspace, size_t workspace_size) {
  const char* api = "cudnnFindConvolutionBackwardDataAlgorithmEx";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, dxd, wd, conv, dyd, p)) return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": bad output");
  if (auto s = simt::poison(api, handle, dx, p.extent(p.x), workspace, workspace_size)) return s;
  simt::fill_perf(p, simt::kDataAlgos, requested, returned, perf);
  for (int i = 0; i < *returned; ++i)
    if (perf[i].memory > workspace_size) perf[i].status = CUDNN_STATUS_ALLOC_FAILED;
  return ok();
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnTensorDescriptor_t dyd, const void* dy, const cudnnConvolutionDescriptor_t conv,
    const cudnnFilterDescriptor_t dwd, void* dw, const int requested, int* returned,
    cudnnConvolutionBwdFilterAlgoPerf_t* perf, void* workspace, size_t workspace_size) {
  const char* api = "cudnnFindConvolutionBackwardFilterAlgorithmEx";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, xd, dwd, conv, dyd, p)) return s;
  if (returned == nullptr || perf == nullptr || requested <= 0)
    return fail(CUDNN_STATUS_BAD_PARAM, std::string(api) + ": bad output");
  if (auto s = simt::poison(api, handle, dw, p.filter_bytes(), workspace, workspace_size)) return s;
  simt::fill_perf(p, simt::kFilterAlgos, requested, returned, perf);
  for (int i = 0; i < *returned; ++i)
    if (perf[i].memory > workspace_size) perf[i].status = CUDNN_STATUS_ALLOC_FAILED;
  return ok();
}

// ---- workspace sizes ----------------------------------------------------------------------------

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
    cudnnConvolutionFwdAlgo_t algo, size_t* size) {
  simt::Problem p;
  if (auto s = simt::validate("cudnnGetConvolutionForwardWorkspaceSize", handle, x, w, conv, y, p))
    return s;
  const simt::AlgoInfo* a = simt::find_algo(simt::kForwardAlgos, algo);
  if (a == nullptr || size == nullptr)
    return fail(CUDNN_STATUS_BAD_PARAM, "cudnnGetConvolutionForwardWorkspaceSize: bad algorithm");
  *size = simt::workspace_bytes(p, *a);
  return ok();
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t dx,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* size) {
  simt::Problem p;
  if (auto s = simt::validate("cudnnGetConvolutionBackwardDataWorkspaceSize", handle, dx, w, conv,
                              dy, p))
    return s;
  const simt::AlgoInfo* a = simt::find_algo(simt::kDataAlgos, algo);
  if (a == nullptr || size == nullptr)
    return fail(CUDNN_STATUS_BAD_PARAM,
                "cudnnGetConvolutionBackwardDataWorkspaceSize: bad algorithm");
  *size = simt::workspace_bytes(p, *a);
  return ok();
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t conv, const cudnnFilterDescriptor_t dw,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t* size) {
  simt::Problem p;
  if (auto s = simt::validate("cudnnGetConvolutionBackwardFilterWorkspaceSize", handle, x, dw, conv,
                              dy, p))
    return s;
  const simt::AlgoInfo* a = simt::find_algo(simt::kFilterAlgos, algo);
  if (a == nullptr || size == nullptr)
    return fail(CUDNN_STATUS_BAD_PARAM,
                "cudnnGetConvolutionBackwardFilterWorkspaceSize: bad algorithm");
  *size = simt::workspace_bytes(p, *a);
  return ok();
}

// ---- execution ----------------------------------------------------------------------------------

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xd, const void* x,
                                      const cudnnFilterDescriptor_t wd, const void* w,
                                      const cudnnConvolutionDescriptor_t conv,
                                      cudnnConvolutionFwdAlgo_t algo, void* workspace,
                                      size_t workspace_size, const void* beta,
                                      const cudnnTensorDescriptor_t yd, void* y) {
  const char* api = "cudnnConvolutionForward";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, xd, wd, conv, yd, p)) return s;
  return simt::execute(api, simt::kForward, handle, p, simt::find_algo(simt::kForwardAlgos, algo),
                       alpha, beta, x, w, y, y, workspace, workspace_size);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t wd, const void* w,
                                           const cudnnTensorDescriptor_t dyd, const void* dy,
                                           const cudnnConvolutionDescriptor_t conv,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workspace,
                                           size_t workspace_size, const void* beta,
                                           const cudnnTensorDescriptor_t dxd, void* dx) {
  const char* api = "cudnnConvolutionBackwardData";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, dxd, wd, conv, dyd, p)) return s;
  return simt::execute(api, simt::kBackwardData, handle, p, simt::find_algo(simt::kDataAlgos, algo),
                       alpha, beta, dx, w, dy, dx, workspace, workspace_size);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xd, const void* x,
                                             const cudnnTensorDescriptor_t dyd, const void* dy,
                                             const cudnnConvolutionDescriptor_t conv,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workspace,
                                             size_t workspace_size, const void* beta,
                                             const cudnnFilterDescriptor_t dwd, void* dw) {
  const char* api = "cudnnConvolutionBackwardFilter";
  simt::Problem p;
  if (auto s = simt::validate(api, handle, xd, dwd, conv, dyd, p)) return s;
  return simt::execute(api, simt::kBackwardFilter, handle, p,
                       simt::find_algo(simt::kFilterAlgos, algo), alpha, beta, x, dw, dy, dw,
                       workspace, workspace_size);
}

}  // extern "C"
