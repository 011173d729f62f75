// The op layer's entry point behind the optimizers: one fused update of many parameters through
// the backend's optimizer family (the math is kernels/optim_ops.h).
#pragma once

#include <vector>

#include "ember/tensor.h"
#include "kernels/optim_ops.h"

namespace ember::ops {

// One parameter's operands: its gradient and up to three state tensors (undefined when unused,
// else contiguous with the parameter's shape and dtype), and its per-tensor step values.
struct OptimParam {
  Tensor param;
  Tensor grad;
  Tensor state[3];
  OptimTensorScalars scalars;
};

// Updates every item in place, one backend call per (device, dtype) in first-seen order. A
// non-contiguous parameter is updated in a contiguous copy that is written back; a gradient of
// another dtype is converted first. Never recorded by autograd.
void optim_step(OptimOp op, const OptimHyper& h, const std::vector<OptimParam>& items);

}  // namespace ember::ops
