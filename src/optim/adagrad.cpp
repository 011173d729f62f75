// Adagrad (torch/optim/adagrad.py): accumulated squared gradients scale a decaying step.
#include "ember/optim/adagrad.h"

#include "ember/autograd.h"
#include "ember/ops.h"
#include "optim/fused.h"

namespace ember::optim {

std::vector<std::string> AdagradOptions::option_names() const {
  return {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "maximize"};
}

std::vector<double> AdagradOptions::get_option(const std::string& name) const {
  if (name == "lr") return {lr()};
  if (name == "lr_decay") return {lr_decay()};
  if (name == "weight_decay") return {weight_decay()};
  if (name == "initial_accumulator_value") return {initial_accumulator_value()};
  if (name == "eps") return {eps()};
  if (name == "maximize") return {maximize() ? 1.0 : 0.0};
  detail::unknown_option("Adagrad", name);
}

void AdagradOptions::set_option(const std::string& name, const std::vector<double>& value) {
  const double v = detail::single(name, value);
  if (name == "lr")
    lr(v);
  else if (name == "lr_decay")
    lr_decay(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "initial_accumulator_value")
    initial_accumulator_value(v);
  else if (name == "eps")
    eps(v);
  else if (name == "maximize")
    maximize(v != 0.0);
  else
    detail::unknown_option("Adagrad", name);
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(single_group(std::move(params)), defaults) {}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer("Adagrad", defaults.clone()) {
  init(param_groups);
  init_state();
}

void Adagrad::init_state() {
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : param_groups()) {
    const auto& o = detail::options_as<AdagradOptions>(g.options(), name());
    for (const Tensor& p : g.params()) {
      ParamState& st = state(p);
      if (st.contains("step")) continue;
      st.insert("step", detail::step_tensor(0.0));
      st.insert("sum", detail::state_like(p, o.initial_accumulator_value()));
    }
  }
}

void Adagrad::check_options(const OptimizerOptions& options) const {
  const auto& o = detail::options_as<AdagradOptions>(options, name());
  detail::check_nonnegative(name(), "learning rate", o.lr());
  detail::check_nonnegative(name(), "lr_decay value", o.lr_decay());
  detail::check_nonnegative(name(), "weight_decay value", o.weight_decay());
  detail::check_nonnegative(name(), "initial_accumulator_value value",
                            o.initial_accumulator_value());
  detail::check_nonnegative(name(), "epsilon value", o.eps());
}

void Adagrad::step_group(OptimizerParamGroup& group) {
  const auto& o = detail::options_as<AdagradOptions>(group.options(), name());
  OptimHyper h;
  h.lr = o.lr();
  h.weight_decay = o.weight_decay();
  h.eps = o.eps();
  h.maximize = o.maximize();
  std::vector<ops::OptimParam> items;
  for (const Tensor& p : params_with_grad(group)) {
    ParamState& st = state(p);
    if (!st.contains("sum")) {  // a group added after construction
      st.insert_or_assign("step", detail::step_tensor(0.0));
      st.insert("sum", detail::state_like(p, o.initial_accumulator_value()));
    }
    const double step = increment_step(st);
    ops::OptimParam it{p, p.grad(), {st["sum"]}, {}};
    it.scalars.a = o.lr() / (1.0 + (step - 1.0) * o.lr_decay());
    items.push_back(std::move(it));
  }
  ops::optim_step(OptimOp::Adagrad, h, items);
}

}  // namespace ember::optim
