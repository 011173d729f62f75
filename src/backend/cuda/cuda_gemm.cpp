// CUDA matmul: floating dtypes through cuBLASLt (row-major tensors described as column-major
// matrices; transposed views become op flags, batches strided batch layouts), integers and k == 0
// through the tiled kernel, which also takes every product when cuBLASLt cannot be loaded. A copy
// to contiguous happens only when a layout has no BLAS form.
// A bias over the output's columns (linear's) is fused into the product as cuBLASLt's bias
// epilogue.
#include <cublasLt.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/cublaslt_api.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/gemm_kernels.h"
#include "backend/matrix_layout.h"
#include "core/switches.h"
#include "ember/cuda.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_kernels::GemmMat;

// ---- checked cuBLASLt calls ---------------------------------------------------------------------

// The loaded cuBLASLt; only called once has_lt() said it is there.
const cuda_detail::CublasLtApi& lt() { return *cuda_detail::cublaslt_api(); }

// Whether cuBLASLt is loaded; the first time it is not, says once on stderr that CUDA products
// take the (slower) tiled kernel, and why.
bool has_lt() {
  if (cuda_detail::cublaslt_api() != nullptr) return true;
  static const bool warned = [] {
    std::fprintf(stderr,
                 "ember: warning: [matmul] cuBLASLt is not available (%s): CUDA matrix products "
                 "use ember's tiled kernel, several times slower. Install NVIDIA's libcublas "
                 "(libcublasLt.so.13) or point EMBER_CUBLASLT_LIBRARY at it.\n",
                 cuda_detail::cublaslt_missing_reason().c_str());
    return true;
  }();
  (void)warned;
  return false;
}

[[noreturn]] void throw_cublas(cublasStatus_t status, const char* call) {
  throw Error(std::string("[matmul] ") + call + " failed: " + lt().GetStatusName(status) + " (" +
              lt().GetStatusString(status) + ")");
}

#define EMBER_CUBLAS_CHECK(call)                                                    \
  do {                                                                              \
    const cublasStatus_t ember_status_ = (call);                                    \
    if (ember_status_ != CUBLAS_STATUS_SUCCESS) throw_cublas(ember_status_, #call); \
  } while (0)

// One cuBLASLt handle per device, created on first use and kept for the process (a handle holds
// no stream, so threads share it).
cublasLtHandle_t lt_handle(int device) {
  static std::mutex mu;
  static auto* handles = new std::vector<cublasLtHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  if (handles->empty()) handles->resize(static_cast<size_t>(cuda::device_count()), nullptr);
  cublasLtHandle_t& h = (*handles)[static_cast<size_t>(device)];
  if (h == nullptr) EMBER_CUBLAS_CHECK(lt().Create(&h));
  return h;
}

// RAII owners of the descriptors of one call.
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { lt().MatmulDescDestroy(d); }
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { lt().MatrixLayoutDestroy(l); }
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { lt().MatmulPreferenceDestroy(p); }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter>;
using MatrixLayout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, DescDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, DescDeleter>;

template <class T>
void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T value) {
  EMBER_CUBLAS_CHECK(lt().MatmulDescSetAttribute(d, attr, &value, sizeof value));
}
template <class T>
void set_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T value) {
  EMBER_CUBLAS_CHECK(lt().MatrixLayoutSetAttribute(l, attr, &value, sizeof value));
}
template <class T>
void set_attr(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, T value) {
  EMBER_CUBLAS_CHECK(lt().MatmulPreferenceSetAttribute(p, attr, &value, sizeof value));
}

// ---- operand geometry ---------------------------------------------------------------------------

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

// The shared layout, limited to what cuBLASLt's 32-bit sizes describe.
BlasLayout lt_layout(const Mat& m) {
  BlasLayout l = blas_layout(m);
  if (m.rows > kIntMax || m.cols > kIntMax || m.bs < 0) l.ok = false;
  return l;
}

// An operand handed to cuBLASLt: layout (column-major rows x cols, ld) and the op that turns it
// into the matrix the product needs.
struct LtOperand {
  cublasOperation_t op;
  uint64_t rows, cols;
  int64_t ld;
};

// The column-major operand equal to m (transpose = false) or to m^T (transpose = true).
LtOperand lt_operand(const Mat& m, const BlasLayout& l, bool transpose) {
  const auto r = static_cast<uint64_t>(m.rows), c = static_cast<uint64_t>(m.cols);
  // Row-major memory is m^T in column-major terms; column-major memory is m.
  if (!l.trans) return {transpose ? CUBLAS_OP_N : CUBLAS_OP_T, c, r, l.ld};
  return {transpose ? CUBLAS_OP_T : CUBLAS_OP_N, r, c, l.ld};
}

MatrixLayout make_layout(cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch,
                         int64_t batch_stride) {
  cublasLtMatrixLayout_t l = nullptr;
  EMBER_CUBLAS_CHECK(lt().MatrixLayoutCreate(&l, type, rows, cols, ld));
  MatrixLayout owned(l);
  if (batch > 1) {
    set_attr(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(batch));
    set_attr(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
  }
  return owned;
}

// The largest power of two (<= 256) dividing the address: what cuBLASLt may assume of it.
uint32_t alignment_of(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && addr % a != 0) a /= 2;
  return a;
}

// Workspace cuBLASLt may use: what PyTorch gives it on sm_90 (32 MiB); others 4 MiB.
size_t workspace_limit(int device) {
  int major = 0;
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major >= 9 ? (size_t{32} << 20) : (size_t{4} << 20);
}

// out = alpha * a @ b + beta * out through cuBLASLt. All three have BLAS layouts; out's matrices
// do not overlap. A non-null bias (out.cols elements of dtype, out row-major, batch 1) is added
// to every row of out by the epilogue.
void lt_gemm(int device, DType dtype, const Mat& out, const BlasLayout& lo, const Mat& a,
             const BlasLayout& la, const Mat& b, const BlasLayout& lb, int64_t batch, double alpha,
             double beta, const void* bias = nullptr) {
  cudaDataType type;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType scale = CUDA_R_32F;
  switch (dtype) {
    case kFloat16:
      type = CUDA_R_16F;
      break;
    case kBFloat16:
      type = CUDA_R_16BF;
      break;
    case kFloat32:
      type = CUDA_R_32F;
      if (float32_matmul_precision() != MatmulPrecision::Highest) {
        compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      }
      break;
    case kFloat64:
      type = CUDA_R_64F;
      compute = CUBLAS_COMPUTE_64F;
      scale = CUDA_R_64F;
      break;
    default:
      throw NotImplementedError("[matmul] no cuBLASLt path for dtype " +
                                std::string(dtype_name(dtype)));
  }
  // Row-major out (n x m) is the column-major D = out^T = b^T a^T; column-major out is D = a b.
  const Mat* first = !lo.trans ? &b : &a;
  const Mat* second = !lo.trans ? &a : &b;
  const LtOperand A = lt_operand(*first, !lo.trans ? lb : la, !lo.trans);
  const LtOperand B = lt_operand(*second, !lo.trans ? la : lb, !lo.trans);
  const auto d_rows = static_cast<uint64_t>(!lo.trans ? out.cols : out.rows);
  const auto d_cols = static_cast<uint64_t>(!lo.trans ? out.rows : out.cols);

  cublasLtMatmulDesc_t desc_raw = nullptr;
  EMBER_CUBLAS_CHECK(lt().MatmulDescCreate(&desc_raw, compute, scale));
  MatmulDesc desc(desc_raw);
  set_attr(desc_raw, CUBLASLT_MATMUL_DESC_TRANSA, static_cast<int32_t>(A.op));
  set_attr(desc_raw, CUBLASLT_MATMUL_DESC_TRANSB, static_cast<int32_t>(B.op));
  if (bias != nullptr) {
    // cuBLASLt's bias runs over the rows of its column-major D = out^T: out's columns, the
    // output features of x @ W^T. The heuristic reads the pointer's alignment, so set it first.
    set_attr(desc_raw, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set_attr(desc_raw, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    set_attr(desc_raw, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(type));
  }
  MatrixLayout la_desc = make_layout(type, A.rows, A.cols, A.ld, batch, first->bs);
  MatrixLayout lb_desc = make_layout(type, B.rows, B.cols, B.ld, batch, second->bs);
  MatrixLayout ld_desc = make_layout(type, d_rows, d_cols, lo.ld, batch, out.bs);

  cublasLtMatmulPreference_t pref_raw = nullptr;
  EMBER_CUBLAS_CHECK(lt().MatmulPreferenceCreate(&pref_raw));
  Preference pref(pref_raw);
  set_attr(pref_raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
           static_cast<uint64_t>(workspace_limit(device)));
  // Sliced views may start anywhere: let the heuristic know how aligned each operand is.
  set_attr(pref_raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(first->base));
  set_attr(pref_raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(second->base));
  set_attr(pref_raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(out.base));
  set_attr(pref_raw, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(out.base));

  cublasLtHandle_t handle = lt_handle(device);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  EMBER_CUBLAS_CHECK(lt().MatmulAlgoGetHeuristic(handle, desc.get(), la_desc.get(), lb_desc.get(),
                                                 ld_desc.get(), ld_desc.get(), pref.get(), 1,
                                                 &heuristic, &found));
  if (found == 0) {
    std::ostringstream os;
    os << "[matmul] cuBLASLt has no algorithm for " << dtype_name(dtype) << " (" << out.rows << ", "
       << a.cols << ") @ (" << a.cols << ", " << out.cols << ") x " << batch;
    throw Error(os.str());
  }
  // The workspace comes from the caching allocator and returns to it when the call is queued:
  // later work on the same stream is ordered after the matmul.
  Tensor workspace;
  if (heuristic.workspaceSize > 0) {
    workspace = make_empty({static_cast<int64_t>(heuristic.workspaceSize)},
                           TensorOptions().dtype(kUInt8).device(Device(kCUDA, device)));
  }
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = scale == CUDA_R_64F ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = scale == CUDA_R_64F ? static_cast<const void*>(&beta) : &beta_f;
  EMBER_CUBLAS_CHECK(lt().Matmul(handle, desc.get(), alpha_p, first->base, la_desc.get(),
                                 second->base, lb_desc.get(), beta_p, out.base, ld_desc.get(),
                                 out.base, ld_desc.get(), &heuristic.algo,
                                 workspace.defined() ? workspace.data_ptr() : nullptr,
                                 heuristic.workspaceSize, current_stream(device)));
}

bool is_lt_dtype(DType t) {
  return t == kFloat16 || t == kBFloat16 || t == kFloat32 || t == kFloat64;
}

GemmMat gemm_mat(const Mat& m) { return {m.base, m.bs, m.rs, m.cs}; }

}  // namespace

void CudaBackend::gemm(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t, double alpha,
                       double beta) {
  if (out_t.dim() != 3 || a_t.dim() != 3 || b_t.dim() != 3 || a_t.size(0) != out_t.size(0) ||
      b_t.size(0) != out_t.size(0) || a_t.size(1) != out_t.size(1) ||
      b_t.size(2) != out_t.size(2) || a_t.size(2) != b_t.size(1)) {
    std::ostringstream os;
    os << "[matmul] gemm expects out (B, n, m), a (B, n, k), b (B, k, m), got " << out_t.sizes()
       << ", " << a_t.sizes() << " and " << b_t.sizes();
    throw ValueError(os.str());
  }
  const DType dtype = out_t.dtype();
  if (a_t.dtype() != dtype || b_t.dtype() != dtype) {
    throw TypeError("[matmul] gemm operands must share one dtype, got " +
                    std::string(dtype_name(dtype)) + ", " + std::string(dtype_name(a_t.dtype())) +
                    " and " + std::string(dtype_name(b_t.dtype())));
  }
  if (dtype == kBool) throw NotImplementedError("[matmul] not implemented for dtype bool");
  if (out_t.numel() == 0) return;
  const int device = device_index(out_t.device());
  cuda::DeviceGuard guard(device);
  int64_t batch = out_t.size(0);
  const int64_t k = a_t.size(2);

  // Integers, k == 0 (out = beta * out), sizes beyond cuBLASLt's int32 dimensions, and every
  // product when cuBLASLt is absent go to the tiled kernel, which takes any strides.
  const bool lt_sizes = out_t.size(1) <= kIntMax && out_t.size(2) <= kIntMax && k <= kIntMax;
  if (!is_lt_dtype(dtype) || k == 0 || !lt_sizes || !has_lt()) {
    EMBER_CUDA_CHECK(cuda_kernels::gemm_tiled(
        dtype, gemm_mat(mat_of(out_t)), gemm_mat(mat_of(a_t)), gemm_mat(mat_of(b_t)), batch,
        out_t.size(1), out_t.size(2), k, alpha, beta, current_stream(device)));
    return;
  }

  // Operands without a BLAS layout (both strides non-unit, overlapping rows) are packed.
  Tensor a_c = a_t, b_c = b_t;
  if (!lt_layout(mat_of(a_c)).ok) a_c = a_t.contiguous();
  if (!lt_layout(mat_of(b_c)).ok) b_c = b_t.contiguous();
  Mat out = mat_of(out_t), a = mat_of(a_c), b = mat_of(b_c);
  // An output cuBLASLt cannot write in place is computed into a contiguous buffer.
  const bool out_direct = lt_layout(out).ok && (batch == 1 || out.bs >= out.rows * out.cols);
  Tensor staging;
  if (!out_direct) {
    staging =
        beta != 0.0 ? out_t.contiguous() : make_empty(out_t.sizes(), out_t.dtype(), out_t.device());
    if (staging.is_same(out_t)) staging = out_t.clone();
    out = mat_of(staging);
  }
  // A right operand shared by the batch: (B, n, k) @ (k, m) is one (B*n, k) @ (k, m) product.
  if (batch > 1 && b.bs == 0 && batch * out.rows <= kIntMax) {
    Mat fa = a, fo = out;
    if (fold_rows(fa, batch) && fold_rows(fo, batch) && lt_layout(fa).ok && lt_layout(fo).ok) {
      a = fa;
      out = fo;
      batch = 1;
    }
  }
  if (batch > kIntMax) {
    throw NotImplementedError("[matmul] CUDA batches beyond 2^31 matrices are not supported");
  }
  lt_gemm(device, dtype, out, lt_layout(out), a, lt_layout(a), b, lt_layout(b), batch, alpha, beta);
  if (staging.defined()) copy(out_t, staging);
}

bool CudaBackend::gemm_bias(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t,
                            const Tensor& bias_t, double alpha) {
  // The epilogue covers the 16- and 32-bit floats, one matrix, a row-major output written in
  // place, and a dense bias over its columns; everything else takes gemm plus a separate add.
  const DType dtype = out_t.dtype();
  if (dtype != kFloat16 && dtype != kBFloat16 && dtype != kFloat32) return false;
  if (!has_lt()) return false;
  if (out_t.dim() != 3 || a_t.dim() != 3 || b_t.dim() != 3 || bias_t.dim() != 1) return false;
  if (a_t.dtype() != dtype || b_t.dtype() != dtype || bias_t.dtype() != dtype) return false;
  if (out_t.size(0) != 1 || a_t.size(0) != 1 || b_t.size(0) != 1) return false;
  const int64_t n = out_t.size(1), m = out_t.size(2), k = a_t.size(2);
  if (a_t.size(1) != n || b_t.size(1) != k || b_t.size(2) != m || bias_t.size(0) != m) return false;
  if (n == 0 || m == 0 || k == 0 || n > kIntMax || m > kIntMax || k > kIntMax) return false;
  if (bias_t.stride(0) != 1 && m != 1) return false;
  if (!(out_t.device() == a_t.device() && out_t.device() == b_t.device() &&
        out_t.device() == bias_t.device())) {
    return false;
  }
  // Bias reads are vectorised; a view that starts mid-vector keeps the separate add.
  if (reinterpret_cast<uintptr_t>(bias_t.data_ptr()) % 16 != 0) return false;
  const Mat out = mat_of(out_t);
  const BlasLayout lo = lt_layout(out);
  if (!lo.ok || lo.trans) return false;

  const int device = device_index(out_t.device());
  cuda::DeviceGuard guard(device);
  Tensor a_c = a_t, b_c = b_t;
  if (!lt_layout(mat_of(a_c)).ok) a_c = a_t.contiguous();
  if (!lt_layout(mat_of(b_c)).ok) b_c = b_t.contiguous();
  const Mat a = mat_of(a_c), b = mat_of(b_c);
  lt_gemm(device, dtype, out, lo, a, lt_layout(a), b, lt_layout(b), 1, alpha, 0.0,
          bias_t.data_ptr());
  return true;
}

}  // namespace ember
