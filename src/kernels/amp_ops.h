// Mixed-precision math written once for host and device (EMBER_HD): the gradient unscale with
// its inf/NaN check, and the loss scale's update (PyTorch's _amp_foreach_non_finite_check_and_
// unscale_ and _amp_update_scale_, one element or one scale at a time).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/macros.h"

namespace ember {

// One gradient element in the compute type C (float for 16-bit grads): returns it multiplied by
// inv_scale (untouched when inv_scale is 1, as PyTorch) and reports whether it was finite before.
template <class C>
EMBER_HD inline C amp_unscale_value(C value, float inv_scale, bool& finite) {
  finite = std::isfinite(value);
  return inv_scale == 1.0f ? value : value * static_cast<C>(inv_scale);
}

// The scale's update after one step. found_inf > 0: scale *= backoff, tracker = 0. Otherwise the
// tracker counts clean steps; at growth_interval the scale grows (only if the result is finite)
// and the tracker restarts at 0.
EMBER_HD inline void amp_update_scale_value(float& scale, int32_t& growth_tracker, float found_inf,
                                            double growth_factor, double backoff_factor,
                                            int64_t growth_interval) {
  if (found_inf != 0.0f) {
    scale = static_cast<float>(static_cast<double>(scale) * backoff_factor);
    growth_tracker = 0;
    return;
  }
  const int32_t successful = growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(static_cast<double>(scale) * growth_factor);
    if (std::isfinite(grown)) scale = grown;
    growth_tracker = 0;
  } else {
    growth_tracker = successful;
  }
}

}  // namespace ember
