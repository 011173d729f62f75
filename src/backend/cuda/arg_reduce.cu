// max/min along one dim with the index of the first extreme, on the device (reduce_kernels.cuh).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include "backend/cuda/reduce_kernels.cuh"

namespace ember::cuda_kernels {

cudaError_t arg_reduce(bool is_max, DType dtype, const ReduceLayout& l, const ReducePlan& p,
                       const void* in, void* values, int64_t* indices, void* workspace,
                       cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    const T* x = static_cast<const T*>(in);
    T* v = static_cast<T*>(values);
    if (is_max) return launch_reduce(IndexReducer<T, true>{x, v, indices}, l, p, workspace, stream);
    return launch_reduce(IndexReducer<T, false>{x, v, indices}, l, p, workspace, stream);
  });
}

}  // namespace ember::cuda_kernels
