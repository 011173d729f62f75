// CPU optimizer updates: one pass per parameter with the shared functor (kernels/optim_ops.h),
// split across the intra-op threads by element range.
//
// float parameters (the common case) take a loop instantiated per flag combination of the
// functor (FixedOptimFlags): no test is left in the loop body, which vectorises, with AVX2 and
// AVX-512 clones. This file is compiled with -ffp-contract=off (CMakeLists.txt): the clones must
// round like the baseline build, PyTorch and the emulated CUDA kernels (no fused multiply-adds),
// and with -fno-math-errno so that sqrt vectorises (sqrt itself is exact either way).
#include <type_traits>
#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember {

namespace {

// Any dtype and flags: the flags are tested per element.
template <class F, class T>
void update_range(const F& f, T* const (&ptr)[kOptimSlots], int mask, int64_t begin, int64_t end) {
  using C = compute_t<T>;
  T* p = ptr[0];
  const T* g = ptr[1];
  T* s0 = ptr[2];
  T* s1 = ptr[3];
  T* s2 = ptr[4];
  for (int64_t j = begin; j < end; ++j) {
    C pv = cast<C>(p[j]);
    C a = (mask & 1) ? cast<C>(s0[j]) : C(0);
    C b = (mask & 2) ? cast<C>(s1[j]) : C(0);
    C c = (mask & 4) ? cast<C>(s2[j]) : C(0);
    f(pv, cast<C>(g[j]), a, b, c);
    p[j] = cast<T>(pv);
    if (mask & 1) s0[j] = cast<T>(a);
    if (mask & 2) s1[j] = cast<T>(b);
    if (mask & 4) s2[j] = cast<T>(c);
  }
}

// float, flags fixed at compile time: the slots the flags use are known, the pointers distinct.
template <class F, unsigned Bits>
EMBER_CPU_CLONES_WIDE void update_range_fixed(const F& f, float* const (&ptr)[kOptimSlots],
                                              int64_t begin, int64_t end) {
  constexpr int kMask = F::slots(Bits);
  const F fn = f;  // a local copy: its fields stay in registers across the stores below
  float* __restrict p = ptr[0] + begin;
  const float* __restrict g = ptr[1] + begin;
  float* __restrict s0 = ptr[2] + begin;
  float* __restrict s1 = ptr[3] + begin;
  float* __restrict s2 = ptr[4] + begin;
  const int64_t n = end - begin;
  for (int64_t j = 0; j < n; ++j) {
    float pv = p[j];
    float a = (kMask & 1) ? s0[j] : 0.0f;
    float b = (kMask & 2) ? s1[j] : 0.0f;
    float c = (kMask & 4) ? s2[j] : 0.0f;
    fn(pv, g[j], a, b, c, FixedOptimFlags<Bits>{});
    p[j] = pv;
    if constexpr ((kMask & 1) != 0) s0[j] = a;
    if constexpr ((kMask & 2) != 0) s1[j] = b;
    if constexpr ((kMask & 4) != 0) s2[j] = c;
  }
}

// Calls fn(std::integral_constant<unsigned, bits>) for bits < 2^N.
template <int N, class Fn>
void with_fixed_bits(unsigned bits, Fn&& fn) {
  [&]<unsigned... B>(std::integer_sequence<unsigned, B...>) {
    (void)((bits == B && (fn(std::integral_constant<unsigned, B>{}), true)) || ...);
  }
  (std::make_integer_sequence<unsigned, (1u << N)>{});
}

}  // namespace

void CpuBackend::optim_step(OptimOp op, const std::vector<TensorList>& slots, const OptimHyper& h,
                            const std::vector<OptimTensorScalars>& scalars) {
  if (slots.empty() || slots[0].empty()) return;
  const int mask = optim_slot_mask(op, h);
  visit_float_dtype(slots[0][0].dtype(), "optimizer step", [&](auto type_tag) {
    using T = typename decltype(type_tag)::type;
    using C = compute_t<T>;
    visit_optim_op(op, [&](auto op_tag) {
      using F = typename decltype(op_tag)::template type<C>;
      for (size_t i = 0; i < slots[0].size(); ++i) {
        T* ptr[kOptimSlots] = {};
        for (int k = 0; k < kOptimSlots && k < static_cast<int>(slots.size()); ++k) {
          if (slots[k][i].defined()) ptr[k] = static_cast<T*>(slots[k][i].data_ptr());
        }
        const F f(h, scalars[i]);
        const int64_t n = slots[0][i].numel();
        if constexpr (std::is_same_v<T, float>) {
          with_fixed_bits<F::kFlagCount>(f.flags, [&](auto bits) {
            parallel_for(n, cpu::kGrain / 4, [&](int64_t b, int64_t e) {
              update_range_fixed<F, decltype(bits)::value>(f, ptr, b, e);
            });
          });
        } else {
          parallel_for(n, cpu::kGrain / 4,
                       [&](int64_t b, int64_t e) { update_range(f, ptr, mask, b, e); });
        }
      }
    });
  });
}

}  // namespace ember
