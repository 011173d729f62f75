// Shared by every CUDA kernel family: strided operand geometry, launch sizing and the stream to
// launch on. Plain types only, so the header compiles under nvcc and as C++ against the emulator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/macros.h"

namespace ember::cuda_kernels {

inline constexpr int kMaxDims = 16;
inline constexpr int kBlock = 256;
inline constexpr int64_t kMaxBlocks = 65535;  // grid-stride loops cover larger tensors

// Resident blocks per SM that memory-bound kernels of kBlock threads declare in
// __launch_bounds__(kBlock, kMinBlocksPerSm): at most 64 registers per thread, half of an SM's
// threads. Given the thread count alone, ptxas for sm_90 picks its own occupancy target and
// spills kernels that need 40-64 registers; half occupancy already keeps enough loads in flight.
inline constexpr int kMinBlocksPerSm = 4;
// The same for kernels over elements of type T: double math holds every value in a register pair,
// so those kernels ask for half as many blocks (at most 128 registers).
template <class T>
inline constexpr int kMinBlocksPerSmOf = sizeof(T) == 8 ? kMinBlocksPerSm / 2 : kMinBlocksPerSm;

// N operands sharing one shape (inputs broadcast with stride 0), strides in elements. Operand 0
// is the output by convention.
template <int N>
struct Strided {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t strides[N][kMaxDims];

  // Element offsets of linear (row-major) index i in each operand.
  EMBER_HD void offsets(int64_t i, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t c = i % sizes[d];
      i /= sizes[d];
      for (int k = 0; k < N; ++k) off[k] += c * strides[k][d];
    }
  }
};

// Blocks for n elements at `per_thread` elements per thread, capped (grid-stride beyond).
inline unsigned grid_for(int64_t n, int block = kBlock, int per_thread = 1,
                         int64_t max_blocks = kMaxBlocks) {
  const int64_t per_block = static_cast<int64_t>(block) * per_thread;
  int64_t blocks = (n + per_block - 1) / per_block;
  if (blocks < 1) blocks = 1;
  return static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
}

// Captured random kernels take (seed, offset) from a device buffer {seed, base offset} that each
// graph replay rewrites: seed = state[0], offset = state[1] + the offset within the graph.
EMBER_HD inline void philox_resolve(const uint64_t* state, uint64_t& seed, uint64_t& offset) {
  if (state != nullptr) {
    seed = state[0];
    offset += state[1];
  }
}

}  // namespace ember::cuda_kernels
