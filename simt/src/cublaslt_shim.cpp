// The host cuBLASLt for emulated builds: the matmul subset ember calls (handles, matmul and
// matrix-layout descriptors, preferences, heuristics, cublasLtMatmul), compiled against the real
// cublasLt.h so every signature is checked. Arguments are validated as cuBLASLt does (dimensions,
// leading dimensions, batch counts, type combinations); operand ranges are checked against the
// emulated device allocations, where a GPU would fault. The product runs on the CPU with double
// accumulation, as stream work, so it is ordered, deferred and captured like a kernel. Of the
// epilogues, CUBLASLT_EPILOGUE_BIAS (a vector over the rows of D added to every column) is
// emulated; any other is refused rather than silently skipped.
// clang-format off
// shim_state.h first: it brings in the emulator's CUDA qualifiers before any CUDA header.
#include "shim_state.h"
#include "tf32.h"
// clang-format on

#include "simt/cublaslt_shim.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <atomic>
#include <cstring>
#include <string>

struct cublasLtContext {
  std::uint32_t magic;
};

namespace simt {

namespace {

using detail::to_tf32;

constexpr std::uint32_t kHandleMagic = 0x4C744863;  // "cHtL"
constexpr std::uint32_t kLayoutMagic = 0x4C74594C;
constexpr std::uint32_t kDescMagic = 0x4C74444D;
constexpr std::uint32_t kPrefMagic = 0x4C745046;
constexpr std::uint64_t kAlgoMagic = 0x6F676C41744C7565ull;

thread_local std::string t_message;
std::atomic<std::uint64_t> g_matmuls{0};
std::atomic<std::uint64_t> g_bias_matmuls{0};

// The descriptors' state, kept inside the header's semi-opaque storage.
struct Layout {
  std::uint32_t magic;
  std::uint32_t type;  // cudaDataType
  std::int32_t order;
  std::int32_t batch;
  std::uint64_t rows, cols;
  std::int64_t ld;
  std::int64_t stride;
};
struct Desc {
  std::uint32_t magic;
  std::int32_t compute, scale, pointer_mode, transa, transb, transc;
  std::uint32_t epilogue;
  std::int32_t bias_type;  // cudaDataType, or -1: D's type
  const void* bias;
  std::int64_t bias_stride;  // elements between the bias vectors of a strided batch
};
struct Pref {
  std::uint32_t magic;
  std::uint32_t search_mode;
  std::uint64_t max_workspace;
  std::uint32_t alignment[4];  // the A, B, C, D alignments (bytes) the caller promises
};
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t));

template <class S, class O>
S* state(O* opaque, std::uint32_t magic) {
  if (opaque == nullptr) return nullptr;
  auto* s = reinterpret_cast<S*>(opaque->data);
  return s->magic == magic ? s : nullptr;
}

cublasStatus_t ok() {
  t_message.clear();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t fail(cublasStatus_t status, std::string message) {
  t_message = std::move(message);
  return status;
}

// Copies a value of exactly sizeof(T) bytes from a SetAttribute buffer.
template <class T>
bool take(T& dst, const void* buf, size_t size) {
  if (buf == nullptr || size != sizeof(T)) return false;
  std::memcpy(&dst, buf, sizeof(T));
  return true;
}

size_t element_size(std::uint32_t type) {
  switch (type) {
    case CUDA_R_16F:
    case CUDA_R_16BF:
      return 2;
    case CUDA_R_32F:
      return 4;
    case CUDA_R_64F:
      return 8;
    default:
      return 0;
  }
}

double load(const void* p, std::int64_t i, std::uint32_t type, bool tf32) {
  switch (type) {
    case CUDA_R_16F:
      return __half2float(static_cast<const __half*>(p)[i]);
    case CUDA_R_16BF:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case CUDA_R_32F: {
      const float v = static_cast<const float*>(p)[i];
      return tf32 ? to_tf32(v) : v;
    }
    default:
      return static_cast<const double*>(p)[i];
  }
}

void store(void* p, std::int64_t i, std::uint32_t type, double v) {
  switch (type) {
    case CUDA_R_16F:
      static_cast<__half*>(p)[i] = __float2half_rn(static_cast<float>(v));
      break;
    case CUDA_R_16BF:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(static_cast<float>(v));
      break;
    case CUDA_R_32F:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    default:
      static_cast<double*>(p)[i] = v;
      break;
  }
}

std::string str(std::int64_t v) { return std::to_string(v); }

// Bytes from a matrix's base pointer to the end of its last element.
std::uint64_t extent(const Layout& l) {
  if (l.rows == 0 || l.cols == 0) return 0;
  const std::uint64_t last = static_cast<std::uint64_t>(l.batch - 1) * l.stride +
                             (l.cols - 1) * static_cast<std::uint64_t>(l.ld) + l.rows;
  return last * element_size(l.type);
}

// The largest power of two (<= 256) dividing the address.
std::uint64_t alignment_of(const void* p) {
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::uint64_t a = 256;
  while (a > 1 && addr % a != 0) a /= 2;
  return a;
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

// Everything a matmul needs once validated.
struct Problem {
  Layout a, b, c, d;
  std::int32_t transa, transb;
  std::int64_t m, n, k;
  bool tf32, scale64;
  bool bias;                // CUBLASLT_EPILOGUE_BIAS
  std::uint32_t bias_type;  // resolved: D's type
  std::int64_t bias_stride;
};

const char* epilogue_name(std::uint32_t e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return "CUBLASLT_EPILOGUE_DEFAULT";
    case CUBLASLT_EPILOGUE_RELU:
      return "CUBLASLT_EPILOGUE_RELU";
    case CUBLASLT_EPILOGUE_BIAS:
      return "CUBLASLT_EPILOGUE_BIAS";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "CUBLASLT_EPILOGUE_RELU_BIAS";
    case CUBLASLT_EPILOGUE_GELU:
      return "CUBLASLT_EPILOGUE_GELU";
    case CUBLASLT_EPILOGUE_GELU_BIAS:
      return "CUBLASLT_EPILOGUE_GELU_BIAS";
    case CUBLASLT_EPILOGUE_BGRADA:
      return "CUBLASLT_EPILOGUE_BGRADA";
    case CUBLASLT_EPILOGUE_BGRADB:
      return "CUBLASLT_EPILOGUE_BGRADB";
    default:
      return "an epilogue";
  }
}

// Bytes from the bias pointer to the end of the last bias vector the batch reads.
std::uint64_t bias_extent(const Problem& p) {
  if (p.m == 0) return 0;
  const std::uint64_t last = static_cast<std::uint64_t>(p.d.batch - 1) * p.bias_stride + p.m;
  return last * element_size(p.bias_type);
}

cublasStatus_t check_layout(const char* name, const Layout* l) {
  if (l == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name) + " is not a layout");
  if (element_size(l->type) == 0) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + ": data type " + str(l->type) + " is not emulated");
  }
  if (l->order != CUBLASLT_ORDER_COL) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(name) + ": only CUBLASLT_ORDER_COL is emulated");
  }
  if (l->rows > INT32_MAX || l->cols > INT32_MAX) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, std::string(name) + ": dimensions beyond int32");
  }
  if (l->ld < 1 || static_cast<std::uint64_t>(l->ld) < l->rows) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name) + ": leading dimension " +
                                                 str(l->ld) + " is less than the " +
                                                 str(static_cast<std::int64_t>(l->rows)) + " rows");
  }
  if (l->batch < 1 || l->stride < 0) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, std::string(name) + ": batch count " + str(l->batch) +
                                                 " with batch stride " + str(l->stride));
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The checks cublasLtMatmul and the heuristic query share.
cublasStatus_t validate(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc_h,
                        cublasLtMatrixLayout_t ah, cublasLtMatrixLayout_t bh,
                        cublasLtMatrixLayout_t ch, cublasLtMatrixLayout_t dh, Problem& p) {
  if (handle == nullptr || handle->magic != kHandleMagic) {
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "the handle was not created by cublasLtCreate");
  }
  const Desc* desc = state<Desc>(desc_h, kDescMagic);
  if (desc == nullptr) return fail(CUBLAS_STATUS_INVALID_VALUE, "computeDesc is not a matmul desc");
  const Layout *a = state<Layout>(ah, kLayoutMagic), *b = state<Layout>(bh, kLayoutMagic),
               *c = state<Layout>(ch, kLayoutMagic), *d = state<Layout>(dh, kLayoutMagic);
  if (auto s = check_layout("Adesc", a)) return s;
  if (auto s = check_layout("Bdesc", b)) return s;
  if (auto s = check_layout("Cdesc", c)) return s;
  if (auto s = check_layout("Ddesc", d)) return s;
  if (desc->pointer_mode != CUBLASLT_POINTER_MODE_HOST || desc->transc != CUBLAS_OP_N) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED, "only host pointer mode and TRANSC = N are emulated");
  }
  if (desc->epilogue != CUBLASLT_EPILOGUE_DEFAULT && desc->epilogue != CUBLASLT_EPILOGUE_BIAS) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                std::string(epilogue_name(desc->epilogue)) + " (" + str(desc->epilogue) +
                    ") is not emulated: only CUBLASLT_EPILOGUE_DEFAULT and "
                    "CUBLASLT_EPILOGUE_BIAS are");
  }
  for (std::int32_t t : {desc->transa, desc->transb}) {
    if (t != CUBLAS_OP_N && t != CUBLAS_OP_T) {
      return fail(CUBLAS_STATUS_INVALID_VALUE, "TRANSA/TRANSB must be CUBLAS_OP_N or CUBLAS_OP_T");
    }
  }
  // Type combinations: float compute with float scale over 16/32-bit floats, or all double.
  const bool f32 = desc->compute == CUBLAS_COMPUTE_32F ||
                   desc->compute == CUBLAS_COMPUTE_32F_PEDANTIC ||
                   desc->compute == CUBLAS_COMPUTE_32F_FAST_TF32;
  const bool f64 =
      desc->compute == CUBLAS_COMPUTE_64F || desc->compute == CUBLAS_COMPUTE_64F_PEDANTIC;
  bool types_ok = a->type == b->type && c->type == d->type;
  if (f32) {
    types_ok = types_ok && desc->scale == CUDA_R_32F && a->type != CUDA_R_64F &&
               (d->type == a->type || d->type == CUDA_R_32F) &&
               (desc->compute != CUBLAS_COMPUTE_32F_FAST_TF32 || a->type == CUDA_R_32F);
  } else if (f64) {
    types_ok =
        types_ok && desc->scale == CUDA_R_64F && a->type == CUDA_R_64F && d->type == CUDA_R_64F;
  } else {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "compute type " + str(desc->compute) + " is not emulated");
  }
  if (!types_ok) {
    return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                "unsupported combination of compute type " + str(desc->compute) + ", scale type " +
                    str(desc->scale) + " and data types A " + str(a->type) + ", B " + str(b->type) +
                    ", C " + str(c->type) + ", D " + str(d->type));
  }
  p = {*a,
       *b,
       *c,
       *d,
       desc->transa,
       desc->transb,
       0,
       0,
       0,
       desc->compute == CUBLAS_COMPUTE_32F_FAST_TF32,
       f64,
       desc->epilogue == CUBLASLT_EPILOGUE_BIAS,
       d->type,
       desc->bias_stride};
  if (p.bias) {
    // The bias is one vector of D's type over D's rows (the emulated subset: float compute).
    if (f64) {
      return fail(CUBLAS_STATUS_NOT_SUPPORTED,
                  "CUBLASLT_EPILOGUE_BIAS is emulated for CUBLAS_COMPUTE_32F* only");
    }
    if (desc->bias_type != -1 && static_cast<std::uint32_t>(desc->bias_type) != d->type) {
      return fail(CUBLAS_STATUS_NOT_SUPPORTED, "CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE " +
                                                   str(desc->bias_type) +
                                                   " differs from D's type " + str(d->type));
    }
    if (desc->bias_stride < 0) {
      return fail(CUBLAS_STATUS_INVALID_VALUE, "CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE " +
                                                   str(desc->bias_stride) + " is negative");
    }
  }
  p.m = static_cast<std::int64_t>(d->rows);
  p.n = static_cast<std::int64_t>(d->cols);
  const std::int64_t am = static_cast<std::int64_t>(p.transa == CUBLAS_OP_N ? a->rows : a->cols);
  p.k = static_cast<std::int64_t>(p.transa == CUBLAS_OP_N ? a->cols : a->rows);
  const std::int64_t bk = static_cast<std::int64_t>(p.transb == CUBLAS_OP_N ? b->rows : b->cols);
  const std::int64_t bn = static_cast<std::int64_t>(p.transb == CUBLAS_OP_N ? b->cols : b->rows);
  if (am != p.m || bn != p.n || bk != p.k || c->rows != d->rows || c->cols != d->cols) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, "dimensions do not match: op(A) " + str(am) + "x" +
                                                 str(p.k) + ", op(B) " + str(bk) + "x" + str(bn) +
                                                 ", C " + str(static_cast<std::int64_t>(c->rows)) +
                                                 "x" + str(static_cast<std::int64_t>(c->cols)) +
                                                 ", D " + str(p.m) + "x" + str(p.n));
  }
  if (a->batch != d->batch || b->batch != d->batch || c->batch != d->batch) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, "batch counts differ: A " + str(a->batch) + ", B " +
                                                 str(b->batch) + ", C " + str(c->batch) + ", D " +
                                                 str(d->batch));
  }
  if (d->batch > 1 && d->stride < static_cast<std::int64_t>(d->cols) * d->ld) {
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "Ddesc: batch stride " + str(d->stride) + " makes the output matrices overlap");
  }
  return ok();
}

// D = alpha * op(A) op(B) + beta * C for every matrix of the batch (column-major).
// With the bias epilogue, bias[batch * bias_stride + i] is added to row i of D.
void run_matmul(const Problem& p, double alpha, double beta, const void* A, const void* B,
                const void* C, void* D, const void* bias) {
  const std::size_t ea = element_size(p.a.type), eb = element_size(p.b.type),
                    ec = element_size(p.c.type), ed = element_size(p.d.type);
  for (std::int32_t batch = 0; batch < p.d.batch; ++batch) {
    const char* a = static_cast<const char*>(A) + batch * p.a.stride * ea;
    const char* b = static_cast<const char*>(B) + batch * p.b.stride * eb;
    const char* c = static_cast<const char*>(C) + batch * p.c.stride * ec;
    char* d = static_cast<char*>(D) + batch * p.d.stride * ed;
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) {
        double acc = 0;
        for (std::int64_t q = 0; q < p.k; ++q) {
          const std::int64_t ia = p.transa == CUBLAS_OP_N ? i + q * p.a.ld : q + i * p.a.ld;
          const std::int64_t ib = p.transb == CUBLAS_OP_N ? q + j * p.b.ld : j + q * p.b.ld;
          acc += load(a, ia, p.a.type, p.tf32) * load(b, ib, p.b.type, p.tf32);
        }
        // The accumulator and C are converted to the scale type before scaling.
        double v;
        if (p.scale64) {
          v = alpha * acc + (beta != 0 ? beta * load(c, i + j * p.c.ld, p.c.type, false) : 0.0);
        } else {
          float f = static_cast<float>(alpha) * static_cast<float>(acc);
          if (beta != 0) {
            f += static_cast<float>(beta) *
                 static_cast<float>(load(c, i + j * p.c.ld, p.c.type, false));
          }
          // The bias epilogue: element i of the batch's vector joins every column, in float.
          if (p.bias)
            f += static_cast<float>(load(bias, batch * p.bias_stride + i, p.bias_type, false));
          v = f;
        }
        store(d, i + j * p.d.ld, p.d.type, v);
      }
    }
  }
  g_matmuls.fetch_add(1, std::memory_order_relaxed);
  if (p.bias) g_bias_matmuls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

std::string cublaslt_last_message() { return t_message; }
std::uint64_t cublaslt_matmul_count() { return g_matmuls.load(); }
std::uint64_t cublaslt_bias_epilogue_count() { return g_bias_matmuls.load(); }

}  // namespace simt

using simt::fail;
using simt::ok;

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  if (handle == nullptr) return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtCreate: null handle");
  *handle = new cublasLtContext{simt::kHandleMagic};
  return ok();
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr || handle->magic != simt::kHandleMagic) {
    return fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasLtDestroy: not a handle");
  }
  handle->magic = 0;
  delete handle;
  return ok();
}

const char* cublasLtGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "<unknown>";
}

const char* cublasLtGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "an absent device architectural feature is required";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "error detected trying to check the license";
  }
  return "unknown error";
}

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

// ---- matrix layouts -----------------------------------------------------------------------------

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (layout == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutCreate: null");
  auto* o = new cublasLtMatrixLayoutOpaque_t{};
  simt::Layout l{simt::kLayoutMagic,
                 static_cast<std::uint32_t>(type),
                 CUBLASLT_ORDER_COL,
                 1,
                 rows,
                 cols,
                 ld,
                 0};
  std::memcpy(o->data, &l, sizeof l);
  *layout = o;
  return ok();
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  auto* l = simt::state<simt::Layout>(layout, simt::kLayoutMagic);
  if (l == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutDestroy: not a layout");
  l->magic = 0;
  delete layout;
  return ok();
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  auto* l = simt::state<simt::Layout>(layout, simt::kLayoutMagic);
  if (l == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatrixLayoutSetAttribute: not a layout");
  bool good = false;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      good = simt::take(l->type, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      good = simt::take(l->order, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      good = simt::take(l->rows, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      good = simt::take(l->cols, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_LD:
      good = simt::take(l->ld, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      good = simt::take(l->batch, buf, size);
      break;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      good = simt::take(l->stride, buf, size);
      break;
    default:
      return fail(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatrixLayoutSetAttribute: attribute " +
                                                   simt::str(attr) + " is not emulated");
  }
  if (!good) {
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatrixLayoutSetAttribute: null buffer or wrong size " + simt::str(size) +
                    " for attribute " + simt::str(attr));
  }
  return ok();
}

// ---- matmul descriptors -------------------------------------------------------------------------

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (desc == nullptr) return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescCreate: null");
  auto* o = new cublasLtMatmulDescOpaque_t{};
  simt::Desc d{simt::kDescMagic,
               static_cast<std::int32_t>(compute),
               static_cast<std::int32_t>(scale),
               CUBLASLT_POINTER_MODE_HOST,
               CUBLAS_OP_N,
               CUBLAS_OP_N,
               CUBLAS_OP_N,
               CUBLASLT_EPILOGUE_DEFAULT,
               -1,
               nullptr,
               0};
  std::memcpy(o->data, &d, sizeof d);
  *desc = o;
  return ok();
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  auto* d = simt::state<simt::Desc>(desc, simt::kDescMagic);
  if (d == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescDestroy: not a desc");
  d->magic = 0;
  delete desc;
  return ok();
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  auto* d = simt::state<simt::Desc>(desc, simt::kDescMagic);
  if (d == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulDescSetAttribute: not a desc");
  bool good = false;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      good = simt::take(d->compute, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      good = simt::take(d->scale, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
      good = simt::take(d->pointer_mode, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSA:
      good = simt::take(d->transa, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSB:
      good = simt::take(d->transb, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSC:
      good = simt::take(d->transc, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      good = simt::take(d->epilogue, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      good = simt::take(d->bias, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      good = simt::take(d->bias_type, buf, size);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
      good = simt::take(d->bias_stride, buf, size);
      break;
    default:
      return fail(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmulDescSetAttribute: attribute " +
                                                   simt::str(attr) + " is not emulated");
  }
  if (!good) {
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulDescSetAttribute: null buffer or wrong size " + simt::str(size) +
                    " for attribute " + simt::str(attr));
  }
  return ok();
}

// ---- preferences and heuristics -----------------------------------------------------------------

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceCreate: null");
  auto* o = new cublasLtMatmulPreferenceOpaque_t{};
  // As in cuBLASLt, operands are assumed 256-byte aligned unless the preference says less.
  simt::Pref p{simt::kPrefMagic, CUBLASLT_SEARCH_BEST_FIT, 0, {256, 256, 256, 256}};
  std::memcpy(o->data, &p, sizeof p);
  *pref = o;
  return ok();
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  auto* p = simt::state<simt::Pref>(pref, simt::kPrefMagic);
  if (p == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulPreferenceDestroy: not a preference");
  p->magic = 0;
  delete pref;
  return ok();
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  auto* p = simt::state<simt::Pref>(pref, simt::kPrefMagic);
  if (p == nullptr)
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmulPreferenceSetAttribute: not a preference");
  bool good = false;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
      good = simt::take(p->search_mode, buf, size);
      break;
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      good = simt::take(p->max_workspace, buf, size);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      good = simt::take(p->alignment[0], buf, size);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      good = simt::take(p->alignment[1], buf, size);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      good = simt::take(p->alignment[2], buf, size);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      good = simt::take(p->alignment[3], buf, size);
      break;
    default:
      return fail(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmulPreferenceSetAttribute: attribute " +
                                                   simt::str(attr) + " is not emulated");
  }
  if (!good) {
    return fail(
        CUBLAS_STATUS_INVALID_VALUE,
        "cublasLtMatmulPreferenceSetAttribute: null buffer or wrong size " + simt::str(size));
  }
  return ok();
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  const simt::Pref* preference = simt::state<simt::Pref>(pref, simt::kPrefMagic);
  if (preference == nullptr || requested <= 0 || results == nullptr || returned == nullptr) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmulAlgoGetHeuristic: bad arguments");
  }
  simt::Problem p;
  if (auto s = simt::validate(handle, desc, a, b, c, d, p)) return s;
  // One algorithm, which needs no workspace and relies on the alignments the preference states
  // and, as cuBLASLt does, on the alignment of the bias pointer already in the descriptor.
  std::memset(&results[0], 0, sizeof results[0]);
  results[0].algo.data[0] = simt::kAlgoMagic;
  for (int i = 0; i < 4; ++i) results[0].algo.data[1 + i] = preference->alignment[i];
  results[0].algo.data[5] =
      p.bias ? simt::alignment_of(simt::state<simt::Desc>(desc, simt::kDescMagic)->bias) : 1;
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return ok();
}

// ---- the product --------------------------------------------------------------------------------

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* A, cublasLtMatrixLayout_t adesc, const void* B,
                              cublasLtMatrixLayout_t bdesc, const void* beta, const void* C,
                              cublasLtMatrixLayout_t cdesc, void* D, cublasLtMatrixLayout_t ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_size, cudaStream_t stream) {
  simt::Problem p;
  if (auto s = simt::validate(handle, desc, adesc, bdesc, cdesc, ddesc, p)) return s;
  if (alpha == nullptr || beta == nullptr) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: null alpha or beta");
  }
  const void* bias = p.bias ? simt::state<simt::Desc>(desc, simt::kDescMagic)->bias : nullptr;
  if (p.bias) {
    if (bias == nullptr) {
      return fail(
          CUBLAS_STATUS_INVALID_VALUE,
          "cublasLtMatmul: CUBLASLT_EPILOGUE_BIAS without CUBLASLT_MATMUL_DESC_BIAS_POINTER");
    }
    const std::size_t size = simt::element_size(p.bias_type);
    if (reinterpret_cast<std::uintptr_t>(bias) % size != 0) {
      return fail(CUBLAS_STATUS_INVALID_VALUE,
                  "cublasLtMatmul: the bias vector is not aligned to its " +
                      simt::str(static_cast<std::int64_t>(size)) + "-byte elements");
    }
  }
  if (algo != nullptr) {
    if (algo->data[0] != simt::kAlgoMagic) {
      return fail(CUBLAS_STATUS_INVALID_VALUE,
                  "cublasLtMatmul: algo did not come from the heuristic");
    }
    // An algorithm chosen for aligned operands reads them with wide loads.
    const void* ptrs[5] = {A, B, C, D, bias};
    for (int i = 0; i < (p.bias ? 5 : 4); ++i) {
      const auto need = algo->data[1 + i];
      if (need > 1 && reinterpret_cast<std::uintptr_t>(ptrs[i]) % need != 0) {
        const std::string what =
            i < 4 ? std::string("matrix ") + "ABCD"[i] : std::string("the bias vector");
        return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: " + what +
                                                     " is not aligned to the " +
                                                     simt::str(static_cast<std::int64_t>(need)) +
                                                     " bytes the algorithm was chosen for");
      }
    }
  }
  double a_val, b_val;
  if (p.scale64) {
    std::memcpy(&a_val, alpha, 8);
    std::memcpy(&b_val, beta, 8);
  } else {
    float f;
    std::memcpy(&f, alpha, 4);
    a_val = f;
    std::memcpy(&f, beta, 4);
    b_val = f;
  }
  if (C == D && (p.c.ld != p.d.ld || p.c.stride != p.d.stride || p.c.type != p.d.type)) {
    return fail(CUBLAS_STATUS_INVALID_VALUE,
                "cublasLtMatmul: in-place C = D with different layouts");
  }
  simt::detail::Lock lock(simt::detail::shim().mutex);
  if (simt::detail::sticky_error() != cudaSuccess) {
    return fail(CUBLAS_STATUS_EXECUTION_FAILED, "cublasLtMatmul: the device has a sticky error");
  }
  CUstream_st* s = simt::detail::resolve(stream);
  if (s == nullptr) return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: invalid stream");
  // A GPU would fault on an operand outside device memory.
  const bool reads_c = b_val != 0.0;
  const struct {
    const char* name;
    const void* ptr;
    const simt::Layout& layout;
    bool used;
  } operands[] = {
      {"A", A, p.a, p.k > 0}, {"B", B, p.b, p.k > 0}, {"C", C, p.c, reads_c}, {"D", D, p.d, true}};
  for (const auto& o : operands) {
    if (o.used && !simt::in_device_memory(o.ptr, simt::extent(o.layout))) {
      return fail(CUBLAS_STATUS_EXECUTION_FAILED,
                  std::string("cublasLtMatmul: matrix ") + o.name + " (" +
                      simt::str(static_cast<std::int64_t>(simt::extent(o.layout))) +
                      " bytes from its base) is not inside one allocation of the current device");
    }
  }
  if (p.bias && !simt::in_device_memory(bias, simt::bias_extent(p))) {
    return fail(CUBLAS_STATUS_EXECUTION_FAILED,
                "cublasLtMatmul: the bias vector (" +
                    simt::str(static_cast<std::int64_t>(simt::bias_extent(p))) + " bytes for D's " +
                    simt::str(p.m) + " rows) is not inside one allocation of the current device");
  }
  if (workspace_size > 0 && !simt::in_device_memory(workspace, workspace_size)) {
    return fail(CUBLAS_STATUS_INVALID_VALUE, "cublasLtMatmul: workspace is not device memory");
  }
  const cudaError_t e = simt::detail::submit(
      s,
      [p, a_val, b_val, A, B, C, D, bias] {
        simt::run_matmul(p, a_val, b_val, A, B, C, D, bias);
        return cudaSuccess;
      },
      "cublasLtMatmul");
  if (e != cudaSuccess)
    return fail(CUBLAS_STATUS_EXECUTION_FAILED, "cublasLtMatmul: " + simt::last_error_message());
  return ok();
}

}  // extern "C"
