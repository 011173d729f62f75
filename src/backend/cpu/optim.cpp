// CPU optimizer updates: one pass per parameter with the shared functor (kernels/optim_ops.h),
// split across the intra-op threads by element range.
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember {

namespace {

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
        parallel_for(slots[0][i].numel(), cpu::kGrain / 4,
                     [&](int64_t b, int64_t e) { update_range(f, ptr, mask, b, e); });
      }
    });
  });
}

}  // namespace ember
