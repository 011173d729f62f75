// Correct kernels for the emulator's tests: the patterns ember's CUDA backend relies on
// (grid-stride loops, shuffles, shared memory, barriers, atomics), each checked on the CPU.
#include "kernels.h"

// ---- element-wise and reductions ----------------------------------------------------------------

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    c[i] = a[i] + b[i];
  }
}

void launch_add(const float* a, const float* b, float* c, int n, int blocks, int threads,
                cudaStream_t stream) {
  simt::launch(add_kernel, blocks, threads, 0, stream, a, b, c, n);
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// blockDim.x is a multiple of 32 and at most 1024.
__global__ void block_sum_kernel(const float* x, float* out, int n) {
  __shared__ float warp_sums[32];
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) atomicAdd(out, v);
  }
}

void launch_block_sum(const float* x, float* out, int n, int blocks, int threads,
                      cudaStream_t stream) {
  simt::launch(block_sum_kernel, blocks, threads, 0, stream, x, out, n);
}

__global__ void count_positive_kernel(const float* x, unsigned* count, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned ballot = __ballot_sync(0xffffffffu, i < n && x[i] > 0.0f);
  if (threadIdx.x % 32 == 0) atomicAdd(count, static_cast<unsigned>(__popc(ballot)));
}

void launch_count_positive(const float* x, unsigned* count, int n, cudaStream_t stream) {
  const int threads = 128;
  simt::launch(count_positive_kernel, (n + threads - 1) / threads, threads, 0, stream, x, count, n);
}

// ---- shared-memory tiles ------------------------------------------------------------------------

// Blocks of 32x8 threads move a 32x32 tile; the extra column avoids bank conflicts on a GPU.
__global__ void transpose_kernel(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

void launch_transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
  const dim3 grid((cols + 31) / 32, (rows + 31) / 32);
  simt::launch(transpose_kernel, grid, dim3(32, 8), 0, stream, in, out, rows, cols);
}

__global__ void matmul_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  SIMT_DYNAMIC_SHARED(float, smem);
  const int tile = blockDim.x;
  float* as = smem;                // (tile, tile)
  float* bs = smem + tile * tile;  // (tile, tile)
  const int row = blockIdx.y * tile + threadIdx.y, col = blockIdx.x * tile + threadIdx.x;
  float acc = 0.0f;
  for (int t0 = 0; t0 < k; t0 += tile) {
    const int ak = t0 + threadIdx.x, bk = t0 + threadIdx.y;
    as[threadIdx.y * tile + threadIdx.x] = row < m && ak < k ? a[row * k + ak] : 0.0f;
    bs[threadIdx.y * tile + threadIdx.x] = bk < k && col < n ? b[bk * n + col] : 0.0f;
    __syncthreads();
    for (int j = 0; j < tile; ++j) acc += as[threadIdx.y * tile + j] * bs[j * tile + threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}

void launch_matmul(const float* a, const float* b, float* c, int m, int n, int k, int tile,
                   cudaStream_t stream) {
  const dim3 grid((n + tile - 1) / tile, (m + tile - 1) / tile);
  const size_t smem = 2 * tile * tile * sizeof(float);
  simt::launch(matmul_kernel, grid, dim3(tile, tile), smem, stream, a, b, c, m, n, k);
}

__global__ void reverse_kernel(const float* in, float* out, int n) {
  SIMT_DYNAMIC_SHARED(float, buffer);
  for (int i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = in[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = buffer[n - 1 - i];
}

void launch_reverse(const float* in, float* out, int n, cudaStream_t stream) {
  simt::launch(reverse_kernel, 1, 1024, n * sizeof(float), stream, in, out, n);
}

// ---- device math --------------------------------------------------------------------------------

__global__ void device_math_kernel(const double* x, const double* y, double* out, double* rounded,
                                   int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i] = log(x[i]);
  out[4 * i + 1] = sin(x[i]);
  out[4 * i + 2] = static_cast<double>(expf(static_cast<float>(x[i])));
  out[4 * i + 3] = x[i] * y[i] + 1.0;                  // nvcc contracts this into an FMA
  rounded[i] = __dadd_rn(__dmul_rn(x[i], y[i]), 1.0);  // and never this
}

void launch_device_math(const double* x, const double* y, double* out, double* rounded, int n,
                        cudaStream_t stream) {
  simt::launch(device_math_kernel, (n + 127) / 128, 128, 0, stream, x, y, out, rounded, n);
}

cudaError_t allow_reverse_shared(int bytes) {
  return cudaFuncSetAttribute(reverse_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

// ---- atomics ------------------------------------------------------------------------------------

__global__ void atomics_kernel(AtomicResults* r, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  atomicAdd(&r->add_i, 1);
  atomicSub(&r->sub_i, 2);
  atomicMax(&r->max_i, t);
  atomicMin(&r->min_i, -t);
  atomicExch(&r->exch_i, 7);
  int old = r->cas_i, seen;
  do {  // an increment built from atomicCAS, as kernels do for unsupported types
    seen = old;
    old = atomicCAS(&r->cas_i, seen, seen + 3);
  } while (old != seen);
  atomicAdd(&r->add_u, 2u);
  atomicAnd(&r->and_u, ~(1u << (t % 32)));
  atomicOr(&r->or_u, 1u << (t % 32));
  atomicXor(&r->xor_u, static_cast<unsigned>(t));
  atomicInc(&r->inc_u, 9u);
  atomicDec(&r->dec_u, 9u);
  atomicAdd(&r->add_ull, static_cast<unsigned long long>(t));
  atomicMax(&r->max_ull, static_cast<unsigned long long>(t) << 33);
  atomicMin(&r->min_ll, -static_cast<long long>(t) * 3);
  atomicAdd(&r->add_f, 0.5f);
  atomicAdd(&r->add_d, 0.25);
}

void launch_atomics(AtomicResults* out, int threads, cudaStream_t stream) {
  simt::launch(atomics_kernel, (threads + 63) / 64, 64, 0, stream, out, threads);
}

__global__ void bump_param_kernel(int* out, int v, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  v += i;  // each thread owns its copy of the parameter
  if (i < n) out[i] = v;
}

void launch_bump_param(int* out, int v, int n, cudaStream_t stream) {
  simt::launch(bump_param_kernel, (n + 63) / 64, 64, 0, stream, out, v, n);
}

// ---- warp collectives ---------------------------------------------------------------------------

__global__ void warp_ops_kernel(const int* in, unsigned* out, int threads) {
  const int t = threadIdx.x;
  const unsigned full = __activemask();
  const int v = in[t];
  unsigned* o = out + t * 10;
  o[0] = static_cast<unsigned>(__shfl_sync(full, v, 3));
  o[1] = static_cast<unsigned>(__shfl_up_sync(full, v, 2, 16));
  o[2] = static_cast<unsigned>(__shfl_down_sync(full, v, 5, 8));
  o[3] = static_cast<unsigned>(__shfl_xor_sync(full, v, 6));
  o[4] = __ballot_sync(full, v % 3 == 0);
  o[5] = static_cast<unsigned>(__any_sync(full, v > 1000));
  o[6] = static_cast<unsigned>(__all_sync(full, v >= 0));
  o[7] = __match_any_sync(full, v % 4);
  o[8] = __reduce_add_sync(full, static_cast<unsigned>(v));
  __syncwarp(full);
  o[9] = full;
}

void launch_warp_ops(const int* in, unsigned* out, int threads, cudaStream_t stream) {
  simt::launch(warp_ops_kernel, 1, threads, 0, stream, in, out, threads);
}

__global__ void split_warp_kernel(const int* in, int* out) {
  const int lane = threadIdx.x % 32;
  const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  // Each half reads its own first lane: two independent meetings in one warp.
  out[threadIdx.x] = __shfl_sync(mask, in[threadIdx.x], lane < 16 ? 0 : 16);
}

void launch_split_warp(const int* in, int* out, cudaStream_t stream) {
  simt::launch(split_warp_kernel, 1, 64, 0, stream, in, out);
}

__global__ void barrier_reductions_kernel(const int* in, int* out) {
  const int p = in[threadIdx.x] > 0;
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  if (threadIdx.x == blockDim.x - 1) {
    out[0] = count;
    out[1] = all;
    out[2] = any;
  }
}

void launch_barrier_reductions(const int* in, int* out, int threads, cudaStream_t stream) {
  simt::launch(barrier_reductions_kernel, 1, threads, 0, stream, in, out);
}

// ---- constant memory, built-in variables, scheduling --------------------------------------------

__constant__ float scale_table[16];

__global__ void scale_by_table_kernel(const float* x, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scale_table[i % 16] * x[i];
}

void launch_scale_by_table(const float* x, float* out, int n, cudaStream_t stream) {
  simt::launch(scale_by_table_kernel, (n + 127) / 128, 128, 0, stream, x, out, n);
}

cudaError_t set_scale_table(const float* values16) {
  return cudaMemcpyToSymbol(scale_table, values16, 16 * sizeof(float));
}

__global__ void indices_kernel(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned* o = out + (block * blockDim.x * blockDim.y * blockDim.z + thread) * 6;
  o[0] = threadIdx.x;
  o[1] = threadIdx.y;
  o[2] = threadIdx.z;
  o[3] = blockIdx.x;
  o[4] = blockIdx.y;
  o[5] = blockIdx.z + 100 * (blockDim.z + 10 * gridDim.z);
}

void launch_indices(unsigned* out, dim3 grid, dim3 block, cudaStream_t stream) {
  simt::launch(indices_kernel, grid, block, 0, stream, out);
}

__global__ void spin_flag_kernel(int* out) {
  __shared__ int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    while (atomicAdd(&flag, 0) == 0) __nanosleep(100);
    out[0] = flag;
  }
  if (threadIdx.x == blockDim.x - 1) atomicExch(&flag, 42);
}

void launch_spin_flag(int* out, int threads, cudaStream_t stream) {
  simt::launch(spin_flag_kernel, 1, threads, 0, stream, out);
}
