// CUDA mixed precision: the gradients' pointers and sizes go into one table that travels to the
// device with a single non-blocking copy from pinned memory, then one kernel checks and unscales
// every gradient (amp_kernels.cu). Nothing is read back: found_inf stays on the device.
#include <vector>

#include "backend/cuda/amp_kernels.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "ember/cuda.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;

void CudaBackend::amp_unscale(const TensorList& grads, const std::vector<int32_t>& ids,
                              const Tensor& found_inf, const Tensor& inv_scale,
                              const Tensor& first_bad) {
  if (grads.empty()) return;
  const size_t count = grads.size();
  int64_t nchunks = 0;
  for (const Tensor& g : grads) {
    nchunks += (g.numel() + cuda_kernels::kAmpChunk - 1) / cuda_kernels::kAmpChunk;
  }
  if (nchunks == 0) return;
  const int64_t words = static_cast<int64_t>(count) * cuda_kernels::kAmpTensorWords + 2 * nchunks;
  Tensor host = make_empty({words}, TensorOptions().dtype(kInt64).pinned_memory(true));
  int64_t* w = host.data_ptr<int64_t>();
  int64_t* chunk = w + count * cuda_kernels::kAmpTensorWords;
  for (size_t i = 0; i < count; ++i) {
    int64_t* e = w + i * cuda_kernels::kAmpTensorWords;
    const int64_t n = grads[i].numel();
    e[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(grads[i].data_ptr()));
    e[1] = n;
    e[2] = ids[i];
    for (int64_t s = 0; s < n; s += cuda_kernels::kAmpChunk) {
      *chunk++ = static_cast<int64_t>(i);
      *chunk++ = s;
    }
  }
  const int device = device_index(grads[0].device());
  cuda::DeviceGuard guard(device);
  // The pinned source is marked as used by the stream, so it may be dropped right away.
  const Tensor table = host.to(Device(kCUDA, device), /*non_blocking=*/true);
  int32_t* fb = first_bad.defined() ? first_bad.data_ptr<int32_t>() : nullptr;
  EMBER_CUDA_CHECK(cuda_kernels::amp_unscale_multi_tensor(
      grads[0].dtype(), table.data_ptr<int64_t>(), static_cast<int>(count), nchunks,
      found_inf.data_ptr<float>(), inv_scale.data_ptr<float>(), fb, current_stream()));
}

void CudaBackend::amp_update_scale(const Tensor& scale, const Tensor& growth_tracker,
                                   const Tensor& found_inf, double growth_factor,
                                   double backoff_factor, int64_t growth_interval) {
  cuda::DeviceGuard guard(device_index(scale.device()));
  EMBER_CUDA_CHECK(cuda_kernels::amp_update_scale(
      scale.data_ptr<float>(), growth_tracker.data_ptr<int32_t>(), found_inf.data_ptr<float>(),
      growth_factor, backoff_factor, growth_interval, current_stream()));
}

}  // namespace ember
