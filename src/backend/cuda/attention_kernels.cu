// Fused scaled dot-product attention on the device, FlashAttention-2's schedule without tensor
// cores: the forward runs a block per (batch, tile of kQueries query rows), one thread per row,
// with the K and V tiles of kKeyTile keys staged through shared memory and an online softmax in
// registers; it saves each row's log-sum-exp. The backward recomputes probabilities from it: a
// dQ kernel shaped like the forward (which also writes D = rowsum(dO * O)), then a dK/dV kernel
// with a block per (batch, tile of kKeys keys), one thread per key, that stages Q and dO tiles.
// Every thread of a block reaches every barrier; rows and keys past the end only skip the math.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstdint>

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/kernel_utils.h"
#include "core/dispatch.h"
#include "kernels/attention_ops.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

constexpr int kMaxHead = static_cast<int>(kAttentionMaxHeadDim);
constexpr int kQueries = 64;  // query rows (threads) per forward / dQ block
constexpr int kKeys = 64;     // keys (threads) per dK/dV block

// Rows of a shared-memory tile: 32 KiB of tiles for head dims of 128 (float), half for double.
template <class A>
inline constexpr int kTile = sizeof(A) == 8 ? 16 : 32;

// Threads of the block copy rows [r0, r0 + rows) of src (*, n) into dst (kTile<A>, n) as A.
template <class A, class T>
__device__ inline void stage_rows(A* dst, const T* src, int64_t r0, int64_t rows, int64_t n) {
  for (int64_t x = threadIdx.x; x < rows * n; x += blockDim.x) {
    dst[x] = static_cast<A>(src[r0 * n + x]);
  }
}

// ---- forward ------------------------------------------------------------------------------------

// grid (ceil(L / kQueries), B), block kQueries; smem kTile * (E + Ev) accumulators.
template <class T>
__global__ void __launch_bounds__(kQueries)
    forward_kernel(T* out, attn::acc_t<T>* lse, const T* q, const T* k, const T* v,
                   const void* mask, AttentionParams p) {
  using A = attn::acc_t<T>;
  constexpr int kBc = kTile<A>;
  SIMT_DYNAMIC_SHARED(A, smem);
  A* ks = smem;              // (kBc, E)
  A* vs = smem + kBc * p.e;  // (kBc, Ev)
  const int64_t b = blockIdx.y;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kQueries;
  const int64_t i = i0 + threadIdx.x;
  const bool active = i < p.l;
  A qr[kMaxHead], acc[kMaxHead];
  if (active) {
    for (int64_t x = 0; x < p.e; ++x) qr[x] = static_cast<A>(q[(b * p.l + i) * p.e + x]);
  }
  for (int64_t y = 0; y < p.ev; ++y) acc[y] = A(0);
  A m = -INFINITY, z = A(0);
  const int64_t last = (i0 + kQueries < p.l ? i0 + kQueries : p.l) - 1;
  const int64_t s_end = attn::key_end(p, last);
  const T* kb = k + b * p.s * p.e;
  const T* vb = v + b * p.s * p.ev;
  for (int64_t j0 = 0; j0 < s_end; j0 += kBc) {
    const int64_t cols = s_end - j0 < kBc ? s_end - j0 : kBc;
    __syncthreads();  // the previous tile is no longer read
    stage_rows(ks, kb, j0, cols, p.e);
    stage_rows(vs, vb, j0, cols, p.ev);
    __syncthreads();
    if (!active) continue;
    A sc[kBc];
    A mt = m;
    for (int64_t j = 0; j < cols; ++j) {
      A dot = 0;
      for (int64_t x = 0; x < p.e; ++x) dot += qr[x] * ks[j * p.e + x];
      sc[j] = attn::score<A, T>(dot, p, mask, b, i, j0 + j);
      mt = sc[j] > mt ? sc[j] : mt;
    }
    if (mt == A(-INFINITY)) continue;  // nothing visible yet
    const A corr = m == A(-INFINITY) ? A(0) : static_cast<A>(exp(m - mt));
    for (int64_t y = 0; y < p.ev; ++y) acc[y] *= corr;
    z *= corr;
    for (int64_t j = 0; j < cols; ++j) {
      const A e = static_cast<A>(exp(sc[j] - mt));
      z += e;
      for (int64_t y = 0; y < p.ev; ++y) acc[y] += e * vs[j * p.ev + y];
    }
    m = mt;
  }
  if (!active) return;
  const A inv = z == A(0) ? A(0) : A(1) / z;
  for (int64_t y = 0; y < p.ev; ++y) out[(b * p.l + i) * p.ev + y] = cast<T>(acc[y] * inv);
  lse[b * p.l + i] = z == A(0) ? A(-INFINITY) : m + static_cast<A>(log(z));
}

// ---- backward -----------------------------------------------------------------------------------

// dQ and D = rowsum(dO * O): grid and smem as the forward's.
template <class T>
__global__ void __launch_bounds__(kQueries)
    backward_dq_kernel(T* dq, attn::acc_t<T>* dd, const T* dout, const T* q, const T* k, const T* v,
                       const T* out, const attn::acc_t<T>* lse, const void* mask,
                       AttentionParams p) {
  using A = attn::acc_t<T>;
  constexpr int kBc = kTile<A>;
  SIMT_DYNAMIC_SHARED(A, smem);
  A* ks = smem;
  A* vs = smem + kBc * p.e;
  const int64_t b = blockIdx.y;
  const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kQueries;
  const int64_t i = i0 + threadIdx.x;
  const bool active = i < p.l;
  const int64_t row = b * p.l + i;
  A qr[kMaxHead], dor[kMaxHead], acc[kMaxHead];
  A d = 0, l = 0;
  if (active) {
    for (int64_t x = 0; x < p.e; ++x) qr[x] = static_cast<A>(q[row * p.e + x]);
    for (int64_t y = 0; y < p.ev; ++y) {
      dor[y] = static_cast<A>(dout[row * p.ev + y]);
      d += dor[y] * static_cast<A>(out[row * p.ev + y]);
    }
    dd[row] = d;
    l = lse[row];
  }
  for (int64_t x = 0; x < p.e; ++x) acc[x] = A(0);
  const int64_t last = (i0 + kQueries < p.l ? i0 + kQueries : p.l) - 1;
  const int64_t s_end = attn::key_end(p, last);
  for (int64_t j0 = 0; j0 < s_end; j0 += kBc) {
    const int64_t cols = s_end - j0 < kBc ? s_end - j0 : kBc;
    __syncthreads();
    stage_rows(ks, k + b * p.s * p.e, j0, cols, p.e);
    stage_rows(vs, v + b * p.s * p.ev, j0, cols, p.ev);
    __syncthreads();
    if (!active) continue;
    for (int64_t j = 0; j < cols; ++j) {
      A dot = 0;
      for (int64_t x = 0; x < p.e; ++x) dot += qr[x] * ks[j * p.e + x];
      const A pr = attn::prob(attn::score<A, T>(dot, p, mask, b, i, j0 + j), l);
      if (pr == A(0)) continue;
      A dp = 0;
      for (int64_t y = 0; y < p.ev; ++y) dp += dor[y] * vs[j * p.ev + y];
      const A ds = pr * (dp - d);
      for (int64_t x = 0; x < p.e; ++x) acc[x] += ds * ks[j * p.e + x];
    }
  }
  if (!active) return;
  const A scale = static_cast<A>(p.scale);
  for (int64_t x = 0; x < p.e; ++x) dq[row * p.e + x] = cast<T>(acc[x] * scale);
}

// dK and dV: grid (ceil(S / kKeys), B), block kKeys; smem kTile * (E + Ev + 2) accumulators for
// the Q and dO tiles and their rows' lse and D.
template <class T>
__global__ void __launch_bounds__(kKeys)
    backward_dkv_kernel(T* dk, T* dv, const T* dout, const T* q, const T* k, const T* v,
                        const attn::acc_t<T>* lse, const attn::acc_t<T>* dd, const void* mask,
                        AttentionParams p) {
  using A = attn::acc_t<T>;
  constexpr int kBr = kTile<A>;
  SIMT_DYNAMIC_SHARED(A, smem);
  A* qs = smem;              // (kBr, E)
  A* dos = qs + kBr * p.e;   // (kBr, Ev)
  A* ls = dos + kBr * p.ev;  // (kBr)
  A* ds_ = ls + kBr;         // (kBr)
  const int64_t b = blockIdx.y;
  const int64_t j0 = static_cast<int64_t>(blockIdx.x) * kKeys;
  const int64_t j = j0 + threadIdx.x;
  const bool active = j < p.s;
  const int64_t key = b * p.s + j;
  A kr[kMaxHead], vr[kMaxHead], dkr[kMaxHead], dvr[kMaxHead];
  if (active) {
    for (int64_t x = 0; x < p.e; ++x) kr[x] = static_cast<A>(k[key * p.e + x]);
    for (int64_t y = 0; y < p.ev; ++y) vr[y] = static_cast<A>(v[key * p.ev + y]);
  }
  for (int64_t x = 0; x < p.e; ++x) dkr[x] = A(0);
  for (int64_t y = 0; y < p.ev; ++y) dvr[y] = A(0);
  // Queries before j0 see none of this block's keys under the causal mask.
  const int64_t i_begin = p.causal ? (j0 < p.l ? j0 : p.l) : 0;
  for (int64_t i0 = i_begin; i0 < p.l; i0 += kBr) {
    const int64_t rows = p.l - i0 < kBr ? p.l - i0 : kBr;
    __syncthreads();
    stage_rows(qs, q + b * p.l * p.e, i0, rows, p.e);
    stage_rows(dos, dout + b * p.l * p.ev, i0, rows, p.ev);
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
      ls[r] = lse[b * p.l + i0 + r];
      ds_[r] = dd[b * p.l + i0 + r];
    }
    __syncthreads();
    if (!active) continue;
    for (int64_t r = 0; r < rows; ++r) {
      A dot = 0;
      for (int64_t x = 0; x < p.e; ++x) dot += qs[r * p.e + x] * kr[x];
      const A pr = attn::prob(attn::score<A, T>(dot, p, mask, b, i0 + r, j), ls[r]);
      if (pr == A(0)) continue;
      A dp = 0;
      for (int64_t y = 0; y < p.ev; ++y) {
        dvr[y] += pr * dos[r * p.ev + y];
        dp += dos[r * p.ev + y] * vr[y];
      }
      const A dsc = pr * (dp - ds_[r]);
      for (int64_t x = 0; x < p.e; ++x) dkr[x] += dsc * qs[r * p.e + x];
    }
  }
  if (!active) return;
  const A scale = static_cast<A>(p.scale);
  for (int64_t x = 0; x < p.e; ++x) dk[key * p.e + x] = cast<T>(dkr[x] * scale);
  for (int64_t y = 0; y < p.ev; ++y) dv[key * p.ev + y] = cast<T>(dvr[y]);
}

template <class A>
size_t tile_bytes(const AttentionParams& p, int64_t extra) {
  return static_cast<size_t>(kTile<A> * (p.e + p.ev + extra)) * sizeof(A);
}

unsigned blocks_for(int64_t n, int per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace

cudaError_t attention_forward(DType dtype, void* out, void* lse, const void* q, const void* k,
                              const void* v, const void* mask, const AttentionParams& p,
                              cudaStream_t stream) {
  if (p.batch == 0 || p.l == 0) return cudaSuccess;
  if (p.e > kMaxHead || p.ev > kMaxHead) return cudaErrorInvalidValue;
  return visit_float_dtype(dtype, "scaled_dot_product_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = attn::acc_t<T>;
    const dim3 grid(blocks_for(p.l, kQueries), static_cast<unsigned>(p.batch));
    simt::launch(forward_kernel<T>, grid, dim3(kQueries), tile_bytes<A>(p, 0), stream,
                 static_cast<T*>(out), static_cast<A*>(lse), static_cast<const T*>(q),
                 static_cast<const T*>(k), static_cast<const T*>(v), mask, p);
    return cudaGetLastError();
  });
}

cudaError_t attention_backward(DType dtype, void* dq, void* dk, void* dv, void* dd,
                               const void* dout, const void* q, const void* k, const void* v,
                               const void* out, const void* lse, const void* mask,
                               const AttentionParams& p, cudaStream_t stream) {
  if (p.batch == 0) return cudaSuccess;
  if (p.e > kMaxHead || p.ev > kMaxHead) return cudaErrorInvalidValue;
  return visit_float_dtype(dtype, "scaled_dot_product_attention", [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    using A = attn::acc_t<T>;
    const auto* qt = static_cast<const T*>(q);
    const auto* kt = static_cast<const T*>(k);
    const auto* vt = static_cast<const T*>(v);
    const auto* dot = static_cast<const T*>(dout);
    if (p.l > 0) {
      const dim3 grid(blocks_for(p.l, kQueries), static_cast<unsigned>(p.batch));
      simt::launch(backward_dq_kernel<T>, grid, dim3(kQueries), tile_bytes<A>(p, 0), stream,
                   static_cast<T*>(dq), static_cast<A*>(dd), dot, qt, kt, vt,
                   static_cast<const T*>(out), static_cast<const A*>(lse), mask, p);
      const cudaError_t err = cudaGetLastError();
      if (err != cudaSuccess) return err;
    }
    if (p.s > 0) {
      const dim3 grid(blocks_for(p.s, kKeys), static_cast<unsigned>(p.batch));
      simt::launch(backward_dkv_kernel<T>, grid, dim3(kKeys), tile_bytes<A>(p, 2), stream,
                   static_cast<T*>(dk), static_cast<T*>(dv), dot, qt, kt, vt,
                   static_cast<const A*>(lse), static_cast<const A*>(dd), mask, p);
    }
    return cudaGetLastError();
  });
}

}  // namespace ember::cuda_kernels
