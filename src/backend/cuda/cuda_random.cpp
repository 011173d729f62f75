// CUDA random numbers (bit-identical to the CPU for the same seed and offset) and tril/triu.
#include <sstream>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/random_kernels.h"
#include "backend/cuda/triangle_kernels.h"
#include "core/dispatch.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_detail::strided_of;

void CudaBackend::random(RandomOp op, const Tensor& out, uint64_t seed, uint64_t offset,
                         const RandomParams& p) {
  if (out.numel() == 0) return;
  if (op == RandomOp::Uniform) visit_float_dtype(out.dtype(), "uniform_", [](auto) {});
  if (op == RandomOp::Normal) visit_float_dtype(out.dtype(), "normal_", [](auto) {});
  if (op == RandomOp::Bits64 && out.dtype() != kInt64) missing("random bits");
  const int device = device_index(out.device());
  cuda::DeviceGuard guard(device);
  cudaStream_t stream = current_stream();
  const uint64_t* state = cuda_detail::capture_philox("random", device, stream, seed, offset);
  const Tensor* ops[1] = {&out};
  EMBER_CUDA_CHECK(cuda_kernels::random_fill(op, out.dtype(), out.data_ptr(), out.numel(),
                                             strided_of(ops, "random"), out.is_contiguous(), seed,
                                             offset, p, stream, state));
}

void CudaBackend::bernoulli(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) {
  if (out.numel() == 0) return;
  visit_float_dtype(p.dtype(), "bernoulli", [](auto) {});
  const int device = device_index(out.device());
  cuda::DeviceGuard guard(device);
  cudaStream_t stream = current_stream();
  const uint64_t* state = cuda_detail::capture_philox("bernoulli", device, stream, seed, offset);
  // A p outside [0, 1] raises a flag; the kernels never stop midway, the host reports after
  // (not inside a graph capture, where the host cannot wait: there p is not checked).
  Tensor bad = make_empty({1}, kInt32, Device(kCUDA, device));
  fill(bad, 0);
  const Tensor* ops[2] = {&out, &p};
  EMBER_CUDA_CHECK(
      cuda_kernels::bernoulli_tensor(out.dtype(), p.dtype(), out.data_ptr(), p.data_ptr(),
                                     out.numel(), strided_of(ops, "bernoulli"), seed, offset,
                                     static_cast<int*>(bad.data_ptr()), stream, state));
  if (state == nullptr && bad.item<int32_t>() != 0) {
    std::ostringstream os;
    os << "[bernoulli] expects all elements of p to be in [0, 1], but got p=";
    visit_float_dtype(p.dtype(), "bernoulli", [&](auto tag) {
      using P = typename decltype(tag)::type;
      for (P v : p.to_vector<P>()) {
        const double q = static_cast<double>(static_cast<compute_t<P>>(v));
        if (!(q >= 0.0 && q <= 1.0)) {
          os << q;
          break;
        }
      }
    });
    throw ValueError(os.str());
  }
}

void CudaBackend::tril_triu(const Tensor& out, const Tensor& in, int64_t k, bool upper) {
  if (out.numel() == 0) return;
  const int64_t nd = in.dim();
  cuda_kernels::TriangleGeometry g;
  g.rows = in.size(nd - 2);
  g.cols = in.size(nd - 1);
  const Tensor* ts[2] = {&out, &in};
  for (int t = 0; t < 2; ++t) {
    g.rs[t] = ts[t]->stride(nd - 2);
    g.cs[t] = ts[t]->stride(nd - 1);
  }
  // The batch dims (size-1 dims dropped) form the geometry of the matrix starts.
  int bd = 0;
  for (int64_t d = 0; d + 2 < nd; ++d) {
    if (in.size(d) == 1) continue;
    if (bd == cuda_kernels::kMaxDims) {
      throw NotImplementedError("[tril/triu] CUDA tensors with more than " +
                                std::to_string(cuda_kernels::kMaxDims) + " batch dims");
    }
    g.batch.sizes[bd] = in.size(d);
    for (int t = 0; t < 2; ++t) g.batch.strides[t][bd] = ts[t]->stride(d);
    g.batches *= in.size(d);
    ++bd;
  }
  g.batch.ndim = bd;
  cuda::DeviceGuard guard(device_index(out.device()));
  EMBER_CUDA_CHECK(cuda_kernels::tril_triu(out.data_ptr(), in.data_ptr(),
                                           static_cast<int>(out.element_size()), g, k, upper,
                                           current_stream()));
}

}  // namespace ember
