// The optimizers' fused update: parameters grouped by device and dtype, one backend call each.
#include "ops/optim_step.h"

#include <utility>

#include "ember/grad_mode.h"
#include "ops/op_utils.h"

namespace ember::ops {

void optim_step(OptimOp op, const OptimHyper& h, const std::vector<OptimParam>& items) {
  NoGradGuard no_grad;  // an update of leaves, never part of the graph
  std::vector<bool> done(items.size(), false);
  for (size_t i = 0; i < items.size(); ++i) {
    if (done[i]) continue;
    const Device dev = items[i].param.device();
    const DType dt = items[i].param.dtype();
    std::vector<TensorList> slots(kOptimSlots);
    std::vector<OptimTensorScalars> scalars;
    // Non-contiguous parameters are updated in a contiguous copy and written back after.
    std::vector<std::pair<Tensor, Tensor>> write_back;
    for (size_t j = i; j < items.size(); ++j) {
      const OptimParam& it = items[j];
      if (done[j] || it.param.device() != dev || it.param.dtype() != dt) continue;
      done[j] = true;
      if (it.param.numel() == 0) continue;
      Tensor p = it.param;
      if (!p.is_contiguous()) {
        p = p.contiguous();
        write_back.emplace_back(it.param, p);
      }
      Tensor g = it.grad;
      if (g.dtype() != dt) g = g.to(dt);
      slots[0].push_back(p);
      slots[1].push_back(g.contiguous());
      for (int k = 0; k < 3; ++k) slots[2 + k].push_back(it.state[k]);
      scalars.push_back(it.scalars);
    }
    if (scalars.empty()) continue;
    backend(dev).optim_step(op, slots, h, scalars);
    for (auto& [dst, src] : write_back) dst.copy_(src);
  }
}

}  // namespace ember::ops
