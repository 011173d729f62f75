// CPU matmul: float32 through oneDNN or OpenBLAS, float64 through OpenBLAS (transposed views go
// in as trans flags, not copies), float16/bfloat16 through float32 blocks, integers through a
// blocked naive loop.
#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <sstream>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/onednn.h"
#include "backend/matrix_layout.h"
#include "core/dispatch.h"
#include "ember/parallel.h"
#include "kernels/cast.h"

namespace ember {

namespace {

constexpr int64_t kBlasIntMax = std::numeric_limits<blasint>::max();
// Multiply-adds below which one matrix of a batch is "small": the batch is split across our
// threads with single-threaded BLAS instead of threading each gemm inside OpenBLAS.
constexpr int64_t kSmallGemm = int64_t{1} << 21;
// Minimum multiply-adds per parallel_for chunk.
constexpr int64_t kGemmGrain = int64_t{1} << 16;
// Column block of the naive kernel: one row of accumulators stays in L1.
constexpr int64_t kNaiveCols = 256;

// The shared layout, limited to what a 32-bit BLAS integer can describe.
BlasLayout cblas_layout(const Mat& m) {
  BlasLayout l = blas_layout(m);
  if (l.ld > kBlasIntMax) l.ok = false;
  return l;
}

// OpenBLAS has one global thread count. It is set before each call: all our threads for a
// large gemm, one while our own threads each run gemms (OpenBLAS threads would oversubscribe).
void set_blas_threads(int n) {
  static std::atomic<int> current{0};
  if (current.load(std::memory_order_relaxed) == n) return;
  openblas_set_num_threads(n);
  current.store(n, std::memory_order_relaxed);
}

// Whether oneDNN computes a float32 product. Its sgemm beat OpenBLAS 0.3.21's on nearly every
// shape measured on an AVX-512 core (bench/bench_gemm.cpp, docs/perf.md) except when a dimension
// is tiny (its set-up dominates) and for A B^T whose k is long next to m and n.
bool prefer_onednn(bool ta, bool tb, int64_t m, int64_t n, int64_t k) {
  if (std::min({m, n, k}) < 16) return false;
  return !(tb && !ta && k > 4 * std::max(m, n));
}

// oneDNN on `threads` of ember's threads: a large product is cut into one block of rows (or of
// columns, whichever is longer) per thread, each a single-threaded oneDNN call.
void onednn_gemm(cpu::OnednnSgemm fn, int threads, bool ta, bool tb, int64_t m, int64_t n,
                 int64_t k, float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                 float beta, float* c, int64_t ldc) {
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const auto parts = static_cast<int64_t>(
      std::min(static_cast<double>(threads), work / static_cast<double>(kSmallGemm)));
  if (parts <= 1) {
    cpu::onednn_sgemm_call(fn, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  const bool by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  const int64_t block = ((len + parts - 1) / parts + 15) & ~int64_t{15};  // a multiple of 16
  parallel_for((len + block - 1) / block, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t s = i * block, w = std::min(len, s + block) - s;
      if (by_rows) {
        cpu::onednn_sgemm_call(fn, ta, tb, w, n, k, alpha, ta ? a + s : a + s * lda, lda, b, ldb,
                               beta, c + s * ldc, ldc);
      } else {
        cpu::onednn_sgemm_call(fn, ta, tb, m, w, k, alpha, a, lda, tb ? b + s * ldb : b + s, ldb,
                               beta, c + s, ldc);
      }
    }
  });
}

// C = alpha * op(A) op(B) + beta * C on `threads` threads: oneDNN when it is loaded, enabled and
// faster for the shape, else OpenBLAS.
void blas_gemm(int threads, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  if (cpu::OnednnSgemm fn = cpu::onednn_sgemm(); fn != nullptr && prefer_onednn(ta, tb, m, n, k)) {
    onednn_gemm(fn, threads, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  set_blas_threads(threads);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

void blas_gemm(int threads, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
               const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
               int64_t ldc) {
  set_blas_threads(threads);
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
              static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
              static_cast<blasint>(ldc));
}

// ---- BLAS path: float32, float64, and the 16-bit floats through float32 -------------------------

// A matrix as BLAS will read it: pointer, transpose flag, leading dimension.
template <class C>
struct Operand {
  const C* ptr;
  bool trans;
  int64_t ld;
};

// Copies matrix b of m into buf as C, keeping its orientation so the reads run along memory:
// column-major when the source is column-ish, row-major otherwise.
template <class T, class C>
Operand<C> pack(const Mat& m, int64_t b, std::vector<C>& buf) {
  const T* src = m.at<T>(b);
  buf.resize(static_cast<size_t>(m.rows * m.cols));
  C* dst = buf.data();
  if (m.rs == 1 && m.rows > 1 && m.cs != 1) {
    for (int64_t j = 0; j < m.cols; ++j) {
      const T* col = src + j * m.cs;
      for (int64_t i = 0; i < m.rows; ++i) dst[j * m.rows + i] = static_cast<C>(col[i]);
    }
    return {dst, true, std::max<int64_t>(m.rows, 1)};
  }
  for (int64_t i = 0; i < m.rows; ++i) {
    const T* row = src + i * m.rs;
    C* out = dst + i * m.cols;
    if (m.cs == 1) {
      for (int64_t j = 0; j < m.cols; ++j) out[j] = static_cast<C>(row[j]);
    } else {
      for (int64_t j = 0; j < m.cols; ++j) out[j] = static_cast<C>(row[j * m.cs]);
    }
  }
  return {dst, false, std::max<int64_t>(m.cols, 1)};
}

// Per-thread scratch for packed operands.
template <class C>
struct Scratch {
  std::vector<C> a, b, c;
};

template <class T>
struct BlasGemm {
  using C = compute_t<T>;  // the type BLAS computes in
  static constexpr bool kNative = std::is_same_v<T, C>;

  Mat out, a, b;
  BlasLayout lo, la, lb;
  C alpha, beta;

  BlasGemm(const Mat& out_, const Mat& a_, const Mat& b_, double alpha_, double beta_)
      : out(out_),
        a(a_),
        b(b_),
        lo(cblas_layout(out_)),
        la(cblas_layout(a_)),
        lb(cblas_layout(b_)),
        alpha(static_cast<C>(alpha_)),
        beta(static_cast<C>(beta_)) {}

  // out[batch] = alpha * a[batch] @ b[batch] + beta * out[batch], on `threads` threads.
  void run(int64_t batch, Scratch<C>& s, int threads) const {
    const int64_t n = out.rows, m = out.cols, k = a.cols;
    Operand<C> A = kNative && la.ok
                       ? Operand<C>{reinterpret_cast<const C*>(a.at<T>(batch)), la.trans, la.ld}
                       : pack<T, C>(a, batch, s.a);
    Operand<C> B = kNative && lb.ok
                       ? Operand<C>{reinterpret_cast<const C*>(b.at<T>(batch)), lb.trans, lb.ld}
                       : pack<T, C>(b, batch, s.b);
    if constexpr (kNative) {
      if (lo.ok) {
        C* c = out.at<C>(batch);
        if (!lo.trans) {
          blas_gemm(threads, A.trans, B.trans, n, m, k, alpha, A.ptr, A.ld, B.ptr, B.ld, beta, c,
                    lo.ld);
        } else {
          // A column-major C is the row-major C^T = B^T A^T.
          blas_gemm(threads, !B.trans, !A.trans, m, n, k, alpha, B.ptr, B.ld, A.ptr, A.ld, beta, c,
                    lo.ld);
        }
        return;
      }
    }
    // Compute into a row-major C block, then round once into out.
    s.c.resize(static_cast<size_t>(n * m));
    T* dst = out.at<T>(batch);
    if (beta != C(0)) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
          s.c[i * m + j] = static_cast<C>(dst[i * out.rs + j * out.cs]);
        }
      }
    }
    blas_gemm(threads, A.trans, B.trans, n, m, k, alpha, A.ptr, A.ld, B.ptr, B.ld, beta, s.c.data(),
              std::max<int64_t>(m, 1));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) dst[i * out.rs + j * out.cs] = cast<T>(s.c[i * m + j]);
    }
  }
};

// ---- naive path: integers (and sizes BLAS's 32-bit ints cannot describe) ------------------------

// Integers accumulate in the unsigned type of the same width, so overflow wraps as in PyTorch
// instead of being undefined; the 16-bit floats accumulate in float32.
template <class T, bool = std::is_integral_v<T>>
struct naive_acc {
  using type = compute_t<T>;
};
template <class T>
struct naive_acc<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using naive_acc_t = typename naive_acc<T>::type;

template <class T>
struct NaiveGemm {
  using Acc = naive_acc_t<T>;
  Mat out, a, b;
  Acc alpha, beta;
  bool read_out;

  // Rows [r0, r1) of the flattened (batch * n) output.
  void run_rows(int64_t r0, int64_t r1) const {
    const int64_t n = out.rows, m = out.cols, k = a.cols;
    std::vector<Acc> acc(static_cast<size_t>(std::min(m, kNaiveCols)));
    std::vector<T> packed;  // b[batch] row-major when its rows are not contiguous
    int64_t packed_batch = -1;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t batch = r / n, i = r % n;
      const T* bp = b.at<T>(batch);
      int64_t ldb = b.rs;
      if (b.cs != 1 && m > 1) {
        if (packed_batch != batch && !(b.bs == 0 && packed_batch >= 0)) {
          packed.resize(static_cast<size_t>(k * m));
          for (int64_t p = 0; p < k; ++p) {
            for (int64_t j = 0; j < m; ++j) packed[p * m + j] = bp[p * b.rs + j * b.cs];
          }
          packed_batch = batch;
        }
        bp = packed.data();
        ldb = m;
      }
      const T* ap = a.at<T>(batch) + i * a.rs;
      T* op = out.at<T>(batch) + i * out.rs;
      for (int64_t j0 = 0; j0 < m; j0 += kNaiveCols) {
        const int64_t w = std::min(kNaiveCols, m - j0);
        std::fill(acc.begin(), acc.begin() + w, Acc(0));
        for (int64_t p = 0; p < k; ++p) {
          const Acc av = static_cast<Acc>(ap[p * a.cs]);
          const T* brow = bp + p * ldb + j0;
          for (int64_t j = 0; j < w; ++j)
            acc[j] = static_cast<Acc>(acc[j] + av * static_cast<Acc>(brow[j]));
        }
        for (int64_t j = 0; j < w; ++j) {
          Acc v = static_cast<Acc>(alpha * acc[j]);
          if (read_out) v = static_cast<Acc>(v + beta * static_cast<Acc>(op[(j0 + j) * out.cs]));
          op[(j0 + j) * out.cs] = cast<T>(v);
        }
      }
    }
  }
};

template <class T>
naive_acc_t<T> scalar_as(double v) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<naive_acc_t<T>>(static_cast<int64_t>(v));
  } else {
    return static_cast<naive_acc_t<T>>(v);
  }
}

// ---- k == 0: out = beta * out -------------------------------------------------------------------

template <class T>
void scale_out(const Tensor& out, double beta) {
  using Acc = naive_acc_t<T>;
  const Acc bv = scalar_as<T>(beta);
  const bool zero = beta == 0.0;
  cpu::for_each_run<1>({&out}, cpu::kGrain, [=](char** p, int64_t n, const int64_t* s) {
    for (int64_t i = 0; i < n; ++i) {
      T& x = *reinterpret_cast<T*>(p[0] + i * s[0]);
      x = zero ? T(0) : cast<T>(static_cast<Acc>(bv * static_cast<Acc>(x)));
    }
  });
}

// Runs fn(b0, b1, threads) over [0, batches): split across our threads with single-threaded
// gemms when the matrices are small or many, else in one call whose gemms use every thread.
template <class Fn>
void for_batches(int64_t batches, double work, Fn&& fn) {
  const int threads = get_num_threads();
  if (in_parallel_region()) {
    fn(0, batches, 1);
  } else if (batches == 1 || (work >= static_cast<double>(kSmallGemm) && batches < 4 * threads)) {
    fn(0, batches, threads);
  } else {
    const double grain = std::max(1.0, static_cast<double>(kGemmGrain) / std::max(work, 1.0));
    parallel_for(batches, static_cast<int64_t>(grain),
                 [&](int64_t b0, int64_t b1) { fn(b0, b1, 1); });
  }
}

template <class T>
void gemm_typed(const Tensor& out_t, const Tensor& a_t, const Tensor& b_t, double alpha,
                double beta) {
  Mat out = mat_of(out_t), a = mat_of(a_t), b = mat_of(b_t);
  int64_t batches = out_t.size(0);
  const int64_t m = out.cols, k = a.cols;
  if (batches == 0 || out.rows == 0 || m == 0) return;
  if (k == 0) {
    scale_out<T>(out_t, beta);
    return;
  }
  constexpr bool kBlasType = is_float_type_v<T>;
  // A weight shared by the whole batch: (B, n, k) @ (k, m) is one (B*n, k) @ (k, m) gemm.
  if (batches > 1 && b.bs == 0 && batches * out.rows <= kBlasIntMax) {
    Mat fa = a, fo = out;
    if (fold_rows(fa, batches) && fold_rows(fo, batches) &&
        (!kBlasType || ((cblas_layout(fa).ok || !cblas_layout(a).ok) &&
                        (cblas_layout(fo).ok || !cblas_layout(out).ok)))) {
      a = fa;
      out = fo;
      batches = 1;
    }
  }
  const int64_t n = out.rows;
  // Multiply-adds per matrix, in double: stride-0 operands can make n * m * k overflow int64.
  const double work = static_cast<double>(n) * static_cast<double>(m) * static_cast<double>(k);
  if constexpr (kBlasType) {
    if (n <= kBlasIntMax && m <= kBlasIntMax && k <= kBlasIntMax) {
      using C = compute_t<T>;
      const BlasGemm<T> g(out, a, b, alpha, beta);
      for_batches(batches, work, [&](int64_t b0, int64_t b1, int threads) {
        Scratch<C> s;  // the native layouts usually leave it empty
        for (int64_t i = b0; i < b1; ++i) g.run(i, s, threads);
      });
      return;
    }
  }
  NaiveGemm<T> g{out, a, b, scalar_as<T>(alpha), scalar_as<T>(beta), beta != 0.0};
  const double row_work = std::max(1.0, static_cast<double>(m) * static_cast<double>(k));
  const auto grain =
      static_cast<int64_t>(std::max(1.0, static_cast<double>(kGemmGrain) / row_work));
  parallel_for(batches * n, grain, [&](int64_t r0, int64_t r1) { g.run_rows(r0, r1); });
}

}  // namespace

void CpuBackend::gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha,
                      double beta) {
  if (out.dim() != 3 || a.dim() != 3 || b.dim() != 3 || a.size(0) != out.size(0) ||
      b.size(0) != out.size(0) || a.size(1) != out.size(1) || b.size(2) != out.size(2) ||
      a.size(2) != b.size(1)) {
    std::ostringstream os;
    os << "[matmul] gemm expects out (B, n, m), a (B, n, k), b (B, k, m), got " << out.sizes()
       << ", " << a.sizes() << " and " << b.sizes();
    throw ValueError(os.str());
  }
  if (a.dtype() != out.dtype() || b.dtype() != out.dtype()) {
    throw TypeError(
        "[matmul] gemm operands must share one dtype, got " + std::string(dtype_name(out.dtype())) +
        ", " + std::string(dtype_name(a.dtype())) + " and " + std::string(dtype_name(b.dtype())));
  }
  if (out.dtype() == kBool) throw NotImplementedError("[matmul] not implemented for dtype bool");
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) gemm_typed<T>(out, a, b, alpha, beta);
  });
}

}  // namespace ember
