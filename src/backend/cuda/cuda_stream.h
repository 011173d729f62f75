// The stream every kernel and copy of the CUDA backend is issued on: the current stream of a
// device (ember::cuda::current_stream). Host code only.
#pragma once

#include <cuda_runtime_api.h>

namespace ember::cuda_detail {

// The current stream of device (-1: the current device).
cudaStream_t current_stream(int device = -1);

}  // namespace ember::cuda_detail
