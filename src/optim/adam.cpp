// Adam and AdamW (torch/optim/adam.py, adamw.py): bias-corrected moments, optional AMSGrad;
// AdamW decays the parameter itself.
#include "ember/optim/adam.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/ops.h"
#include "ember/optim/adamw.h"
#include "optim/fused.h"

namespace ember::optim {

namespace {

std::vector<std::string> adam_option_names() {
  return {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"};
}

template <class O>
std::vector<double> adam_get(const O& o, const std::string& name, const char* opt) {
  if (name == "lr") return {o.lr()};
  if (name == "betas") return {std::get<0>(o.betas()), std::get<1>(o.betas())};
  if (name == "eps") return {o.eps()};
  if (name == "weight_decay") return {o.weight_decay()};
  if (name == "amsgrad") return {o.amsgrad() ? 1.0 : 0.0};
  if (name == "maximize") return {o.maximize() ? 1.0 : 0.0};
  detail::unknown_option(opt, name);
}

template <class O>
void adam_set(O& o, const std::string& name, const std::vector<double>& value, const char* opt) {
  if (name == "betas") {
    if (value.size() != 2) throw ValueError(std::string("[") + opt + "] betas takes two values");
    o.betas(std::make_tuple(value[0], value[1]));
    return;
  }
  const double v = detail::single(name, value);
  if (name == "lr")
    o.lr(v);
  else if (name == "eps")
    o.eps(v);
  else if (name == "weight_decay")
    o.weight_decay(v);
  else if (name == "amsgrad")
    o.amsgrad(v != 0.0);
  else if (name == "maximize")
    o.maximize(v != 0.0);
  else
    detail::unknown_option(opt, name);
}

// The options of either kind, read through PyTorch's names.
struct AdamConfig {
  double lr, beta1, beta2, eps, weight_decay;
  bool amsgrad, maximize;
};

template <class O>
AdamConfig config_of(const O& o) {
  return {o.lr(),      std::get<0>(o.betas()), std::get<1>(o.betas()),
          o.eps(),     o.weight_decay(),       o.amsgrad(),
          o.maximize()};
}

AdamConfig config(const OptimizerOptions& options, const std::string& name) {
  if (name == "AdamW") return config_of(detail::options_as<AdamWOptions>(options, name));
  return config_of(detail::options_as<AdamOptions>(options, name));
}

}  // namespace

std::vector<std::string> AdamOptions::option_names() const { return adam_option_names(); }
std::vector<double> AdamOptions::get_option(const std::string& name) const {
  return adam_get(*this, name, "Adam");
}
void AdamOptions::set_option(const std::string& name, const std::vector<double>& value) {
  adam_set(*this, name, value, "Adam");
}

std::vector<std::string> AdamWOptions::option_names() const { return adam_option_names(); }
std::vector<double> AdamWOptions::get_option(const std::string& name) const {
  return adam_get(*this, name, "AdamW");
}
void AdamWOptions::set_option(const std::string& name, const std::vector<double>& value) {
  adam_set(*this, name, value, "AdamW");
}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(single_group(std::move(params)), defaults) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Adam("Adam", std::move(param_groups), defaults.clone()) {}

Adam::Adam(std::string name, std::vector<OptimizerParamGroup> param_groups,
           std::unique_ptr<OptimizerOptions> defaults)
    : Optimizer(std::move(name), std::move(defaults)) {
  init(param_groups);
}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(single_group(std::move(params)), defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Adam("AdamW", std::move(param_groups), defaults.clone()) {}

void Adam::check_options(const OptimizerOptions& options) const {
  const AdamConfig c = config(options, name());
  detail::check_nonnegative(name(), "learning rate", c.lr);
  detail::check_nonnegative(name(), "epsilon value", c.eps);
  if (!(c.beta1 >= 0.0 && c.beta1 < 1.0)) {
    fail("Invalid beta parameter at index 0: " + detail::format_double(c.beta1));
  }
  if (!(c.beta2 >= 0.0 && c.beta2 < 1.0)) {
    fail("Invalid beta parameter at index 1: " + detail::format_double(c.beta2));
  }
  detail::check_nonnegative(name(), "weight_decay value", c.weight_decay);
}

void Adam::step_group(OptimizerParamGroup& group) {
  const AdamConfig c = config(group.options(), name());
  OptimHyper h;
  h.lr = c.lr;
  h.weight_decay = c.weight_decay;
  h.beta1 = c.beta1;
  h.beta2 = c.beta2;
  h.eps = c.eps;
  h.amsgrad = c.amsgrad;
  h.maximize = c.maximize;
  h.decoupled_weight_decay = name() == "AdamW";
  std::vector<ops::OptimParam> items;
  for (const Tensor& p : params_with_grad(group)) {
    ParamState& st = state(p);
    if (!st.contains("step")) {
      st.insert("step", detail::step_tensor(0.0));
      st.insert("exp_avg", detail::state_like(p));
      st.insert("exp_avg_sq", detail::state_like(p));
    }
    if (c.amsgrad && !st.contains("max_exp_avg_sq")) {
      st.insert("max_exp_avg_sq", detail::state_like(p));
    }
    const double step = increment_step(st);
    ops::OptimParam it{p, p.grad(), {st["exp_avg"], st["exp_avg_sq"]}, {}};
    if (c.amsgrad) it.state[2] = st["max_exp_avg_sq"];
    const double bc1 = 1.0 - std::pow(c.beta1, step);
    const double bc2 = 1.0 - std::pow(c.beta2, step);
    it.scalars.a = c.lr / bc1;
    it.scalars.b = std::sqrt(bc2);
    items.push_back(std::move(it));
  }
  ops::optim_step(OptimOp::Adam, h, items);
}

}  // namespace ember::optim
