// Sum, prod, max/min and any/all on the device, for every dtype (reduce_kernels.cuh).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include "backend/cuda/reduce_kernels.cuh"

namespace ember::cuda_kernels {

namespace {

template <ReduceOp Op, class T, class Out>
cudaError_t run(const ReduceParams& prm, const ReduceLayout& l, const ReducePlan& p, const void* in,
                void* out, void* workspace, cudaStream_t stream) {
  using F = device_functor_t<Op, compute_t<T>>;
  const ValueReducer<F, T, Out> red{F(prm.p, prm.correction, l.n_red), static_cast<const T*>(in),
                                    static_cast<Out*>(out)};
  return launch_reduce(red, l, p, workspace, stream);
}

}  // namespace

cudaError_t reduce_basic(ReduceOp op, DType in_dtype, DType out_dtype, const ReduceParams& prm,
                         const ReduceLayout& l, const ReducePlan& p, const void* in, void* out,
                         void* workspace, cudaStream_t stream) {
  return visit_dtype(in_dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    // Integers and bool may sum (or multiply) into int64.
    const bool widen = std::is_integral_v<T> && !std::is_same_v<T, int64_t> && out_dtype == kInt64;
    switch (op) {
      case ReduceOp::Sum:
        if constexpr (std::is_integral_v<T>) {
          if (widen) return run<ReduceOp::Sum, T, int64_t>(prm, l, p, in, out, workspace, stream);
        }
        return run<ReduceOp::Sum, T, T>(prm, l, p, in, out, workspace, stream);
      case ReduceOp::Prod:
        if constexpr (std::is_integral_v<T>) {
          if (widen) return run<ReduceOp::Prod, T, int64_t>(prm, l, p, in, out, workspace, stream);
        }
        return run<ReduceOp::Prod, T, T>(prm, l, p, in, out, workspace, stream);
      case ReduceOp::Max:
        return run<ReduceOp::Max, T, T>(prm, l, p, in, out, workspace, stream);
      case ReduceOp::Min:
        return run<ReduceOp::Min, T, T>(prm, l, p, in, out, workspace, stream);
      // bool and uint8 results are both one byte holding 0 or 1.
      case ReduceOp::Any:
        return run<ReduceOp::Any, T, uint8_t>(prm, l, p, in, out, workspace, stream);
      case ReduceOp::All:
        return run<ReduceOp::All, T, uint8_t>(prm, l, p, in, out, workspace, stream);
      default:
        return cudaErrorNotSupported;
    }
  });
}

}  // namespace ember::cuda_kernels
