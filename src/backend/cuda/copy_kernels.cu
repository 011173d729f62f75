// Data-movement kernels: strided copy and fill, by element size (dtype-agnostic).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstring>

#include "backend/cuda/copy_kernels.h"

namespace ember::cuda_kernels {

namespace {

constexpr int kBlock = 256;
constexpr int64_t kMaxBlocks = 1024;  // grid-stride loops cover larger tensors

// Element offsets of linear index i in dst and src.
__device__ inline void offsets(const StridedLayout& l, int64_t i, int64_t& dst, int64_t& src) {
  dst = 0;
  src = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    int64_t c = i % l.sizes[d];
    i /= l.sizes[d];
    dst += c * l.dst_strides[d];
    src += c * l.src_strides[d];
  }
}

template <class T>
__global__ void copy_kernel(T* dst, const T* src, int64_t n, StridedLayout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t od, os;
    offsets(l, i, od, os);
    dst[od] = src[os];
  }
}

template <class T>
__global__ void fill_kernel(T* dst, T value, int64_t n, StridedLayout l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t od, os;
    offsets(l, i, od, os);
    dst[od] = value;
  }
}

dim3 grid_for(int64_t n) {
  int64_t blocks = (n + kBlock - 1) / kBlock;
  return dim3(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks));
}

template <class T>
cudaError_t copy_as(void* dst, const void* src, int64_t n, const StridedLayout& l,
                    cudaStream_t stream) {
  simt::launch(copy_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(dst),
               static_cast<const T*>(src), n, l);
  return cudaGetLastError();
}

template <class T>
cudaError_t fill_as(void* dst, uint64_t pattern, int64_t n, const StridedLayout& l,
                    cudaStream_t stream) {
  T value;
  std::memcpy(&value, &pattern, sizeof(T));  // little-endian: the low bytes hold the value
  simt::launch(fill_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(dst), value, n,
               l);
  return cudaGetLastError();
}

}  // namespace

// Calls fn with a value of the unsigned type of elem_size bytes: data movement needs no dtype.
template <class Fn>
cudaError_t by_element_size(int elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    case 8: return fn(uint64_t{});
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t strided_copy(void* dst, const void* src, int elem_size, int64_t n,
                         const StridedLayout& layout, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_element_size(elem_size, [&](auto tag) {
    return copy_as<decltype(tag)>(dst, src, n, layout, stream);
  });
}

cudaError_t strided_fill(void* dst, uint64_t pattern, int elem_size, int64_t n,
                         const StridedLayout& layout, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_element_size(elem_size, [&](auto tag) {
    return fill_as<decltype(tag)>(dst, pattern, n, layout, stream);
  });
}

}  // namespace ember::cuda_kernels
