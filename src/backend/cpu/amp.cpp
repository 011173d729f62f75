// CPU mixed-precision kernels: the fused inf/NaN check and unscale over a list of gradients
// (each split across the intra-op threads), and the loss scale's update.
#include <atomic>
#include <limits>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/amp_ops.h"
#include "kernels/cast.h"

namespace ember {

void CpuBackend::amp_unscale(const TensorList& grads, const std::vector<int32_t>& ids,
                             const Tensor& found_inf, const Tensor& inv_scale,
                             const Tensor& first_bad) {
  if (grads.empty()) return;
  const float inv = *inv_scale.data_ptr<float>();
  int32_t first = std::numeric_limits<int32_t>::max();
  visit_float_dtype(
      grads[0].dtype(), "_amp_foreach_non_finite_check_and_unscale_", [&](auto type_tag) {
        using T = typename decltype(type_tag)::type;
        using C = compute_t<T>;
        for (size_t i = 0; i < grads.size(); ++i) {
          T* g = static_cast<T*>(grads[i].data_ptr());
          std::atomic<bool> bad{false};
          parallel_for(grads[i].numel(), cpu::kGrain, [&](int64_t begin, int64_t end) {
            bool all_finite = true;
            for (int64_t j = begin; j < end; ++j) {
              bool finite = true;
              g[j] = cast<T>(amp_unscale_value<C>(cast<C>(g[j]), inv, finite));
              all_finite = all_finite && finite;
            }
            if (!all_finite) bad.store(true, std::memory_order_relaxed);
          });
          if (bad.load() && ids[i] < first) first = ids[i];
        }
      });
  if (first == std::numeric_limits<int32_t>::max()) return;
  *found_inf.data_ptr<float>() = 1.0f;
  if (first_bad.defined()) {
    int32_t* fb = first_bad.data_ptr<int32_t>();
    if (first < *fb) *fb = first;
  }
}

void CpuBackend::amp_update_scale(const Tensor& scale, const Tensor& growth_tracker,
                                  const Tensor& found_inf, double growth_factor,
                                  double backoff_factor, int64_t growth_interval) {
  amp_update_scale_value(*scale.data_ptr<float>(), *growth_tracker.data_ptr<int32_t>(),
                         *found_inf.data_ptr<float>(), growth_factor, backoff_factor,
                         growth_interval);
}

}  // namespace ember
