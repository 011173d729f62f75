// Random numbers on the device. A thread owns whole Philox blocks (4 or 2
// elements each) and writes them where the CPU would: element i of the row-major order comes from
// block i / per_block, so device and CPU streams are bit-identical.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include <type_traits>

#include "backend/cuda/random_kernels.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/philox.h"

namespace ember::cuda_kernels {

namespace {

template <RandomOp Op, class T>
__global__ void random_kernel(T* out, int64_t n, Strided<1> l, bool contiguous, uint64_t seed,
                              uint64_t offset, RandomParams p, const uint64_t* state) {
  philox_resolve(state, seed, offset);
  constexpr int per = rnd::per_block<Op, T>();
  const int64_t nblocks = (n + per - 1) / per;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < nblocks;
       b += step) {
    T v[per];
    rnd::generate<Op, T>(philox::block(seed, offset, static_cast<uint64_t>(b)), p, v);
    const int64_t i0 = b * per;
    const int m = n - i0 < per ? static_cast<int>(n - i0) : per;
    for (int j = 0; j < m; ++j) {
      if (contiguous) {
        out[i0 + j] = v[j];
      } else {
        int64_t off[1];
        l.offsets(i0 + j, off);
        out[off[0]] = v[j];
      }
    }
  }
}

template <class T, class P>
__global__ void bernoulli_kernel(T* out, const P* prob, int64_t n, Strided<2> l, uint64_t seed,
                                 uint64_t offset, int* bad, const uint64_t* state) {
  philox_resolve(state, seed, offset);
  constexpr int per = rnd::per_block<RandomOp::Bernoulli, T>();
  const int64_t nblocks = (n + per - 1) / per;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  bool ok = true;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < nblocks;
       b += step) {
    const philox::Words w = philox::block(seed, offset, static_cast<uint64_t>(b));
    const int64_t i0 = b * per;
    const int m = n - i0 < per ? static_cast<int>(n - i0) : per;
    for (int j = 0; j < m; ++j) {
      int64_t off[2];
      l.offsets(i0 + j, off);
      const double q = static_cast<double>(static_cast<compute_t<P>>(prob[off[1]]));
      ok = ok && q >= 0.0 && q <= 1.0;
      out[off[0]] = cast<T>(rnd::bernoulli_unit<T>(w, j) < q);
    }
  }
  if (!ok) atomicExch(bad, 1);
}

__global__ void set_philox_state_kernel(uint64_t* state, uint64_t seed, uint64_t offset) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    state[0] = seed;
    state[1] = offset;
  }
}

}  // namespace

cudaError_t set_philox_state(uint64_t* state, uint64_t seed, uint64_t offset, cudaStream_t stream) {
  simt::launch(set_philox_state_kernel, dim3(1), dim3(1), 0, stream, state, seed, offset);
  return cudaGetLastError();
}

cudaError_t random_fill(RandomOp op, DType dtype, void* out, int64_t n, const Strided<1>& layout,
                        bool contiguous, uint64_t seed, uint64_t offset, const RandomParams& p,
                        cudaStream_t stream, const uint64_t* philox_state) {
  if (n <= 0) return cudaSuccess;
  auto launch = [&](auto op_tag, auto type_tag) {
    constexpr RandomOp Op = decltype(op_tag)::value;
    using T = typename decltype(type_tag)::type;
    constexpr int per = rnd::per_block<Op, T>();
    simt::launch(random_kernel<Op, T>, grid_for((n + per - 1) / per), dim3(kBlock), 0, stream,
                 static_cast<T*>(out), n, layout, contiguous, seed, offset, p, philox_state);
    return cudaGetLastError();
  };
  using Uniform = std::integral_constant<RandomOp, RandomOp::Uniform>;
  using Normal = std::integral_constant<RandomOp, RandomOp::Normal>;
  using RandInt = std::integral_constant<RandomOp, RandomOp::RandInt>;
  using Bernoulli = std::integral_constant<RandomOp, RandomOp::Bernoulli>;
  using Bits64 = std::integral_constant<RandomOp, RandomOp::Bits64>;
  switch (op) {
    case RandomOp::Uniform:
      return visit_float_dtype(dtype, "uniform_", [&](auto t) { return launch(Uniform{}, t); });
    case RandomOp::Normal:
      return visit_float_dtype(dtype, "normal_", [&](auto t) { return launch(Normal{}, t); });
    case RandomOp::RandInt:
      return visit_dtype(dtype, [&](auto t) { return launch(RandInt{}, t); });
    case RandomOp::Bernoulli:
      return visit_dtype(dtype, [&](auto t) { return launch(Bernoulli{}, t); });
    case RandomOp::Bits64:
      if (dtype != kInt64) return cudaErrorInvalidValue;
      return launch(Bits64{}, TypeTag<int64_t>{});
  }
  return cudaErrorInvalidValue;
}

cudaError_t bernoulli_tensor(DType out_dtype, DType p_dtype, void* out, const void* p, int64_t n,
                             const Strided<2>& layout, uint64_t seed, uint64_t offset, int* bad,
                             cudaStream_t stream, const uint64_t* philox_state) {
  if (n <= 0) return cudaSuccess;
  return visit_dtype(out_dtype, [&](auto ot) {
    using T = typename decltype(ot)::type;
    return visit_float_dtype(p_dtype, "bernoulli", [&](auto pt) {
      using P = typename decltype(pt)::type;
      constexpr int per = rnd::per_block<RandomOp::Bernoulli, T>();
      simt::launch(bernoulli_kernel<T, P>, grid_for((n + per - 1) / per), dim3(kBlock), 0, stream,
                   static_cast<T*>(out), static_cast<const P*>(p), n, layout, seed, offset, bad,
                   philox_state);
      return cudaGetLastError();
    });
  });
}

}  // namespace ember::cuda_kernels
