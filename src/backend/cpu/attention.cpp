// CPU fused attention (FlashAttention-2's schedule on the host): a task per (batch, block of query
// rows) walks the keys in tiles with an online softmax, so it never holds more than a
// (rows x tile) block of scores. The backward recomputes the probabilities from the saved
// log-sum-exp: one pass per (batch, key block) for dK and dV, one per (batch, query block) for dQ,
// so no two tasks write the same row. 16-bit inputs are converted tile by tile to float32.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "core/dispatch.h"
#include "ember/parallel.h"
#include "kernels/attention_ops.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember {

namespace {

constexpr int64_t kRows = 32;  // query rows per task
constexpr int64_t kKeys = 64;  // keys per tile

template <class T>
using Acc = attn::acc_t<T>;

// dst (rows, n) in A = src rows [r0, r0 + rows) of a (*, n) matrix.
template <class A, class T>
void load_rows(A* dst, const T* src, int64_t r0, int64_t rows, int64_t n) {
  const T* s = src + r0 * n;
  for (int64_t i = 0; i < rows * n; ++i) dst[i] = static_cast<A>(s[i]);
}

// dst (n, rows) in A = the transpose of src rows [r0, r0 + rows) of a (*, n) matrix.
template <class A, class T>
void load_rows_t(A* dst, const T* src, int64_t r0, int64_t rows, int64_t n) {
  for (int64_t j = 0; j < rows; ++j) {
    const T* s = src + (r0 + j) * n;
    for (int64_t x = 0; x < n; ++x) dst[x * rows + j] = static_cast<A>(s[x]);
  }
}

// sc (rows, cols) = a (rows, n) @ bt (n, cols), four rows at a time so each row of bt is loaded
// once per four; the inner loops run over cols and vectorise.
template <class A>
__attribute__((always_inline)) inline void matmul_nt_impl(A* __restrict sc, const A* __restrict a,
                                                          const A* __restrict bt, int64_t rows,
                                                          int64_t cols, int64_t n) {
  std::fill(sc, sc + rows * cols, A(0));
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) {
    A* __restrict o0 = sc + i * cols;
    A* __restrict o1 = o0 + cols;
    A* __restrict o2 = o1 + cols;
    A* __restrict o3 = o2 + cols;
    for (int64_t x = 0; x < n; ++x) {
      const A a0 = a[i * n + x], a1 = a[(i + 1) * n + x], a2 = a[(i + 2) * n + x],
              a3 = a[(i + 3) * n + x];
      const A* __restrict b = bt + x * cols;
      for (int64_t j = 0; j < cols; ++j) {
        o0[j] += a0 * b[j];
        o1[j] += a1 * b[j];
        o2[j] += a2 * b[j];
        o3[j] += a3 * b[j];
      }
    }
  }
  for (; i < rows; ++i) {
    A* __restrict out = sc + i * cols;
    for (int64_t x = 0; x < n; ++x) {
      const A ax = a[i * n + x];
      const A* __restrict b = bt + x * cols;
      for (int64_t j = 0; j < cols; ++j) out[j] += ax * b[j];
    }
  }
}

// acc (rows, m) += p (rows, cols) @ b (cols, m), four columns of p at a time so each row of acc
// is loaded and stored once per four.
template <class A>
__attribute__((always_inline)) inline void matmul_acc_impl(A* __restrict acc, const A* __restrict p,
                                                           const A* __restrict b, int64_t rows,
                                                           int64_t cols, int64_t m) {
  for (int64_t i = 0; i < rows; ++i) {
    A* __restrict out = acc + i * m;
    const A* pi = p + i * cols;
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      const A p0 = pi[j], p1 = pi[j + 1], p2 = pi[j + 2], p3 = pi[j + 3];
      const A* __restrict b0 = b + j * m;
      const A* __restrict b1 = b0 + m;
      const A* __restrict b2 = b1 + m;
      const A* __restrict b3 = b2 + m;
      for (int64_t y = 0; y < m; ++y) out[y] += p0 * b0[y] + p1 * b1[y] + p2 * b2[y] + p3 * b3[y];
    }
    for (; j < cols; ++j) {
      const A pij = pi[j];
      const A* __restrict bj = b + j * m;
      for (int64_t y = 0; y < m; ++y) out[y] += pij * bj[y];
    }
  }
}

// s[j] = exp(s[j] - m) over n entries; returns their sum.
template <class A>
__attribute__((always_inline)) inline A exp_shift_impl(A* __restrict s, int64_t n, A m) {
  A sum = 0;
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = rd::softmax_exp<A>(s[j] - m));
  return sum;
}

// The float32 tile product (the accumulation type of every dtype but float64): c (rows, cols)
// = (or +=) a (rows, kd) @ b (kd, cols) with row strides lda, ldb, ldc. A register-blocked
// micro-kernel: a 4 x 16 block of c stays in eight 8-lane vectors while kd streams by (GCC's
// vector extension; one AVX2 register each in the x86-64-v3 clone).
typedef float Float8 __attribute__((vector_size(32)));

EMBER_CPU_CLONES void gemm_f32(float* __restrict c, int64_t ldc, const float* __restrict a,
                               int64_t lda, const float* __restrict b, int64_t ldb, int64_t rows,
                               int64_t cols, int64_t kd, bool accumulate) {
  int64_t i0 = 0;
  for (; i0 + 4 <= rows; i0 += 4) {
    int64_t j0 = 0;
    for (; j0 + 16 <= cols; j0 += 16) {
      Float8 acc[4][2] = {};
      const float* a0 = a + i0 * lda;
      for (int64_t x = 0; x < kd; ++x) {
        Float8 b0, b1;
        std::memcpy(&b0, b + x * ldb + j0, sizeof(Float8));
        std::memcpy(&b1, b + x * ldb + j0 + 8, sizeof(Float8));
        for (int r = 0; r < 4; ++r) {
          const float s = a0[r * lda + x];
          acc[r][0] += s * b0;
          acc[r][1] += s * b1;
        }
      }
      for (int r = 0; r < 4; ++r) {
        for (int h = 0; h < 2; ++h) {
          float* out = c + (i0 + r) * ldc + j0 + 8 * h;
          Float8 v = acc[r][h];
          if (accumulate) {
            Float8 old;
            std::memcpy(&old, out, sizeof(Float8));
            v += old;
          }
          std::memcpy(out, &v, sizeof(Float8));
        }
      }
    }
    for (int64_t r = i0; r < i0 + 4; ++r) {  // the columns past the last block of 16
      for (int64_t j = j0; j < cols; ++j) {
        float sum = 0;
        for (int64_t x = 0; x < kd; ++x) sum += a[r * lda + x] * b[x * ldb + j];
        c[r * ldc + j] = accumulate ? c[r * ldc + j] + sum : sum;
      }
    }
  }
  for (; i0 < rows; ++i0) {  // the rows past the last block of 4
    float* out = c + i0 * ldc;
    if (!accumulate) std::fill(out, out + cols, 0.0f);
    for (int64_t x = 0; x < kd; ++x) {
      const float s = a[i0 * lda + x];
      const float* bx = b + x * ldb;
      for (int64_t j = 0; j < cols; ++j) out[j] += s * bx[j];
    }
  }
}

// sc (rows, cols) = a (rows, n) @ bt (n, cols); acc (rows, m) += p (rows, cols) @ b (cols, m).
void matmul_nt(float* sc, const float* a, const float* bt, int64_t rows, int64_t cols, int64_t n) {
  gemm_f32(sc, cols, a, n, bt, cols, rows, cols, n, false);
}
void matmul_nt(double* sc, const double* a, const double* bt, int64_t rows, int64_t cols,
               int64_t n) {
  matmul_nt_impl(sc, a, bt, rows, cols, n);
}
void matmul_acc(float* acc, const float* p, const float* b, int64_t rows, int64_t cols, int64_t m) {
  gemm_f32(acc, m, p, cols, b, m, rows, m, cols, true);
}
void matmul_acc(double* acc, const double* p, const double* b, int64_t rows, int64_t cols,
                int64_t m) {
  matmul_acc_impl(acc, p, b, rows, cols, m);
}
EMBER_CPU_CLONES float exp_shift(float* s, int64_t n, float m) { return exp_shift_impl(s, n, m); }
double exp_shift(double* s, int64_t n, double m) { return exp_shift_impl(s, n, m); }

// Scores of the (rows x cols) block at (i0, j0) of batch b: dot products already in sc.
template <class A, class T>
void mask_block(A* sc, const AttentionParams& p, const void* mask, int64_t b, int64_t i0,
                int64_t rows, int64_t j0, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      A& v = sc[i * cols + j];
      v = attn::score<A, T>(v, p, mask, b, i0 + i, j0 + j);
    }
  }
}

template <class T>
void forward_kernel(const Tensor& out_t, const Tensor& lse_t, const Tensor& q_t, const Tensor& k_t,
                    const Tensor& v_t, const Tensor& mask_t, const AttentionParams& p) {
  using A = Acc<T>;
  const T* q = static_cast<const T*>(q_t.data_ptr());
  const T* k = static_cast<const T*>(k_t.data_ptr());
  const T* v = static_cast<const T*>(v_t.data_ptr());
  const void* mask = p.has_mask ? mask_t.data_ptr() : nullptr;
  T* out = static_cast<T*>(out_t.data_ptr());
  A* lse = static_cast<A*>(lse_t.data_ptr());
  const int64_t blocks = (p.l + kRows - 1) / kRows;
  const int64_t work = kRows * p.s * (p.e + p.ev);
  parallel_for(p.batch * blocks, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, work)),
               [&](int64_t t0, int64_t t1) {
                 std::vector<A> qb(kRows * p.e), kt(p.e * kKeys), vb(kKeys * p.ev),
                     sc(kRows * kKeys), acc(kRows * p.ev), m(kRows), z(kRows);
                 for (int64_t t = t0; t < t1; ++t) {
                   const int64_t b = t / blocks, i0 = (t % blocks) * kRows;
                   const int64_t rows = std::min(kRows, p.l - i0);
                   load_rows(qb.data(), q + b * p.l * p.e, i0, rows, p.e);
                   std::fill(acc.begin(), acc.end(), A(0));
                   std::fill(m.begin(), m.end(), A(-INFINITY));
                   std::fill(z.begin(), z.end(), A(0));
                   const int64_t s_end = attn::key_end(p, i0 + rows - 1);
                   for (int64_t j0 = 0; j0 < s_end; j0 += kKeys) {
                     const int64_t cols = std::min(kKeys, s_end - j0);
                     load_rows_t(kt.data(), k + b * p.s * p.e, j0, cols, p.e);
                     load_rows(vb.data(), v + b * p.s * p.ev, j0, cols, p.ev);
                     matmul_nt(sc.data(), qb.data(), kt.data(), rows, cols, p.e);
                     mask_block<A, T>(sc.data(), p, mask, b, i0, rows, j0, cols);
                     for (int64_t i = 0; i < rows; ++i) {
                       A* s = sc.data() + i * cols;
                       A mt = m[i];
                       for (int64_t j = 0; j < cols; ++j) mt = std::max(mt, s[j]);
                       if (mt == A(-INFINITY)) {  // nothing visible yet
                         std::fill(s, s + cols, A(0));
                         continue;
                       }
                       const A corr = m[i] == A(-INFINITY) ? A(0) : std::exp(m[i] - mt);
                       const A sum = exp_shift(s, cols, mt);
                       z[i] = z[i] * corr + sum;
                       m[i] = mt;
                       A* a = acc.data() + i * p.ev;
                       for (int64_t y = 0; y < p.ev; ++y) a[y] *= corr;
                     }
                     matmul_acc(acc.data(), sc.data(), vb.data(), rows, cols, p.ev);
                   }
                   for (int64_t i = 0; i < rows; ++i) {
                     const bool empty = z[i] == A(0);
                     const A inv = empty ? A(0) : A(1) / z[i];
                     T* o = out + (b * p.l + i0 + i) * p.ev;
                     for (int64_t y = 0; y < p.ev; ++y) o[y] = cast<T>(acc[i * p.ev + y] * inv);
                     lse[b * p.l + i0 + i] = empty ? A(-INFINITY) : m[i] + std::log(z[i]);
                   }
                 }
               });
}

// Recomputes the (rows x cols) probabilities at (i0, j0) and dS = P * (dO V^T - D) for them.
// qb (rows, e), kt (e, cols), dob (rows, ev), vt (ev, cols); D and lse for the block's rows.
template <class A, class T>
void recompute_block(A* pr, A* ds, const A* qb, const A* kt, const A* dob, const A* vt,
                     const A* lse, const A* dd, const AttentionParams& p, const void* mask,
                     int64_t b, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  matmul_nt(pr, qb, kt, rows, cols, p.e);
  mask_block<A, T>(pr, p, mask, b, i0, rows, j0, cols);
  for (int64_t i = 0; i < rows; ++i) {  // P = exp(S - lse); 0 for a fully masked row
    A* row = pr + i * cols;
    if (lse[i] == A(-INFINITY)) {
      std::fill(row, row + cols, A(0));
    } else {
      exp_shift(row, cols, lse[i]);
    }
  }
  matmul_nt(ds, dob, vt, rows, cols, p.ev);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      ds[i * cols + j] = pr[i * cols + j] * (ds[i * cols + j] - dd[i]);
    }
  }
}

template <class T>
void backward_kernel(const Tensor& dq_t, const Tensor& dk_t, const Tensor& dv_t,
                     const Tensor& dout_t, const Tensor& q_t, const Tensor& k_t, const Tensor& v_t,
                     const Tensor& out_t, const Tensor& lse_t, const Tensor& mask_t,
                     const AttentionParams& p) {
  using A = Acc<T>;
  const T* q = static_cast<const T*>(q_t.data_ptr());
  const T* k = static_cast<const T*>(k_t.data_ptr());
  const T* v = static_cast<const T*>(v_t.data_ptr());
  const T* o = static_cast<const T*>(out_t.data_ptr());
  const T* dout = static_cast<const T*>(dout_t.data_ptr());
  const A* lse = static_cast<const A*>(lse_t.data_ptr());
  const void* mask = p.has_mask ? mask_t.data_ptr() : nullptr;
  const A scale = static_cast<A>(p.scale);
  const int64_t work = kRows * p.s * (p.e + p.ev);
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, work));

  // D_i = rowsum(dO_i * O_i).
  std::vector<A> dd(static_cast<size_t>(p.batch * p.l));
  parallel_for(p.batch * p.l, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.ev)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   A acc = 0;
                   for (int64_t y = 0; y < p.ev; ++y) {
                     acc += static_cast<A>(dout[r * p.ev + y]) * static_cast<A>(o[r * p.ev + y]);
                   }
                   dd[r] = acc;
                 }
               });

  // dK, dV: a task per (batch, block of kKeys keys) walks every query block.
  const int64_t kblocks = (p.s + kKeys - 1) / kKeys;
  parallel_for(p.batch * kblocks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<A> qb(kRows * p.e), dob(kRows * p.ev), kt(p.e * kKeys), vt(p.ev * kKeys),
        pr(kRows * kKeys), ds(kRows * kKeys), prt(kRows * kKeys), dst(kRows * kKeys),
        dk(kKeys * p.e), dv(kKeys * p.ev);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / kblocks, j0 = (t % kblocks) * kKeys;
      const int64_t cols = std::min(kKeys, p.s - j0);
      load_rows_t(kt.data(), k + b * p.s * p.e, j0, cols, p.e);
      load_rows_t(vt.data(), v + b * p.s * p.ev, j0, cols, p.ev);
      std::fill(dk.begin(), dk.end(), A(0));
      std::fill(dv.begin(), dv.end(), A(0));
      const int64_t i_begin = p.causal ? (j0 / kRows) * kRows : 0;
      for (int64_t i0 = i_begin; i0 < p.l; i0 += kRows) {
        const int64_t rows = std::min(kRows, p.l - i0);
        load_rows(qb.data(), q + b * p.l * p.e, i0, rows, p.e);
        load_rows(dob.data(), dout + b * p.l * p.ev, i0, rows, p.ev);
        recompute_block<A, T>(pr.data(), ds.data(), qb.data(), kt.data(), dob.data(), vt.data(),
                              lse + b * p.l + i0, dd.data() + b * p.l + i0, p, mask, b, i0, rows,
                              j0, cols);
        // dV (cols, ev) += P^T dO; dK (cols, e) += dS^T Q, through transposed copies so both
        // are tile products.
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            prt[j * rows + i] = pr[i * cols + j];
            dst[j * rows + i] = ds[i * cols + j];
          }
        }
        matmul_acc(dv.data(), prt.data(), dob.data(), cols, rows, p.ev);
        matmul_acc(dk.data(), dst.data(), qb.data(), cols, rows, p.e);
      }
      T* dko = static_cast<T*>(dk_t.data_ptr()) + (b * p.s + j0) * p.e;
      T* dvo = static_cast<T*>(dv_t.data_ptr()) + (b * p.s + j0) * p.ev;
      for (int64_t x = 0; x < cols * p.e; ++x) dko[x] = cast<T>(dk[x] * scale);
      for (int64_t x = 0; x < cols * p.ev; ++x) dvo[x] = cast<T>(dv[x]);
    }
  });

  // dQ: a task per (batch, block of kRows queries) walks its visible keys.
  const int64_t qblocks = (p.l + kRows - 1) / kRows;
  parallel_for(p.batch * qblocks, grain, [&](int64_t t0, int64_t t1) {
    std::vector<A> qb(kRows * p.e), dob(kRows * p.ev), kt(p.e * kKeys), kb(kKeys * p.e),
        vt(p.ev * kKeys), pr(kRows * kKeys), ds(kRows * kKeys), dq(kRows * p.e);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / qblocks, i0 = (t % qblocks) * kRows;
      const int64_t rows = std::min(kRows, p.l - i0);
      load_rows(qb.data(), q + b * p.l * p.e, i0, rows, p.e);
      load_rows(dob.data(), dout + b * p.l * p.ev, i0, rows, p.ev);
      std::fill(dq.begin(), dq.end(), A(0));
      const int64_t s_end = attn::key_end(p, i0 + rows - 1);
      for (int64_t j0 = 0; j0 < s_end; j0 += kKeys) {
        const int64_t cols = std::min(kKeys, s_end - j0);
        load_rows_t(kt.data(), k + b * p.s * p.e, j0, cols, p.e);
        load_rows(kb.data(), k + b * p.s * p.e, j0, cols, p.e);
        load_rows_t(vt.data(), v + b * p.s * p.ev, j0, cols, p.ev);
        recompute_block<A, T>(pr.data(), ds.data(), qb.data(), kt.data(), dob.data(), vt.data(),
                              lse + b * p.l + i0, dd.data() + b * p.l + i0, p, mask, b, i0, rows,
                              j0, cols);
        matmul_acc(dq.data(), ds.data(), kb.data(), rows, cols, p.e);
      }
      T* dqo = static_cast<T*>(dq_t.data_ptr()) + (b * p.l + i0) * p.e;
      for (int64_t x = 0; x < rows * p.e; ++x) dqo[x] = cast<T>(dq[x] * scale);
    }
  });
}

}  // namespace

void CpuBackend::attention_forward(const Tensor& out, const Tensor& lse, const Tensor& q,
                                   const Tensor& k, const Tensor& v, const Tensor& mask,
                                   const AttentionParams& p) {
  if (p.batch * p.l == 0) return;
  visit_float_dtype(q.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    forward_kernel<typename decltype(tag)::type>(out, lse, q, k, v, mask, p);
  });
}

void CpuBackend::attention_backward(const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                    const Tensor& dout, const Tensor& q, const Tensor& k,
                                    const Tensor& v, const Tensor& out, const Tensor& lse,
                                    const Tensor& mask, const AttentionParams& p) {
  if (p.batch == 0) return;
  visit_float_dtype(q.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    backward_kernel<typename decltype(tag)::type>(dq, dk, dv, dout, q, k, v, out, lse, mask, p);
  });
}

}  // namespace ember
