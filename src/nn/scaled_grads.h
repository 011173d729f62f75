// Gradients that still hold loss-scaled values. amp::GradScaler marks the leaves its scaled loss
// reaches (by their gradient accumulator, so the mark is in place before backward writes the
// gradient) and unmarks an optimizer's parameters when it unscales them; gradient clipping refuses
// a marked gradient, since clipping a scaled gradient clips the wrong norm.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::nn::detail {

// Marks the leaves whose AccumulateGrad nodes are given, on behalf of owner (a scaler); the marks
// keep those nodes (and so the leaves) alive until unmarked or cleared.
void mark_scaled_grads(const void* owner,
                       const std::vector<std::shared_ptr<autograd::Node>>& accumulators);
// Unmarks params (their gradients were unscaled) for owner.
void unmark_scaled_grads(const void* owner, const std::vector<Tensor>& params);
// Drops every mark of owner.
void clear_scaled_grads(const void* owner);
// The index in params of the first parameter whose gradient is marked by any owner, or -1.
int64_t first_scaled_grad(const std::vector<Tensor>& params);

}  // namespace ember::nn::detail
