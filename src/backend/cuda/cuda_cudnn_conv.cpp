// Convolution through cuDNN's legacy API (forward, backward data, backward filter), as PyTorch
// does it: one handle per device and thread bound to the current stream, the workspace from the
// caching allocator, the algorithm from cuDNN's heuristic or, with benchmark on, timed once per
// (shapes, dtype, parameters) and cached. Returns false (the op layer then uses im2col) when
// cuDNN is disabled, absent, or cannot express the operands.
#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/cudnn_api.h"
#include "core/switches.h"
#include "ember/backends.h"
#include "ember/cuda.h"

namespace ember {

#ifndef EMBER_WITH_CUDNN

bool CudaBackend::conv2d_forward(const char*, const Tensor&, const Tensor&, const Tensor&,
                                 const Window2d&, int64_t, double) {
  return false;
}
bool CudaBackend::conv2d_backward_input(const char*, const Tensor&, const Tensor&, const Tensor&,
                                        const Window2d&, int64_t) {
  return false;
}
bool CudaBackend::conv2d_backward_weight(const char*, const Tensor&, const Tensor&, const Tensor&,
                                         const Window2d&, int64_t) {
  return false;
}

#else

namespace {

using cuda_detail::CudnnApi;
using cuda_detail::current_stream;
using cuda_detail::device_index;

// ---- checked calls ------------------------------------------------------------------------------

[[noreturn]] void throw_cudnn(const CudnnApi& api, const char* op, cudnnStatus_t status,
                              const char* call) {
  throw Error(std::string("[") + op + "] cuDNN: " + api.GetErrorString(status) + " (in " + call +
              ")");
}

#define EMBER_CUDNN_CHECK(call)                                                            \
  do {                                                                                     \
    const cudnnStatus_t ember_status_ = (call);                                            \
    if (ember_status_ != CUDNN_STATUS_SUCCESS) throw_cudnn(api, op, ember_status_, #call); \
  } while (0)

// ---- handles: one per device and thread ---------------------------------------------------------

// Handles of threads that ended, reused by new threads (cuDNN handles are costly to create).
struct HandlePool {
  std::mutex mu;
  std::map<int, std::vector<cudnnHandle_t>> free;
};
HandlePool& handle_pool() {
  static auto* pool = new HandlePool();
  return *pool;
}

struct ThreadHandles {
  std::map<int, cudnnHandle_t> by_device;
  ~ThreadHandles() {
    HandlePool& pool = handle_pool();
    std::lock_guard<std::mutex> lock(pool.mu);
    for (auto& [device, h] : by_device) pool.free[device].push_back(h);
  }
};

// The calling thread's handle for the current device, bound to the current stream.
cudnnHandle_t thread_handle(const CudnnApi& api, const char* op, int device) {
  thread_local ThreadHandles mine;
  cudnnHandle_t& h = mine.by_device[device];
  if (h == nullptr) {
    HandlePool& pool = handle_pool();
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      auto& free = pool.free[device];
      if (!free.empty()) {
        h = free.back();
        free.pop_back();
      }
    }
    if (h == nullptr) EMBER_CUDNN_CHECK(api.Create(&h));
  }
  EMBER_CUDNN_CHECK(api.SetStream(h, current_stream(device)));
  return h;
}

// ---- descriptors --------------------------------------------------------------------------------

enum class Kind { Forward, BackwardData, BackwardFilter };

// The descriptors of one convolution: x (n, c, h, w), w (o, c / groups, kh, kw), y (n, o, oh, ow).
struct Descriptors {
  const CudnnApi& api;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  explicit Descriptors(const CudnnApi& a) : api(a) {}
  ~Descriptors() {
    if (conv) api.DestroyConvolutionDescriptor(conv);
    if (w) api.DestroyFilterDescriptor(w);
    if (y) api.DestroyTensorDescriptor(y);
    if (x) api.DestroyTensorDescriptor(x);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
};

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case kFloat16:
      return CUDNN_DATA_HALF;
    case kBFloat16:
      return CUDNN_DATA_BFLOAT16;
    case kFloat64:
      return CUDNN_DATA_DOUBLE;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

// Half and bfloat16 use tensor cores with float accumulation; float uses TensorFloat-32 only
// when set_float32_matmul_precision allows it (FMA math otherwise), as the matmul path does.
cudnnMathType_t math_type(DType t) {
  if (t == kFloat16 || t == kBFloat16) return CUDNN_TENSOR_OP_MATH;
  if (t == kFloat32) {
    return float32_matmul_precision() == MatmulPrecision::Highest ? CUDNN_FMA_MATH
                                                                  : CUDNN_DEFAULT_MATH;
  }
  return CUDNN_DEFAULT_MATH;
}

// The problem as plain numbers: the cache key and everything the descriptors need.
struct Problem {
  int n, c, h, w, o, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  DType dtype;
  int device;
};

void set_tensor(const CudnnApi& api, const char* op, cudnnTensorDescriptor_t d, DType t, int n,
                int c, int h, int w) {
  const int dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1};
  EMBER_CUDNN_CHECK(api.SetTensorNdDescriptor(d, data_type(t), 4, dims, strides));
}

void describe(const CudnnApi& api, const char* op, const Problem& p, Descriptors& d) {
  EMBER_CUDNN_CHECK(api.CreateTensorDescriptor(&d.x));
  EMBER_CUDNN_CHECK(api.CreateTensorDescriptor(&d.y));
  EMBER_CUDNN_CHECK(api.CreateFilterDescriptor(&d.w));
  EMBER_CUDNN_CHECK(api.CreateConvolutionDescriptor(&d.conv));
  set_tensor(api, op, d.x, p.dtype, p.n, p.c, p.h, p.w);
  set_tensor(api, op, d.y, p.dtype, p.n, p.o, p.oh, p.ow);
  const int wdims[4] = {p.o, p.c / p.groups, p.kh, p.kw};
  EMBER_CUDNN_CHECK(
      api.SetFilterNdDescriptor(d.w, data_type(p.dtype), CUDNN_TENSOR_NCHW, 4, wdims));
  const int pad[2] = {p.ph, p.pw}, stride[2] = {p.sh, p.sw}, dil[2] = {p.dh, p.dw};
  const cudnnDataType_t compute = p.dtype == kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  EMBER_CUDNN_CHECK(api.SetConvolutionNdDescriptor(d.conv, 2, pad, stride, dil,
                                                   CUDNN_CROSS_CORRELATION, compute));
  EMBER_CUDNN_CHECK(api.SetConvolutionGroupCount(d.conv, p.groups));
  EMBER_CUDNN_CHECK(api.SetConvolutionMathType(d.conv, math_type(p.dtype)));
}

// ---- algorithm choice ---------------------------------------------------------------------------

struct Choice {
  int algo = -1;  // -1: no usable algorithm
  size_t workspace = 0;
};

using Key = std::array<int64_t, 22>;
Key make_key(const Problem& p, Kind kind, bool benchmark, bool deterministic) {
  return {static_cast<int64_t>(kind),
          p.device,
          static_cast<int64_t>(p.dtype),
          p.n,
          p.c,
          p.h,
          p.w,
          p.o,
          p.oh,
          p.ow,
          p.kh,
          p.kw,
          p.sh,
          p.sw,
          p.ph,
          p.pw,
          p.dh,
          p.dw,
          p.groups,
          static_cast<int64_t>(math_type(p.dtype)),
          benchmark,
          deterministic};
}

struct AlgoCache {
  std::mutex mu;
  std::map<Key, Choice> choices;
};
AlgoCache& algo_cache() {
  static auto* cache = new AlgoCache();
  return *cache;
}

constexpr int kMaxAlgos = 16;
// Benchmarking tries algorithms with workspaces up to this size.
constexpr size_t kMaxBenchmarkWorkspace = size_t{1} << 30;

Tensor device_bytes(size_t bytes, int device) {
  return make_empty({static_cast<int64_t>(bytes)}, kUInt8, Device(kCUDA, device));
}

// The first algorithm of perf (best first) that ran and, if asked, is deterministic.
template <class Perf>
int pick(const Perf* perf, int count, bool deterministic) {
  for (int i = 0; i < count; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (deterministic && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
    return static_cast<int>(perf[i].algo);
  }
  return -1;
}

// get(perf, &count): the heuristic's list; find(perf, &count, ws, bytes): the timed list;
// size(algo, &bytes): the workspace of one algorithm.
template <class Perf, class Get, class Find, class Size>
Choice choose(const Problem& p, Kind kind, Get get, Find find, Size size) {
  const bool bench = backends::cudnn::benchmark(), det = backends::cudnn::deterministic();
  const Key key = make_key(p, kind, bench, det);
  AlgoCache& cache = algo_cache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.choices.find(key);
    if (it != cache.choices.end()) return it->second;
  }
  Perf perf[kMaxAlgos];
  int count = 0;
  get(perf, &count);
  if (bench) {
    size_t most = 0;
    for (int i = 0; i < count; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxBenchmarkWorkspace) {
        most = std::max(most, perf[i].memory);
      }
    }
    Tensor ws;
    try {
      if (most > 0) ws = device_bytes(most, p.device);
    } catch (const OutOfMemoryError&) {
      most = 0;  // time only the algorithms that need no workspace
    }
    find(perf, &count, ws.defined() ? ws.data_ptr() : nullptr, ws.defined() ? most : 0);
  }
  Choice c;
  c.algo = pick(perf, count, det);
  if (c.algo >= 0) size(c.algo, &c.workspace);
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.choices[key] = c;
  return c;
}

// ---- when cuDNN applies -------------------------------------------------------------------------

bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// The operands as a Problem, or false when cuDNN is off, absent, or cannot express them.
bool problem_of(const Tensor& x, const Tensor& w, const Tensor& y, const Window2d& g,
                int64_t groups, Problem& p) {
  if (!backends::cudnn::enabled()) return false;
  if (cuda_detail::cudnn_api() == nullptr) return false;
  const DType t = x.dtype();
  if (t != kFloat32 && t != kFloat16 && t != kBFloat16 && t != kFloat64) return false;
  if (x.numel() == 0 || w.numel() == 0 || y.numel() == 0) return false;
  for (const Tensor* tensor : {&x, &w, &y}) {
    if (!fits_int(tensor->numel())) return false;
    // cuDNN's heuristics assume aligned operands (vector loads); a view starting mid-vector
    // (a sliced batch) takes the im2col path instead.
    if (reinterpret_cast<uintptr_t>(tensor->data_ptr()) % 16 != 0) return false;
  }
  // cuDNN pads both sides alike: the output size must follow from the top/left padding alone
  // (not so for asymmetric "same" padding, or a transposed output_padding beyond the stride).
  const int64_t eh = g.dh * (g.kh - 1) + 1, ew = g.dw * (g.kw - 1) + 1;
  const int64_t padded_h = g.in_h + 2 * g.ph, padded_w = g.in_w + 2 * g.pw;
  if (padded_h < eh || padded_w < ew) return false;
  if ((padded_h - eh) / g.sh + 1 != g.out_h || (padded_w - ew) / g.sw + 1 != g.out_w) return false;
  for (int64_t v : {g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, groups}) {
    if (!fits_int(v)) return false;
  }
  p.n = static_cast<int>(x.size(0));
  p.c = static_cast<int>(x.size(1));
  p.h = static_cast<int>(g.in_h);
  p.w = static_cast<int>(g.in_w);
  p.o = static_cast<int>(w.size(0));
  p.oh = static_cast<int>(g.out_h);
  p.ow = static_cast<int>(g.out_w);
  p.kh = static_cast<int>(g.kh);
  p.kw = static_cast<int>(g.kw);
  p.sh = static_cast<int>(g.sh);
  p.sw = static_cast<int>(g.sw);
  p.ph = static_cast<int>(g.ph);
  p.pw = static_cast<int>(g.pw);
  p.dh = static_cast<int>(g.dh);
  p.dw = static_cast<int>(g.dw);
  p.groups = static_cast<int>(groups);
  p.dtype = t;
  p.device = device_index(x.device());
  return true;
}

// alpha and beta as cuDNN reads them: double for double data, float otherwise.
struct Scale {
  float f[2];
  double d[2];
  const void* alpha(DType t) const {
    return t == kFloat64 ? static_cast<const void*>(&d[0]) : &f[0];
  }
  const void* beta(DType t) const {
    return t == kFloat64 ? static_cast<const void*>(&d[1]) : &f[1];
  }
};
Scale scale(double alpha, double beta) {
  return {{static_cast<float>(alpha), static_cast<float>(beta)}, {alpha, beta}};
}

// A failed call of one pass's entry point, named as cuDNN names it: prefix + pass + suffix.
void check_pass(const CudnnApi& api, const char* op, cudnnStatus_t status, const char* prefix,
                const char* pass, const char* suffix) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  throw_cudnn(api, op, status, (std::string("cudnn") + prefix + pass + suffix).c_str());
}

// One pass of cuDNN's legacy API, X = Forward, BackwardData or BackwardFilter: its entry points
// cudnnGetConvolutionXAlgorithm_v7 (get), cudnnFindConvolutionXAlgorithmEx (find),
// cudnnGetConvolutionXWorkspaceSize (size) and cudnnConvolutionX (run) all take the descriptors
// of the pass's two inputs a and b, of the convolution and of its output, in that order; descs
// picks those three from the problem's descriptors. out = conv-pass(a, b) + beta * out.
template <class Perf, class Algo, class Descs, class Get, class Find, class Size, class Run>
bool run_pass(const char* op, const Problem& p, Kind kind, const char* pass, Descs descs, Get get,
              Find find, Size size, Run run, const Tensor& a, const Tensor& b, const Tensor& out,
              double beta) {
  const CudnnApi& api = *cuda_detail::cudnn_api();
  cuda::DeviceGuard guard(p.device);
  cudnnHandle_t h = thread_handle(api, op, p.device);
  Descriptors d(api);
  describe(api, op, p, d);
  const auto [da, db, dout] = descs(d);
  const Choice c = choose<Perf>(
      p, kind,
      [&](Perf* perf, int* n) {
        check_pass(api, op, get(h, da, db, d.conv, dout, kMaxAlgos, n, perf), "GetConvolution",
                   pass, "Algorithm_v7");
      },
      [&](Perf* perf, int* n, void* ws, size_t bytes) {
        // Finding writes its output: time the algorithms on scratch memory.
        Tensor scratch = make_empty(out.sizes(), out.dtype(), out.device());
        check_pass(api, op,
                   find(h, da, a.data_ptr(), db, b.data_ptr(), d.conv, dout, scratch.data_ptr(),
                        kMaxAlgos, n, perf, ws, bytes),
                   "FindConvolution", pass, "AlgorithmEx");
      },
      [&](int algo, size_t* bytes) {
        check_pass(api, op, size(h, da, db, d.conv, dout, static_cast<Algo>(algo), bytes),
                   "GetConvolution", pass, "WorkspaceSize");
      });
  if (c.algo < 0) return false;
  Tensor ws = c.workspace > 0 ? device_bytes(c.workspace, p.device) : Tensor();
  const Scale s = scale(1.0, beta);
  check_pass(api, op,
             run(h, s.alpha(p.dtype), da, a.data_ptr(), db, b.data_ptr(), d.conv,
                 static_cast<Algo>(c.algo), ws.defined() ? ws.data_ptr() : nullptr, c.workspace,
                 s.beta(p.dtype), dout, out.data_ptr()),
             "Convolution", pass, "");
  return true;
}

}  // namespace

// ---- the three passes ---------------------------------------------------------------------------

// y = conv(x, w) + beta * y.
bool CudaBackend::conv2d_forward(const char* op, const Tensor& y, const Tensor& x, const Tensor& w,
                                 const Window2d& g, int64_t groups, double beta) {
  Problem p;
  if (!problem_of(x, w, y, g, groups, p)) return false;
  const CudnnApi& api = *cuda_detail::cudnn_api();
  return run_pass<cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgo_t>(
      op, p, Kind::Forward, "Forward",
      [](const Descriptors& d) { return std::tuple(d.x, d.w, d.y); },
      api.GetConvolutionForwardAlgorithm_v7, api.FindConvolutionForwardAlgorithmEx,
      api.GetConvolutionForwardWorkspaceSize, api.ConvolutionForward, x, w, y, beta);
}

// gx = the gradient of conv(x, w) with respect to x: a pass over (w, gy).
bool CudaBackend::conv2d_backward_input(const char* op, const Tensor& gx, const Tensor& gy,
                                        const Tensor& w, const Window2d& g, int64_t groups) {
  Problem p;
  if (!problem_of(gx, w, gy, g, groups, p)) return false;
  const CudnnApi& api = *cuda_detail::cudnn_api();
  return run_pass<cudnnConvolutionBwdDataAlgoPerf_t, cudnnConvolutionBwdDataAlgo_t>(
      op, p, Kind::BackwardData, "BackwardData",
      [](const Descriptors& d) { return std::tuple(d.w, d.y, d.x); },
      api.GetConvolutionBackwardDataAlgorithm_v7, api.FindConvolutionBackwardDataAlgorithmEx,
      api.GetConvolutionBackwardDataWorkspaceSize, api.ConvolutionBackwardData, w, gy, gx, 0.0);
}

// gw = the gradient with respect to w, summed over the batch: a pass over (x, gy).
bool CudaBackend::conv2d_backward_weight(const char* op, const Tensor& gw, const Tensor& gy,
                                         const Tensor& x, const Window2d& g, int64_t groups) {
  Problem p;
  if (!problem_of(x, gw, gy, g, groups, p)) return false;
  const CudnnApi& api = *cuda_detail::cudnn_api();
  return run_pass<cudnnConvolutionBwdFilterAlgoPerf_t, cudnnConvolutionBwdFilterAlgo_t>(
      op, p, Kind::BackwardFilter, "BackwardFilter",
      [](const Descriptors& d) { return std::tuple(d.x, d.y, d.w); },
      api.GetConvolutionBackwardFilterAlgorithm_v7, api.FindConvolutionBackwardFilterAlgorithmEx,
      api.GetConvolutionBackwardFilterWorkspaceSize, api.ConvolutionBackwardFilter, x, gy, gw, 0.0);
}

#endif  // EMBER_WITH_CUDNN

}  // namespace ember
