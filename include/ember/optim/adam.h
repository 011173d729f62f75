// Adam with optional AMSGrad (torch.optim.Adam); weight decay is added to the gradient.
#pragma once

#include <tuple>

#include "ember/optim/optimizer.h"

namespace ember::optim {

using betas_t = std::tuple<double, double>;

struct AdamOptions : public OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(double, lr);
  EMBER_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0.0;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::string> option_names() const override;
  std::vector<double> get_option(const std::string& name) const override;
  void set_option(const std::string& name, const std::vector<double>& value) override;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = {});
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});

 protected:
  Adam(std::string name, std::vector<OptimizerParamGroup> param_groups,
       std::unique_ptr<OptimizerOptions> defaults);
  void check_options(const OptimizerOptions& options) const override;
  void step_group(OptimizerParamGroup& group) override;
};

}  // namespace ember::optim
