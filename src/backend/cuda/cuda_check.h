// Checking CUDA runtime calls: a failed call raises ember::Error naming the call and the error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace ember::cuda_detail {

// Clears the runtime's last error and raises "[cuda] <call>: <description>".
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call);

inline void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw_cuda_error(err, call);
}

// Raises "[cuda] invalid device ordinal ..." unless 0 <= device < device_count().
void check_device(int device, const char* op = "cuda");

}  // namespace ember::cuda_detail

#define EMBER_CUDA_CHECK(call) ::ember::cuda_detail::check((call), #call)
