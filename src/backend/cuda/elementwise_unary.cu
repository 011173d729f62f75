// Element-wise unary kernels: every UnaryOp functor of kernels/elementwise_ops.h per dtype through
// the generic launcher (16-bit floats compute in float and round once on store).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <type_traits>

#include "backend/cuda/elementwise_kernels.cuh"
#include "core/dispatch.h"
#include "kernels/cast.h"

#if defined(__CUDACC__)
// The shared functors compare unsigned values with zero in code generic over signedness.
#pragma nv_diag_suppress 186
#endif

namespace ember::cuda_kernels {

namespace {

template <UnaryOp O, class T, class R>
struct UnaryFn {
  ElementwiseParams p;
  EMBER_HD R operator()(T x) const {
    return cast<R>(ew::unary<O>(static_cast<compute_t<T>>(x), p));
  }
};

}  // namespace

EwResult unary(UnaryOp op, DType dtype, void* out, const void* in, const Strided<2>& g, int64_t n,
               const ElementwiseParams& p, cudaStream_t stream) {
  const void* ins[1] = {in};
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return visit_unary(op, [&](auto opc) {
      constexpr UnaryOp O = decltype(opc)::value;
      if constexpr (!unary_supports<O, compute_t<T>>) {
        return EwResult{cudaSuccess, false};
      } else {
        using R = std::conditional_t<returns_bool(O), bool, T>;
        return EwResult{launch_elementwise<R, T>(UnaryFn<O, T, R>{p}, g, n, stream, out, ins)};
      }
    });
  });
}

}  // namespace ember::cuda_kernels
