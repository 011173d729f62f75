// The SIMT emulator's device-side API: CUDA's qualifiers, built-in variables, barriers, warp
// collectives, atomics and intrinsics as host C++, so a .cu kernel compiles with g++ and runs
// with every CUDA thread as a fiber (src/emu_runtime.cpp). Include it through simt/simt.h.
#pragma once

#if defined(__CUDACC__)
#error "simt/emu.h is the emulator; nvcc builds include simt/simt.h, which uses the CUDA runtime"
#endif

// The qualifiers come first: crt/host_defines.h only defines the ones still undefined, so these
// survive. __shared__ is per worker thread because a worker runs one block at a time.
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __shared__ static thread_local
#define __launch_bounds__(...)

#include <cuda_runtime_api.h>
#include <vector_types.h>
// The 16-bit float headers after the runtime's, fp16 before bf16.
// clang-format off
#include <cuda_fp16.h>
#include <cuda_bf16.h>
// clang-format on

#include <math.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#define SIMT_EMULATED 1

// ---- built-in variables -------------------------------------------------------------------------
// The scheduler rewrites these on every switch between the fibers of a block; all of a block's
// fibers live on one OS thread, so thread_local is exactly "per running CUDA thread".
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;
inline constexpr int warpSize = 32;

namespace simt {

inline constexpr bool emulated = true;

// The order in which the threads of a block run between synchronisation points. Changing it
// exposes missing barriers; the default comes from SIMT_ORDER (forward, reverse, random).
enum class Order { kForward, kReverse, kRandom };
void set_order(Order order);
Order order();
// Seed of the random order (default SIMT_SEED, else a fixed value).
void set_seed(std::uint64_t seed);
// Worker threads that run blocks in parallel (default SIMT_WORKERS, else up to 8 cores).
void set_workers(int workers);
int workers();
// The readable description of the last failed call or kernel ("" when there was none).
std::string last_error_message();
// Holds stream work back until a synchronising call (default: on if SIMT_DEFER_STREAMS=1), so
// that a host reading results before synchronising sees stale data, as it may on a GPU.
void set_deferred_streams(bool deferred);
bool deferred_streams();

namespace detail {

// One launch: the kernel with its converted arguments, ready to run once per CUDA thread.
struct KernelCall {
  void (*invoke)(const void* packed) = nullptr;
  std::shared_ptr<const void> packed;  // shared so that graph replays keep the arguments alive
  const void* kernel = nullptr;        // identity, for cudaFuncSetAttribute
  dim3 grid;
  dim3 block;
  std::size_t smem_bytes = 0;
};

// Validates and runs (or queues, or captures) a launch on a stream; errors go to
// cudaGetLastError like a real launch's.
void submit_launch(KernelCall call, cudaStream_t stream);

template <typename... P>
struct PackedCall {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> args;
};

template <typename... P>
void invoke_packed(const void* p) {
  const auto& packed = *static_cast<const PackedCall<P...>*>(p);
  auto args = packed.args;  // each thread owns its parameters: kernels may modify them
  std::apply(packed.kernel, std::move(args));
}

// clang-format off
enum class WarpOp : std::uint8_t {
  kShflIdx, kShflUp, kShflDown, kShflXor,
  kBallot, kAny, kAll, kSync, kMatchAny, kMatchAll,
  kReduceAdd, kReduceMin, kReduceMax, kReduceUMin, kReduceUMax, kReduceAnd, kReduceOr, kReduceXor,
};
// clang-format on
enum class BarrierOp : std::uint8_t { kPlain, kCount, kAnd, kOr };

// The scheduler's entry points (src/emu_runtime.cpp). They must stay out of line: a call the
// compiler cannot see through is what keeps it from caching threadIdx across a switch.
int block_barrier(BarrierOp op, int predicate, const std::source_location& where);
std::uint64_t warp_collective(WarpOp op, unsigned mask, std::uint64_t bits, int arg, int width,
                              const std::source_location& where);
unsigned active_mask();
void yield_thread();
unsigned char* dynamic_shared_memory();
[[noreturn]] void trap(const std::source_location& where);
long long clock_ticks();
// Records a host-side API error (for the template overloads below).
cudaError_t api_error(cudaError_t error, const std::string& message);

template <typename T>
inline T shuffle(WarpOp op, unsigned mask, T var, int arg, int width,
                 const std::source_location& where) {
  static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
  static_assert(std::is_trivially_destructible_v<T>, "warp shuffles move plain values");
  std::uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const void*>(&var), sizeof(T));
  bits = warp_collective(op, mask, bits, arg, width, where);
  T out = var;
  std::memcpy(static_cast<void*>(&out), &bits, sizeof(T));
  return out;
}

template <typename T>
inline std::uint64_t value_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <typename T, typename F>
inline T atomic_update(T* address, F update) {
  std::atomic_ref<T> ref(*address);
  T old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, update(old), std::memory_order_relaxed)) {
  }
  return old;
}

}  // namespace detail

// Launches kernel on grid x block threads with smem_bytes of dynamic shared memory on stream.
// Arguments are converted to the kernel's parameter types and kept alive for graph replay.
template <typename... P, typename... A>
inline void launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t smem_bytes,
                   cudaStream_t stream, A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "simt::launch: wrong number of kernel arguments");
  using Packed = detail::PackedCall<P...>;
  auto packed = std::make_shared<const Packed>(Packed{
      kernel,
      std::tuple<std::decay_t<P>...>(static_cast<std::decay_t<P>>(std::forward<A>(args))...)});
  detail::KernelCall call;
  call.invoke = &detail::invoke_packed<P...>;
  call.packed = std::move(packed);
  call.kernel = reinterpret_cast<const void*>(kernel);
  call.grid = grid;
  call.block = block;
  call.smem_bytes = smem_bytes;
  detail::submit_launch(std::move(call), stream);
}

}  // namespace simt

// The block's dynamic shared memory (the launch's smem_bytes), filled with 0xFF before each block
// so that reading it before writing shows up as NaN or garbage.
#define SIMT_DYNAMIC_SHARED(T, name) \
  T* name = reinterpret_cast<T*>(::simt::detail::dynamic_shared_memory())

// ---- barriers -----------------------------------------------------------------------------------
inline void __syncthreads(std::source_location where = std::source_location::current()) {
  simt::detail::block_barrier(simt::detail::BarrierOp::kPlain, 0, where);
}
inline int __syncthreads_count(int predicate,
                               std::source_location where = std::source_location::current()) {
  return simt::detail::block_barrier(simt::detail::BarrierOp::kCount, predicate, where);
}
inline int __syncthreads_and(int predicate,
                             std::source_location where = std::source_location::current()) {
  return simt::detail::block_barrier(simt::detail::BarrierOp::kAnd, predicate, where);
}
inline int __syncthreads_or(int predicate,
                            std::source_location where = std::source_location::current()) {
  return simt::detail::block_barrier(simt::detail::BarrierOp::kOr, predicate, where);
}
inline void __syncwarp(unsigned mask = 0xffffffffu,
                       std::source_location where = std::source_location::current()) {
  simt::detail::warp_collective(simt::detail::WarpOp::kSync, mask, 0, 0, warpSize, where);
}
// "Lanes of this warp that have not exited": fibers do not run in lockstep.
inline unsigned __activemask() { return simt::detail::active_mask(); }
// A scheduling point: spinning threads let the rest of their block run.
inline void __nanosleep(unsigned) { simt::detail::yield_thread(); }
[[noreturn]] inline void __trap(std::source_location where = std::source_location::current()) {
  simt::detail::trap(where);
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }
inline long long clock64() { return simt::detail::clock_ticks(); }

// ---- warp collectives ---------------------------------------------------------------------------
template <typename T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize,
                     std::source_location where = std::source_location::current()) {
  return simt::detail::shuffle(simt::detail::WarpOp::kShflIdx, mask, var, src_lane, width, where);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                        std::source_location where = std::source_location::current()) {
  return simt::detail::shuffle(simt::detail::WarpOp::kShflUp, mask, var, static_cast<int>(delta),
                               width, where);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize,
                          std::source_location where = std::source_location::current()) {
  return simt::detail::shuffle(simt::detail::WarpOp::kShflDown, mask, var, static_cast<int>(delta),
                               width, where);
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize,
                         std::source_location where = std::source_location::current()) {
  return simt::detail::shuffle(simt::detail::WarpOp::kShflXor, mask, var, lane_mask, width, where);
}
inline unsigned __ballot_sync(unsigned mask, int predicate,
                              std::source_location where = std::source_location::current()) {
  return static_cast<unsigned>(simt::detail::warp_collective(simt::detail::WarpOp::kBallot, mask,
                                                             predicate != 0, 0, warpSize, where));
}
inline int __any_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return static_cast<int>(simt::detail::warp_collective(simt::detail::WarpOp::kAny, mask,
                                                        predicate != 0, 0, warpSize, where));
}
inline int __all_sync(unsigned mask, int predicate,
                      std::source_location where = std::source_location::current()) {
  return static_cast<int>(simt::detail::warp_collective(simt::detail::WarpOp::kAll, mask,
                                                        predicate != 0, 0, warpSize, where));
}
template <typename T>
inline unsigned __match_any_sync(unsigned mask, T value,
                                 std::source_location where = std::source_location::current()) {
  return static_cast<unsigned>(simt::detail::warp_collective(
      simt::detail::WarpOp::kMatchAny, mask, simt::detail::value_bits(value), 0, warpSize, where));
}
template <typename T>
inline unsigned __match_all_sync(unsigned mask, T value, int* pred,
                                 std::source_location where = std::source_location::current()) {
  unsigned out = static_cast<unsigned>(simt::detail::warp_collective(
      simt::detail::WarpOp::kMatchAll, mask, simt::detail::value_bits(value), 0, warpSize, where));
  *pred = out != 0;
  return out;
}

#define SIMT_WARP_REDUCE(name, type, op)                                                         \
  inline type name(unsigned mask, type value,                                                    \
                   std::source_location where = std::source_location::current()) {               \
    return static_cast<type>(simt::detail::warp_collective(                                      \
        simt::detail::WarpOp::op, mask, static_cast<std::uint32_t>(value), 0, warpSize, where)); \
  }
SIMT_WARP_REDUCE(__reduce_add_sync, unsigned, kReduceAdd)
SIMT_WARP_REDUCE(__reduce_add_sync, int, kReduceAdd)
SIMT_WARP_REDUCE(__reduce_min_sync, unsigned, kReduceUMin)
SIMT_WARP_REDUCE(__reduce_min_sync, int, kReduceMin)
SIMT_WARP_REDUCE(__reduce_max_sync, unsigned, kReduceUMax)
SIMT_WARP_REDUCE(__reduce_max_sync, int, kReduceMax)
SIMT_WARP_REDUCE(__reduce_and_sync, unsigned, kReduceAnd)
SIMT_WARP_REDUCE(__reduce_or_sync, unsigned, kReduceOr)
SIMT_WARP_REDUCE(__reduce_xor_sync, unsigned, kReduceXor)
#undef SIMT_WARP_REDUCE

// ---- atomics ------------------------------------------------------------------------------------
// CUDA's overload set, non-template like CUDA's, so atomicAdd(&counter, 1) converts as it does
// there. Relaxed order: CUDA atomics do not order other memory accesses either.
#define SIMT_ATOMIC_RMW(name, type, method)                                          \
  inline type name(type* address, type value) {                                      \
    return std::atomic_ref<type>(*address).method(value, std::memory_order_relaxed); \
  }
SIMT_ATOMIC_RMW(atomicAdd, int, fetch_add)
SIMT_ATOMIC_RMW(atomicAdd, unsigned, fetch_add)
SIMT_ATOMIC_RMW(atomicAdd, unsigned long long, fetch_add)
SIMT_ATOMIC_RMW(atomicAdd, float, fetch_add)
SIMT_ATOMIC_RMW(atomicAdd, double, fetch_add)
SIMT_ATOMIC_RMW(atomicSub, int, fetch_sub)
SIMT_ATOMIC_RMW(atomicSub, unsigned, fetch_sub)
SIMT_ATOMIC_RMW(atomicExch, int, exchange)
SIMT_ATOMIC_RMW(atomicExch, unsigned, exchange)
SIMT_ATOMIC_RMW(atomicExch, unsigned long long, exchange)
SIMT_ATOMIC_RMW(atomicExch, float, exchange)
SIMT_ATOMIC_RMW(atomicAnd, int, fetch_and)
SIMT_ATOMIC_RMW(atomicAnd, unsigned, fetch_and)
SIMT_ATOMIC_RMW(atomicAnd, unsigned long long, fetch_and)
SIMT_ATOMIC_RMW(atomicOr, int, fetch_or)
SIMT_ATOMIC_RMW(atomicOr, unsigned, fetch_or)
SIMT_ATOMIC_RMW(atomicOr, unsigned long long, fetch_or)
SIMT_ATOMIC_RMW(atomicXor, int, fetch_xor)
SIMT_ATOMIC_RMW(atomicXor, unsigned, fetch_xor)
SIMT_ATOMIC_RMW(atomicXor, unsigned long long, fetch_xor)
#undef SIMT_ATOMIC_RMW

#define SIMT_ATOMIC_MINMAX(type)                                                             \
  inline type atomicMin(type* address, type value) {                                         \
    return simt::detail::atomic_update(address,                                              \
                                       [=](type old) { return old < value ? old : value; }); \
  }                                                                                          \
  inline type atomicMax(type* address, type value) {                                         \
    return simt::detail::atomic_update(address,                                              \
                                       [=](type old) { return old > value ? old : value; }); \
  }
SIMT_ATOMIC_MINMAX(int)
SIMT_ATOMIC_MINMAX(unsigned)
SIMT_ATOMIC_MINMAX(long long)
SIMT_ATOMIC_MINMAX(unsigned long long)
#undef SIMT_ATOMIC_MINMAX

#define SIMT_ATOMIC_CAS(type)                                                           \
  inline type atomicCAS(type* address, type compare, type value) {                      \
    std::atomic_ref<type>(*address).compare_exchange_strong(compare, value,             \
                                                            std::memory_order_relaxed); \
    return compare;                                                                     \
  }
SIMT_ATOMIC_CAS(int)
SIMT_ATOMIC_CAS(unsigned)
SIMT_ATOMIC_CAS(unsigned long long)
SIMT_ATOMIC_CAS(unsigned short)
#undef SIMT_ATOMIC_CAS

inline unsigned atomicInc(unsigned* address, unsigned limit) {
  return simt::detail::atomic_update(address,
                                     [=](unsigned old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned atomicDec(unsigned* address, unsigned limit) {
  return simt::detail::atomic_update(
      address, [=](unsigned old) { return (old == 0 || old > limit) ? limit : old - 1; });
}
// 16-bit floats: a CAS loop that computes in float and rounds once, like the hardware.
inline __half atomicAdd(__half* address, __half value) {
  return simt::detail::atomic_update(address, [=](__half old) {
    return __float2half_rn(__half2float(old) + __half2float(value));
  });
}
inline __nv_bfloat16 atomicAdd(__nv_bfloat16* address, __nv_bfloat16 value) {
  return simt::detail::atomic_update(address, [=](__nv_bfloat16 old) {
    return __float2bfloat16_rn(__bfloat162float(old) + __bfloat162float(value));
  });
}
inline __half2 atomicAdd(__half2* address, __half2 value) {
  auto* raw = reinterpret_cast<__half2_raw*>(address);
  const __half2_raw v = value;
  __half2_raw old = simt::detail::atomic_update(raw, [=](__half2_raw o) {
    __half2_raw r;
    r.x = __half_raw(__float2half_rn(__half2float(__half(__half_raw{o.x})) +
                                     __half2float(__half(__half_raw{v.x}))))
              .x;
    r.y = __half_raw(__float2half_rn(__half2float(__half(__half_raw{o.y})) +
                                     __half2float(__half(__half_raw{v.y}))))
              .x;
    return r;
  });
  return __half2(old);
}

// ---- integer and bit intrinsics -----------------------------------------------------------------
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) |
         __brev(static_cast<unsigned>(x >> 32));
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) {
  return static_cast<long long>((static_cast<__int128>(a) * b) >> 64);
}
inline int __mul24(int a, int b) { return (a << 8 >> 8) * (b << 8 >> 8); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31));
}

// ---- float intrinsics ---------------------------------------------------------------------------
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(__double_as_longlong(x)); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>((static_cast<unsigned long long>(hi) << 32) |
                                                     static_cast<unsigned>(lo)));
}

// The fast-math intrinsics are the accurate libm functions here: results differ from the GPU's
// approximations in the last bits, so compare with tolerances.
inline float __expf(float x) { return ::expf(x); }
inline float __exp10f(float x) { return ::exp10f(x); }
inline float __logf(float x) { return ::logf(x); }
inline float __log2f(float x) { return ::log2f(x); }
inline float __log10f(float x) { return ::log10f(x); }
inline float __sinf(float x) { return ::sinf(x); }
inline float __cosf(float x) { return ::cosf(x); }
inline float __tanf(float x) { return ::tanf(x); }
inline void __sincosf(float x, float* s, float* c) {
  *s = ::sinf(x);
  *c = ::cosf(x);
}
inline float __powf(float x, float y) { return ::powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }
inline float rsqrtf(float x) { return 1.0f / ::sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / ::cbrtf(x); }
inline float normcdff(float x) { return 0.5f * ::erfcf(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return ::sqrtf(x); }
inline float __frsqrt_rn(float x) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x)));
}
// The _rn arithmetic intrinsics are never contracted into an FMA by nvcc. Emulated kernels compile
// with contraction on (as nvcc does), so each result passes through an empty asm statement that the
// compiler cannot see through.
namespace simt::detail {
template <class T>
inline T rounded(T x) {
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+x"(x));
#elif defined(__aarch64__)
  asm("" : "+w"(x));
#else
  volatile T v = x;
  x = v;
#endif
  return x;
}
}  // namespace simt::detail
inline float __fadd_rn(float a, float b) { return simt::detail::rounded(a + b); }
inline float __fsub_rn(float a, float b) { return simt::detail::rounded(a - b); }
inline float __fmul_rn(float a, float b) { return simt::detail::rounded(a * b); }
inline float __fdiv_rn(float a, float b) { return simt::detail::rounded(a / b); }
inline float __fmaf_rn(float a, float b, float c) { return ::fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return simt::detail::rounded(a + b); }
inline double __dsub_rn(double a, double b) { return simt::detail::rounded(a - b); }
inline double __dmul_rn(double a, double b) { return simt::detail::rounded(a * b); }
inline double __ddiv_rn(double a, double b) { return simt::detail::rounded(a / b); }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
// erfinv: Winitzki's closed form as a start, then Newton steps on erfc (accurate near +-1).
inline double erfinv(double y) {
  if (!(y > -1.0 && y < 1.0)) return y == 1.0 ? INFINITY : (y == -1.0 ? -INFINITY : NAN);
  if (y == 0.0) return y;
  const double a = 0.147, t = 1.0 - std::fabs(y);
  const double l = std::log(t * (2.0 - t));
  const double b = 2.0 / (3.14159265358979323846 * a) + 0.5 * l;
  double x = std::sqrt(std::sqrt(b * b - l / a) - b);
  for (int i = 0; i < 4; ++i) {
    x += (std::erfc(x) - t) / (1.1283791670955126 * std::exp(-x * x));
  }
  return std::copysign(x, y);
}
inline float erfinvf(float y) { return static_cast<float>(erfinv(static_cast<double>(y))); }

// Saturating conversions with CUDA's rounding suffixes: NaN gives 0, out of range clamps.
namespace simt::detail {
template <typename I, typename F>
inline I convert_saturating(F x, int rounding) {
  if (x != x) return 0;
  const double r = rounding == 0   ? std::nearbyint(static_cast<double>(x))
                   : rounding == 1 ? std::trunc(static_cast<double>(x))
                   : rounding == 2 ? std::floor(static_cast<double>(x))
                                   : std::ceil(static_cast<double>(x));
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (r <= lo) return std::numeric_limits<I>::min();
  if (r >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}
}  // namespace simt::detail

#define SIMT_FLOAT_TO_INT(from, fname, to, tname)      \
  inline to __##fname##2##tname##_rn(from x) {         \
    return simt::detail::convert_saturating<to>(x, 0); \
  }                                                    \
  inline to __##fname##2##tname##_rz(from x) {         \
    return simt::detail::convert_saturating<to>(x, 1); \
  }                                                    \
  inline to __##fname##2##tname##_rd(from x) {         \
    return simt::detail::convert_saturating<to>(x, 2); \
  }                                                    \
  inline to __##fname##2##tname##_ru(from x) { return simt::detail::convert_saturating<to>(x, 3); }
SIMT_FLOAT_TO_INT(float, float, int, int)
SIMT_FLOAT_TO_INT(float, float, unsigned, uint)
SIMT_FLOAT_TO_INT(float, float, long long, ll)
SIMT_FLOAT_TO_INT(float, float, unsigned long long, ull)
SIMT_FLOAT_TO_INT(double, double, int, int)
SIMT_FLOAT_TO_INT(double, double, unsigned, uint)
SIMT_FLOAT_TO_INT(double, double, long long, ll)
SIMT_FLOAT_TO_INT(double, double, unsigned long long, ull)
#undef SIMT_FLOAT_TO_INT
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }

// ---- min and max, CUDA's overload set -----------------------------------------------------------
#define SIMT_MINMAX(ret, a_t, b_t)                                                                \
  inline ret min(a_t a, b_t b) {                                                                  \
    return static_cast<ret>(a) < static_cast<ret>(b) ? static_cast<ret>(a) : static_cast<ret>(b); \
  }                                                                                               \
  inline ret max(a_t a, b_t b) {                                                                  \
    return static_cast<ret>(a) > static_cast<ret>(b) ? static_cast<ret>(a) : static_cast<ret>(b); \
  }
SIMT_MINMAX(int, int, int)
SIMT_MINMAX(unsigned, unsigned, unsigned)
SIMT_MINMAX(unsigned, int, unsigned)
SIMT_MINMAX(unsigned, unsigned, int)
SIMT_MINMAX(long, long, long)
SIMT_MINMAX(unsigned long, unsigned long, unsigned long)
SIMT_MINMAX(unsigned long, long, unsigned long)
SIMT_MINMAX(unsigned long, unsigned long, long)
SIMT_MINMAX(long long, long long, long long)
SIMT_MINMAX(unsigned long long, unsigned long long, unsigned long long)
SIMT_MINMAX(unsigned long long, long long, unsigned long long)
SIMT_MINMAX(unsigned long long, unsigned long long, long long)
#undef SIMT_MINMAX
inline float min(float a, float b) { return ::fminf(a, b); }
inline float max(float a, float b) { return ::fmaxf(a, b); }
inline double min(double a, double b) { return ::fmin(a, b); }
inline double max(double a, double b) { return ::fmax(a, b); }
inline double min(float a, double b) { return ::fmin(a, b); }
inline double max(float a, double b) { return ::fmax(a, b); }
inline double min(double a, float b) { return ::fmin(a, b); }
inline double max(double a, float b) { return ::fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}

// ---- cached loads and stores: plain accesses on the host ----------------------------------------
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcg(const T* p) {
  return *p;
}
template <typename T>
inline T __ldca(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcs(const T* p) {
  return *p;
}
template <typename T>
inline T __ldlu(const T* p) {
  return *p;
}
template <typename T>
inline T __ldcv(const T* p) {
  return *p;
}
template <typename T>
inline void __stcg(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stwb(T* p, T v) {
  *p = v;
}
template <typename T>
inline void __stwt(T* p, T v) {
  *p = v;
}

// ---- host API overloads cuda_runtime.h would add ------------------------------------------------
template <typename T>
inline cudaError_t cudaFuncSetAttribute(T* entry, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void*>(entry), attr, value);
}
template <typename T>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, T* entry) {
  return ::cudaFuncGetAttributes(attr, reinterpret_cast<const void*>(entry));
}
template <typename T>
inline cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t count,
                                      size_t offset = 0,
                                      cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  if (offset > sizeof(T) || count > sizeof(T) - offset) {
    return simt::detail::api_error(cudaErrorInvalidValue,
                                   "cudaMemcpyToSymbol: copy of " + std::to_string(count) +
                                       " bytes at offset " + std::to_string(offset) +
                                       " passes the end of a " + std::to_string(sizeof(T)) +
                                       "-byte symbol");
  }
  return ::cudaMemcpyToSymbol(static_cast<const void*>(&symbol), src, count, offset, kind);
}
template <typename T>
inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t count, size_t offset = 0,
                                        cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  if (offset > sizeof(T) || count > sizeof(T) - offset) {
    return simt::detail::api_error(cudaErrorInvalidValue,
                                   "cudaMemcpyFromSymbol: copy of " + std::to_string(count) +
                                       " bytes at offset " + std::to_string(offset) +
                                       " passes the end of a " + std::to_string(sizeof(T)) +
                                       "-byte symbol");
  }
  return ::cudaMemcpyFromSymbol(dst, static_cast<const void*>(&symbol), count, offset, kind);
}

#include "simt/emu_half.h"
