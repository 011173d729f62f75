// CUDA optimizer updates: the parameters' pointers, sizes and step scalars go into one table that
// travels to the device with a single non-blocking copy from pinned memory, then one kernel
// updates every tensor (optim_kernels.cu).
#include <cstring>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/optim_kernels.h"
#include "ember/cuda.h"
#include "ember/half.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;

void CudaBackend::optim_step(OptimOp op, const std::vector<TensorList>& slots, const OptimHyper& h,
                             const std::vector<OptimTensorScalars>& scalars) {
  if (slots.empty() || slots[0].empty()) return;
  const Tensor& first = slots[0][0];
  const size_t count = slots[0].size();
  const int64_t vec_bytes = static_cast<int64_t>(first.element_size()) * 4;
  int64_t nchunks = 0;
  for (const Tensor& p : slots[0]) {
    nchunks += (p.numel() + cuda_kernels::kOptimChunk - 1) / cuda_kernels::kOptimChunk;
  }
  if (nchunks == 0) return;
  const int64_t words = static_cast<int64_t>(count) * cuda_kernels::kOptimTensorWords + 2 * nchunks;
  Tensor host = make_empty({words}, TensorOptions().dtype(kInt64).pinned_memory(true));
  int64_t* w = host.data_ptr<int64_t>();
  int64_t* chunk = w + count * cuda_kernels::kOptimTensorWords;
  for (size_t i = 0; i < count; ++i) {
    int64_t* e = w + i * cuda_kernels::kOptimTensorWords;
    bool aligned = true;
    for (int k = 0; k < kOptimSlots; ++k) {
      const bool present = k < static_cast<int>(slots.size()) && slots[k][i].defined();
      const auto addr = present ? reinterpret_cast<uintptr_t>(slots[k][i].data_ptr()) : 0;
      e[k] = static_cast<int64_t>(addr);
      aligned = aligned && addr % static_cast<uintptr_t>(vec_bytes) == 0;
    }
    const int64_t n = slots[0][i].numel();
    e[kOptimSlots] = n;
    e[kOptimSlots + 1] = static_cast<int64_t>(detail::double_bits(scalars[i].a));
    e[kOptimSlots + 2] = static_cast<int64_t>(detail::double_bits(scalars[i].b));
    e[kOptimSlots + 3] = (scalars[i].first ? cuda_kernels::kOptimFlagFirst : 0) |
                         (aligned ? cuda_kernels::kOptimFlagAligned : 0);
    for (int64_t s = 0; s < n; s += cuda_kernels::kOptimChunk) {
      *chunk++ = static_cast<int64_t>(i);
      *chunk++ = s;
    }
  }
  const int device = device_index(first.device());
  cuda::DeviceGuard guard(device);
  // The pinned source is marked as used by the stream, so it may be dropped right away.
  const Tensor table = host.to(Device(kCUDA, device), /*non_blocking=*/true);
  EMBER_CUDA_CHECK(cuda_kernels::optim_multi_tensor(op, first.dtype(), h, table.data_ptr<int64_t>(),
                                                    static_cast<int>(count), nchunks,
                                                    current_stream()));
}

}  // namespace ember
