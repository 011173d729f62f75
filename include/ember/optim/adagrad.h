// Adagrad with learning-rate decay (torch.optim.Adagrad). The "sum" state is created with the
// optimizer, filled with initial_accumulator_value.
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT: implicit, as libtorch's
  EMBER_ARG(double, lr);
  EMBER_ARG(double, lr_decay) = 0.0;
  EMBER_ARG(double, weight_decay) = 0.0;
  EMBER_ARG(double, initial_accumulator_value) = 0.0;
  EMBER_ARG(double, eps) = 1e-10;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr(); }
  void set_lr(double lr) override { lr_ = lr; }
  std::vector<std::string> option_names() const override;
  std::vector<double> get_option(const std::string& name) const override;
  void set_option(const std::string& name, const std::vector<double>& value) override;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});

 protected:
  void check_options(const OptimizerOptions& options) const override;
  void step_group(OptimizerParamGroup& group) override;

 private:
  void init_state();
};

}  // namespace ember::optim
