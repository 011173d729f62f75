// Data-movement kernels: strided copy and fill, by element size (dtype-agnostic).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstring>

#include "backend/cuda/copy_kernels.h"

namespace ember::cuda_kernels {

namespace {

template <class T>
__global__ void copy_kernel(T* dst, const T* src, int64_t n, Strided<2> l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[2];
    l.offsets(i, off);
    dst[off[0]] = src[off[1]];
  }
}

template <class T>
__global__ void fill_kernel(T* dst, T value, int64_t n, Strided<1> l) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[1];
    l.offsets(i, off);
    dst[off[0]] = value;
  }
}

template <class T>
cudaError_t copy_as(void* dst, const void* src, int64_t n, const Strided<2>& l,
                    cudaStream_t stream) {
  simt::launch(copy_kernel<T>, grid_for(n), dim3(kBlock), 0, stream, static_cast<T*>(dst),
               static_cast<const T*>(src), n, l);
  return cudaGetLastError();
}

template <class T>
cudaError_t fill_as(void* dst, uint64_t pattern, int64_t n, const Strided<1>& l,
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
                         const Strided<2>& layout, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_element_size(elem_size, [&](auto tag) {
    return copy_as<decltype(tag)>(dst, src, n, layout, stream);
  });
}

cudaError_t strided_fill(void* dst, uint64_t pattern, int elem_size, int64_t n,
                         const Strided<1>& layout, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_element_size(elem_size, [&](auto tag) {
    return fill_as<decltype(tag)>(dst, pattern, n, layout, stream);
  });
}

}  // namespace ember::cuda_kernels
