// Element-wise ternary and where kernels through the generic launcher, and its grid limit. The
// unary and binary families live in elementwise_unary.cu and elementwise_binary.cu (one
// translation unit each, so nvcc compiles them in parallel).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <atomic>
#include <type_traits>

#include "backend/cuda/elementwise_kernels.cuh"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

std::atomic<int64_t> grid_limit{0};

template <TernaryOp O, class T>
struct TernaryFn {
  ElementwiseParams p;
  EMBER_HD T operator()(T x, T y, T z) const {
    using C = compute_t<T>;
    return cast<T>(ew::ternary<O>(static_cast<C>(x), static_cast<C>(y), static_cast<C>(z), p));
  }
};

template <class T>
struct WhereFn {
  EMBER_HD T operator()(bool c, T x, T y) const { return ew::where(c, x, y); }
};

}  // namespace

void set_elementwise_grid_limit(int64_t blocks) { grid_limit = blocks; }
int64_t elementwise_grid_limit() { return grid_limit; }

EwResult ternary(TernaryOp op, DType dtype, void* out, const void* a, const void* b, const void* c,
                 const Strided<4>& g, int64_t n, const ElementwiseParams& p, cudaStream_t stream) {
  const void* ins[3] = {a, b, c};
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return visit_ternary(op, [&](auto opc) {
      constexpr TernaryOp O = decltype(opc)::value;
      if constexpr (!ternary_supports<O, compute_t<T>>) {
        return EwResult{cudaSuccess, false};
      } else {
        return EwResult{launch_elementwise<T, T, T, T>(TernaryFn<O, T>{p}, g, n, stream, out, ins)};
      }
    });
  });
}

cudaError_t where(DType dtype, void* out, const void* cond, const void* a, const void* b,
                  const Strided<4>& g, int64_t n, cudaStream_t stream) {
  const void* ins[3] = {cond, a, b};
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launch_elementwise<T, bool, T, T>(WhereFn<T>{}, g, n, stream, out, ins);
  });
}

}  // namespace ember::cuda_kernels
