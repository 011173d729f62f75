// RMSprop (torch/optim/rmsprop.py): running mean of squared gradients, optionally centered by the
// running mean of gradients, with optional momentum.
#include "ember/optim/rmsprop.h"

#include "ember/autograd.h"
#include "ember/ops.h"
#include "optim/fused.h"

namespace ember::optim {

std::vector<std::string> RMSpropOptions::option_names() const {
  return {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "maximize"};
}

std::vector<double> RMSpropOptions::get_option(const std::string& name) const {
  if (name == "lr") return {lr()};
  if (name == "alpha") return {alpha()};
  if (name == "eps") return {eps()};
  if (name == "weight_decay") return {weight_decay()};
  if (name == "momentum") return {momentum()};
  if (name == "centered") return {centered() ? 1.0 : 0.0};
  if (name == "maximize") return {maximize() ? 1.0 : 0.0};
  detail::unknown_option("RMSprop", name);
}

void RMSpropOptions::set_option(const std::string& name, const std::vector<double>& value) {
  const double v = detail::single(name, value);
  if (name == "lr")
    lr(v);
  else if (name == "alpha")
    alpha(v);
  else if (name == "eps")
    eps(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "momentum")
    momentum(v);
  else if (name == "centered")
    centered(v != 0.0);
  else if (name == "maximize")
    maximize(v != 0.0);
  else
    detail::unknown_option("RMSprop", name);
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(single_group(std::move(params)), defaults) {}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer("RMSprop", defaults.clone()) {
  init(param_groups);
}

void RMSprop::check_options(const OptimizerOptions& options) const {
  const auto& o = detail::options_as<RMSpropOptions>(options, name());
  detail::check_nonnegative(name(), "learning rate", o.lr());
  detail::check_nonnegative(name(), "epsilon value", o.eps());
  detail::check_nonnegative(name(), "momentum value", o.momentum());
  detail::check_nonnegative(name(), "weight_decay value", o.weight_decay());
  detail::check_nonnegative(name(), "alpha value", o.alpha());
}

void RMSprop::step_group(OptimizerParamGroup& group) {
  const auto& o = detail::options_as<RMSpropOptions>(group.options(), name());
  OptimHyper h;
  h.lr = o.lr();
  h.alpha = o.alpha();
  h.eps = o.eps();
  h.weight_decay = o.weight_decay();
  h.momentum = o.momentum();
  h.centered = o.centered();
  h.maximize = o.maximize();
  std::vector<ops::OptimParam> items;
  for (const Tensor& p : params_with_grad(group)) {
    ParamState& st = state(p);
    if (!st.contains("step")) {
      st.insert("step", detail::step_tensor(0.0));
      st.insert("square_avg", detail::state_like(p));
    }
    if (o.momentum() > 0.0 && !st.contains("momentum_buffer")) {
      st.insert("momentum_buffer", detail::state_like(p));
    }
    if (o.centered() && !st.contains("grad_avg")) st.insert("grad_avg", detail::state_like(p));
    increment_step(st);
    ops::OptimParam it{p, p.grad(), {st["square_avg"]}, {}};
    if (o.momentum() > 0.0) it.state[1] = st["momentum_buffer"];
    if (o.centered()) it.state[2] = st["grad_avg"];
    items.push_back(std::move(it));
  }
  ops::optim_step(OptimOp::RMSprop, h, items);
}

}  // namespace ember::optim
