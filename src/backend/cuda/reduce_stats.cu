// Mean, var/std (Welford with Chan's combine), the vector norms and log-sum-exp on the device,
// for the floating dtypes (reduce_kernels.cuh).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include "backend/cuda/reduce_kernels.cuh"

namespace ember::cuda_kernels {

namespace {

template <ReduceOp Op, class T>
cudaError_t run(const ReduceParams& prm, const ReduceLayout& l, const ReducePlan& p, const void* in,
                void* out, void* workspace, cudaStream_t stream) {
  using F = device_functor_t<Op, compute_t<T>>;
  const ValueReducer<F, T, T> red{F(prm.p, prm.correction, l.n_red), static_cast<const T*>(in),
                                  static_cast<T*>(out)};
  return launch_reduce(red, l, p, workspace, stream);
}

}  // namespace

cudaError_t reduce_stats(ReduceOp op, DType in_dtype, const ReduceParams& prm,
                         const ReduceLayout& l, const ReducePlan& p, const void* in, void* out,
                         void* workspace, cudaStream_t stream) {
  if (!is_floating_point(in_dtype)) return cudaErrorNotSupported;
  return visit_float_dtype(in_dtype, "reduce", [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    return visit_reduce(op, [&](auto oc) -> cudaError_t {
      constexpr ReduceOp O = decltype(oc)::value;
      if constexpr (reduce_float_only(O)) {
        return run<O, T>(prm, l, p, in, out, workspace, stream);
      } else {
        return cudaErrorNotSupported;
      }
    });
  });
}

}  // namespace ember::cuda_kernels
