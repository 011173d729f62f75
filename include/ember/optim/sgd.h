// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay
// (torch.optim.SGD).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(double, lr);
  EMBER_ARG(double, momentum) = 0.0;
  EMBER_ARG(double, dampening) = 0.0;
  EMBER_ARG(double, weight_decay) = 0.0;
  EMBER_ARG(bool, nesterov) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::string> option_names() const override;
  std::vector<double> get_option(const std::string& name) const override;
  void set_option(const std::string& name, const std::vector<double>& value) override;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults);
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);

 protected:
  void check_options(const OptimizerOptions& options) const override;
  void step_group(OptimizerParamGroup& group) override;
};

}  // namespace ember::optim
