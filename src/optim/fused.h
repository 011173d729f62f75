// What the optimizers share: the op layer's fused update (ops/optim_step.h), option helpers and
// PyTorch's argument checks.
#pragma once

#include <string>
#include <vector>

#include "ember/optim/optimizer.h"
#include "ops/optim_step.h"

namespace ember::optim::detail {

// A 0-dim float32 CPU tensor (PyTorch's "step").
Tensor step_tensor(double value);
// Zeros shaped, typed and placed like param (contiguous).
Tensor state_like(const Tensor& param, double value = 0.0);

// The options of a group as type O; raises naming the optimizer when they are another kind.
template <class O>
const O& options_as(const OptimizerOptions& options, const std::string& optimizer) {
  const O* o = dynamic_cast<const O*>(&options);
  if (!o) throw TypeError("[" + optimizer + "] parameter group options are of another optimizer");
  return *o;
}

[[noreturn]] void unknown_option(const std::string& optimizer, const std::string& name);
double single(const std::string& name, const std::vector<double>& value);
// "[SGD] Invalid learning rate: -1" style errors for value < 0.
void check_nonnegative(const std::string& optimizer, const char* what, double value);
std::string format_double(double v);

}  // namespace ember::optim::detail
