// AdamW (torch.optim.AdamW): Adam with decoupled weight decay, p *= 1 - lr * weight_decay.
#pragma once

#include "ember/optim/adam.h"

namespace ember::optim {

struct AdamWOptions : public OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(double, lr);
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 1e-2;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::string> option_names() const override;
  std::vector<double> get_option(const std::string& name) const override;
  void set_option(const std::string& name, const std::vector<double>& value) override;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
};

}  // namespace ember::optim
