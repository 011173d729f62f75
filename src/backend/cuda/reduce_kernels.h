// Launchers for reductions, max/min with index, scans and softmax (reduce_*.cu, scan_kernels.cu,
// softmax_kernels.cu). Plain types only, so the header compiles under nvcc and as C++ against the
// emulator. Every launcher issues its kernels on `stream` and returns cudaGetLastError().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "backend/cuda/kernel_utils.h"
#include "ember/dtype.h"
#include "kernels/reduce_layout.h"
#include "kernels/reduce_ops.h"

namespace ember::cuda_kernels {

using ember::ReduceLayout;

// How a reduction runs:
// - Inner: `group` threads (1..32, or 256 = a whole block) fold one output, striding over its
//   reduced positions; a warp-shuffle tree (and shared memory across warps) combines them.
// - Outer: the innermost kept dim is contiguous in the input, so 32 threads take 32 adjacent
//   outputs and read coalesced rows; 8 thread rows split the reduced range.
// When there are too few blocks for the device and the reduction is long, the reduced range is cut
// into `chunks` pieces whose partial accumulators go to a workspace, combined by a second kernel.
enum class ReducePath : uint8_t { Inner, Outer };

struct ReducePlan {
  ReducePath path = ReducePath::Inner;
  int group = 1;          // Inner: threads per output
  int64_t chunks = 1;     // pieces of the reduced range (1: a single pass)
  int64_t chunk_len = 0;  // reduced positions per piece
};

inline constexpr int kReduceThreads = 256;
inline constexpr int kOuterTile = 32;  // Outer: adjacent outputs per block
// Blocks that keep every SM of a large GPU busy; fewer than this and a long reduction is split.
inline constexpr int64_t kTargetBlocks = 512;
// Bytes of the largest accumulator (Welford in double), for sizing the workspace.
inline constexpr size_t kMaxAccBytes = 24;

// The path, threads per output and chunking for a layout; min_chunk is the shortest piece of the
// reduced range worth a block of its own.
inline ReducePlan plan_reduce(const ReduceLayout& l) {
  ReducePlan p;
  const bool outer =
      l.nk > 0 && l.kin[l.nk - 1] == 1 && l.rin[l.nr - 1] != 1 && l.ks[l.nk - 1] >= 8;
  int64_t blocks, min_chunk;
  if (outer) {
    p.path = ReducePath::Outer;
    blocks = (l.n_out + kOuterTile - 1) / kOuterTile;
    min_chunk = 256;  // rows: 32 per thread row
  } else {
    int g = 1;
    while (g < 32 && g < l.n_red) g *= 2;
    if (l.n_red > 1024) g = kReduceThreads;
    p.group = g;
    const int64_t per_block = g >= kReduceThreads ? 1 : kReduceThreads / g;
    blocks = (l.n_out + per_block - 1) / per_block;
    min_chunk = 16 * static_cast<int64_t>(g);
  }
  p.chunk_len = l.n_red;
  if (blocks < kTargetBlocks && l.n_red >= 2 * min_chunk) {
    int64_t chunks = (l.n_red + min_chunk - 1) / min_chunk;
    const int64_t want = (kTargetBlocks + blocks - 1) / blocks;
    if (chunks > want) chunks = want < 2 ? 2 : want;
    p.chunk_len = (l.n_red + chunks - 1) / chunks;
    p.chunks = (l.n_red + p.chunk_len - 1) / p.chunk_len;
  }
  return p;
}

inline size_t reduce_workspace_bytes(const ReduceLayout& l, const ReducePlan& p) {
  return p.chunks > 1 ? static_cast<size_t>(l.n_out * p.chunks) * kMaxAccBytes : 0;
}

// out = op over the layout; in_dtype is the element type read, out_dtype the one written (the
// input's, int64 for integer sum/prod, bool or uint8 for any/all). workspace: see the plan.
// Sum, Prod, Max, Min, Any and All (reduce_basic.cu):
cudaError_t reduce_basic(ReduceOp op, DType in_dtype, DType out_dtype, const ReduceParams& params,
                         const ReduceLayout& layout, const ReducePlan& plan, const void* in,
                         void* out, void* workspace, cudaStream_t stream);
// Mean, Var, Std, the norms and LogSumExp, floating inputs only (reduce_stats.cu):
cudaError_t reduce_stats(ReduceOp op, DType in_dtype, const ReduceParams& params,
                         const ReduceLayout& layout, const ReducePlan& plan, const void* in,
                         void* out, void* workspace, cudaStream_t stream);

// values / indices (sharing out strides) = max or min over the layout's single reduced dim and
// the position of the first extreme (NaN counts as extreme; ties keep the lowest index).
cudaError_t arg_reduce(bool is_max, DType dtype, const ReduceLayout& layout, const ReducePlan& plan,
                       const void* in, void* values, int64_t* indices, void* workspace,
                       cudaStream_t stream);

// Contiguous in and out of one dtype viewed as (outer, n, inner): running sum or product along n.
cudaError_t scan(ScanOp op, DType dtype, const void* in, void* out, int64_t outer, int64_t n,
                 int64_t inner, cudaStream_t stream);

// Contiguous in and out of one floating dtype viewed as (outer, n, inner): softmax (or
// log_softmax) along n.
cudaError_t softmax(bool log, DType dtype, const void* in, void* out, int64_t outer, int64_t n,
                    int64_t inner, cudaStream_t stream);

}  // namespace ember::cuda_kernels
