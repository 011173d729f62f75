// Gradient checkpointing (torch.utils.checkpoint): trade compute for memory by keeping only a
// segment's inputs and recomputing its activations during backward.
#pragma once

#include <functional>

#include "ember/tensor.h"

namespace ember::utils {

// Runs fn(inputs) without recording the graph and returns its outputs, which get one autograd
// node holding only the inputs. In backward the node re-runs fn with grad enabled, after
// restoring the state fn started from of the default generators of the CPU and of the inputs'
// CUDA devices (when preserve_rng_state), so random ops inside fn (rand, bernoulli, dropout)
// draw the same values; it then back-propagates the outputs' gradients through the recomputed
// graph: into the inputs, and into any tensor fn captures (parameters accumulate into .grad()).
// In grad mode the floating outputs require grad even when no input does, since fn may use
// parameters. With grad mode off, fn simply runs. Backward through it cannot create a graph
// (create_graph) for higher-order gradients.
TensorList checkpoint(const std::function<TensorList(const TensorList&)>& fn,
                      const TensorList& inputs, bool preserve_rng_state = true);
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input,
                  bool preserve_rng_state = true);

}  // namespace ember::utils
