// RMSprop with optional momentum and centering (torch.optim.RMSprop).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(double, lr);
  EMBER_ARG(double, alpha) = 0.99;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0.0;
  EMBER_ARG(double, momentum) = 0.0;
  EMBER_ARG(bool, centered) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::string> option_names() const override;
  std::vector<double> get_option(const std::string& name) const override;
  void set_option(const std::string& name, const std::vector<double>& value) override;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});

 protected:
  void check_options(const OptimizerOptions& options) const override;
  void step_group(OptimizerParamGroup& group) override;
};

}  // namespace ember::optim
