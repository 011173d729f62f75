// SGD (torch/optim/sgd.py): the momentum buffer starts as the first (decayed) gradient.
#include "ember/optim/sgd.h"

#include "ember/autograd.h"
#include "ember/ops.h"
#include "optim/fused.h"

namespace ember::optim {

std::vector<std::string> SGDOptions::option_names() const {
  return {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"};
}

std::vector<double> SGDOptions::get_option(const std::string& name) const {
  if (name == "lr") return {lr()};
  if (name == "momentum") return {momentum()};
  if (name == "dampening") return {dampening()};
  if (name == "weight_decay") return {weight_decay()};
  if (name == "nesterov") return {nesterov() ? 1.0 : 0.0};
  if (name == "maximize") return {maximize() ? 1.0 : 0.0};
  detail::unknown_option("SGD", name);
}

void SGDOptions::set_option(const std::string& name, const std::vector<double>& value) {
  const double v = detail::single(name, value);
  if (name == "lr")
    lr(v);
  else if (name == "momentum")
    momentum(v);
  else if (name == "dampening")
    dampening(v);
  else if (name == "weight_decay")
    weight_decay(v);
  else if (name == "nesterov")
    nesterov(v != 0.0);
  else if (name == "maximize")
    maximize(v != 0.0);
  else
    detail::unknown_option("SGD", name);
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(single_group(std::move(params)), defaults) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer("SGD", defaults.clone()) {
  init(param_groups);
}

void SGD::check_options(const OptimizerOptions& options) const {
  const auto& o = detail::options_as<SGDOptions>(options, name());
  detail::check_nonnegative(name(), "learning rate", o.lr());
  detail::check_nonnegative(name(), "momentum value", o.momentum());
  detail::check_nonnegative(name(), "weight_decay value", o.weight_decay());
  if (o.nesterov() && (o.momentum() <= 0 || o.dampening() != 0)) {
    fail("Nesterov momentum requires a momentum and zero dampening");
  }
}

void SGD::step_group(OptimizerParamGroup& group) {
  const auto& o = detail::options_as<SGDOptions>(group.options(), name());
  OptimHyper h;
  h.lr = o.lr();
  h.weight_decay = o.weight_decay();
  h.momentum = o.momentum();
  h.dampening = o.dampening();
  h.nesterov = o.nesterov();
  h.maximize = o.maximize();
  std::vector<ops::OptimParam> items;
  for (const Tensor& p : params_with_grad(group)) {
    ops::OptimParam it{p, p.grad(), {}, {}};
    if (o.momentum() != 0.0) {
      ParamState& st = state(p);
      Tensor* buf = st.find("momentum_buffer");
      if (!buf) {
        buf = &st.insert("momentum_buffer", empty(p.sizes(), p.options()));
        it.scalars.first = true;
      }
      it.state[0] = *buf;
    }
    items.push_back(std::move(it));
  }
  ops::optim_step(OptimOp::SGD, h, items);
}

}  // namespace ember::optim
