// The emulated runtime's call counts (simt/src/cudart_shim.cpp, cudart_streams.cpp), for tests.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace simt {

// How many times the runtime calls that move or wait for data were made (since the start or the
// last reset_api_counts), and the last cudaMemcpyAsync: tests check that a path takes the calls it
// should (one direct copy, no synchronisation) rather than staging or waiting.
struct ApiCounts {
  std::uint64_t memcpy = 0;              // cudaMemcpy
  std::uint64_t memcpy_async = 0;        // cudaMemcpyAsync
  std::uint64_t stream_synchronize = 0;  // cudaStreamSynchronize
  std::uint64_t device_synchronize = 0;  // cudaDeviceSynchronize
  std::uint64_t malloc = 0;              // cudaMalloc
  std::uint64_t host_alloc = 0;          // cudaHostAlloc and cudaMallocHost
};
struct MemcpyRecord {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t count = 0;
  cudaMemcpyKind kind = cudaMemcpyDefault;
  cudaStream_t stream = nullptr;
};
ApiCounts api_counts();
void reset_api_counts();
MemcpyRecord last_memcpy_async();

}  // namespace simt
