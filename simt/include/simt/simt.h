// One header for kernel sources: nvcc builds get the real CUDA runtime, other compilers get the
// SIMT emulator. Kernels launch through simt::launch and use SIMT_DYNAMIC_SHARED, never a raw
// triple-chevron launch.
#pragma once

#if defined(__CUDACC__)

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

namespace simt {

inline constexpr bool emulated = false;

// The order in which the emulator runs the threads of a block; a GPU ignores it.
enum class Order { kForward, kReverse, kRandom };
inline void set_order(Order) {}
inline Order order() { return Order::kForward; }
inline void set_seed(std::uint64_t) {}
inline void set_workers(int) {}
inline std::string last_error_message() { return {}; }
inline void set_deferred_streams(bool) {}
inline bool deferred_streams() { return false; }

// Launches kernel on grid x block threads with smem_bytes of dynamic shared memory on stream,
// converting each argument to the kernel's parameter type first (as a chevron launch does).
template <typename... P, typename... A>
inline void launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t smem_bytes,
                   cudaStream_t stream, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "simt::launch: wrong number of kernel arguments");
  kernel<<<grid, block, smem_bytes, stream>>>(static_cast<P>(std::forward<A>(args))...);
}

}  // namespace simt

// Every extern __shared__ array starts at the block's dynamic shared memory.
#define SIMT_DYNAMIC_SHARED(T, name)                                         \
  extern __shared__ __align__(16) unsigned char name##_simt_dynamic_smem_[]; \
  T* name = reinterpret_cast<T*>(name##_simt_dynamic_smem_)

#else

#include "simt/emu.h"

#endif
