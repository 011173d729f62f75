// Element-wise binary kernels: every BinaryOp functor of kernels/elementwise_ops.h per dtype
// through the generic launcher (16-bit floats compute in float and round once on store).
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

template <BinaryOp O, class T, class R>
struct BinaryFn {
  ElementwiseParams p;
  EMBER_HD R operator()(T x, T y) const {
    using C = compute_t<T>;
    return cast<R>(ew::binary<O>(static_cast<C>(x), static_cast<C>(y), p));
  }
};

}  // namespace

EwResult binary(BinaryOp op, DType dtype, void* out, const void* a, const void* b,
                const Strided<3>& g, int64_t n, const ElementwiseParams& p, cudaStream_t stream) {
  const void* ins[2] = {a, b};
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return visit_binary(op, [&](auto opc) {
      constexpr BinaryOp O = decltype(opc)::value;
      if constexpr (!binary_supports<O, compute_t<T>>) {
        return EwResult{cudaSuccess, false};
      } else {
        using R = std::conditional_t<returns_bool(O), bool, T>;
        return EwResult{launch_elementwise<R, T, T>(BinaryFn<O, T, R>{p}, g, n, stream, out, ins)};
      }
    });
  });
}

}  // namespace ember::cuda_kernels
