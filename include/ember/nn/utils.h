// nn::utils: gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).
#pragma once

#include <vector>

#include "ember/tensor.h"

namespace ember::nn::utils {

// Scales the gradients of parameters in place so that their total norm_type-norm (the norm of
// the per-gradient norms; norm_type = INFINITY for the largest magnitude) is at most max_norm, and
// returns that total norm (before clipping) on the first gradient's device. Parameters without a
// gradient are skipped; with none the result is 0. error_if_nonfinite: raise when the total norm
// is NaN or infinite (the only host synchronisation).
Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm,
                       double norm_type = 2.0, bool error_if_nonfinite = false);

// Clamps every gradient of parameters to [-clip_value, clip_value] in place.
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);

}  // namespace ember::nn::utils
