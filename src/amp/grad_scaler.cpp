// amp::GradScaler: PyTorch's torch.amp.GradScaler (per-optimizer stages, found_inf per device,
// the scale and growth tracker kept on the device), plus the guardrails: the scaled leaves are
// marked for gradient clipping, a skipped step names the first overflowing parameter, and the
// scale falling below 1 is reported.
#include "ember/amp/grad_scaler.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_set>

#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/grad_mode.h"
#include "ember/ops.h"
#include "kernels/amp_ops.h"
#include "nn/scaled_grads.h"

namespace ember::amp {

namespace {

[[noreturn]] void fail(const std::string& what) { throw Error("[GradScaler] " + what); }

// The AccumulateGrad nodes the loss's graph reaches: the leaves backward will write.
std::vector<std::shared_ptr<autograd::Node>> leaf_accumulators(const Tensor& loss) {
  std::vector<std::shared_ptr<autograd::Node>> leaves;
  std::shared_ptr<autograd::Node> root = loss.grad_fn();
  if (!root) return leaves;
  std::unordered_set<const autograd::Node*> seen{root.get()};
  std::vector<std::shared_ptr<autograd::Node>> stack{root};
  while (!stack.empty()) {
    std::shared_ptr<autograd::Node> node = std::move(stack.back());
    stack.pop_back();
    const auto& edges = node->next_edges();
    if (edges.empty() && node->name() == "AccumulateGrad") leaves.push_back(node);
    for (const autograd::Edge& e : edges) {
      if (e.valid() && seen.insert(e.fn.get()).second) stack.push_back(e.fn);
    }
  }
  return leaves;
}

const Tensor& entry(const GradScalerStateDict& sd, const std::string& key) {
  const Tensor* t = sd.find(key);
  if (t == nullptr) fail("load_state_dict: the state dict has no '" + key + "' entry");
  if (!t->defined() || t->numel() != 1) {
    fail("load_state_dict: '" + key + "' must be a one-element tensor");
  }
  return *t;
}

}  // namespace

GradScaler::GradScaler(GradScalerOptions options)
    : device_type_(options.device()),
      enabled_(options.enabled()),
      init_scale_(options.init_scale()),
      growth_factor_(options.growth_factor()),
      backoff_factor_(options.backoff_factor()),
      growth_interval_(options.growth_interval()) {
  if (enabled_ && device_type_ == kCUDA && !cuda::is_available()) {
    std::fprintf(stderr,
                 "[GradScaler] warning: GradScaler is enabled for CUDA, but CUDA is not "
                 "available.  Disabling.\n");
    enabled_ = false;
  }
  if (!enabled_) return;
  if (!(growth_factor_ > 1.0)) fail("The growth factor must be > 1.0.");
  if (!(backoff_factor_ < 1.0)) fail("The backoff factor must be < 1.0.");
  if (growth_interval_ <= 0) {
    fail("growth_interval must be positive, got " + std::to_string(growth_interval_));
  }
}

GradScaler::~GradScaler() { nn::detail::clear_scaled_grads(this); }

void GradScaler::check_scale(const char* funcname) const {
  if (!scale_.defined()) {
    fail(std::string("Attempted ") + funcname +
         " but _scale is None.  This may indicate your script did not use scaler.scale(loss or "
         "outputs) earlier in the iteration.");
  }
  if (!scaled_since_update_) {
    fail(std::string(funcname) +
         "() called without scaler.scale(loss) since the last update(): the gradients were not "
         "scaled in this iteration, so unscaling them would shrink them by the scale");
  }
}

void GradScaler::lazy_init(Device device) {
  scale_ = full({}, init_scale_, TensorOptions().dtype(kFloat32).device(device));
  growth_tracker_ = full({}, init_growth_tracker_, TensorOptions().dtype(kInt32).device(device));
  host_scale_ = static_cast<float>(init_scale_);
  host_tracker_ = init_growth_tracker_;
}

Tensor GradScaler::scale(const Tensor& loss) {
  if (!enabled_) return loss;
  if (!loss.defined()) fail("scale() got an undefined tensor");
  if (!scale_.defined()) lazy_init(loss.device());
  nn::detail::mark_scaled_grads(this, leaf_accumulators(loss));
  scaled_since_update_ = true;
  return loss * scale_.to(loss.device(), /*non_blocking=*/true);
}

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!enabled_) return;
  check_scale("unscale_");
  OptimizerState& st = per_optimizer_[&optimizer];
  if (st.stage == Stage::Unscaled) {
    fail("unscale_() has already been called on this optimizer since the last update().");
  }
  if (st.stage == Stage::Stepped) fail("unscale_() is being called after step().");
  NoGradGuard no_grad;
  // The reciprocal in double, rounded once, as PyTorch.
  const Tensor inv_scale = scale_.to(kFloat64).reciprocal().to(kFloat32);
  std::vector<DeviceCheck> checks;
  std::vector<TensorList> grads;
  std::vector<Tensor> all_params;
  const auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t i = 0; i < groups[g].params().size(); ++i) {
      const Tensor& p = groups[g].params()[i];
      if (!p.defined() || !p.grad().defined()) continue;
      const Tensor grad = p.grad();
      if (grad.dtype() == kFloat16) {
        throw ValueError("[GradScaler] Attempting to unscale FP16 gradients.");
      }
      size_t k = 0;
      while (k < checks.size() && checks[k].found_inf.device() != grad.device()) ++k;
      if (k == checks.size()) {
        const TensorOptions o = TensorOptions().device(grad.device());
        checks.push_back({zeros({}, o.dtype(kFloat32)),
                          full({}, std::numeric_limits<int32_t>::max(), o.dtype(kInt32)),
                          {},
                          {}});
        grads.emplace_back();
      }
      checks[k].params.push_back(p);
      checks[k].where.emplace_back(g, i);
      grads[k].push_back(grad);
      all_params.push_back(p);
    }
  }
  for (size_t k = 0; k < checks.size(); ++k) {
    const Device dev = checks[k].found_inf.device();
    const Tensor inv_here = inv_scale.device() == dev ? inv_scale : inv_scale.to(dev);
    _amp_foreach_non_finite_check_and_unscale_(grads[k], checks[k].found_inf, inv_here,
                                               checks[k].first_bad);
  }
  nn::detail::unmark_scaled_grads(this, all_params);
  st.checks = std::move(checks);
  st.stage = Stage::Unscaled;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  check_scale("step");
  if (per_optimizer_[&optimizer].stage == Stage::Stepped) {
    fail("step() has already been called since the last update().");
  }
  if (per_optimizer_[&optimizer].stage == Stage::Ready) unscale_(optimizer);
  OptimizerState& st = per_optimizer_[&optimizer];
  if (st.checks.empty()) {
    fail(
        "No inf checks were recorded for this optimizer. (None of its parameters has a "
        "gradient: did the scaled loss's backward reach them?)");
  }
  // One synchronisation: every device's flag and first index, gathered on the scale's device.
  TensorList parts;
  for (const DeviceCheck& c : st.checks) {
    parts.push_back(c.found_inf.to(scale_.device(), kFloat64).reshape({1}));
    parts.push_back(c.first_bad.to(scale_.device(), kFloat64).reshape({1}));
  }
  const std::vector<double> flags = cat(parts).to_vector<double>();
  bool found = false;
  std::optional<std::pair<size_t, size_t>> first;
  for (size_t k = 0; k < st.checks.size(); ++k) {
    if (flags[2 * k] == 0.0) continue;
    found = true;
    const auto idx = static_cast<size_t>(flags[2 * k + 1]);
    if (idx < st.checks[k].where.size() && (!first || st.checks[k].where[idx] < *first)) {
      first = st.checks[k].where[idx];
    }
  }
  st.found_inf = found;
  if (!found) {
    optimizer.step();
  } else if (first) {
    const Tensor& p = optimizer.param_groups()[first->first].params()[first->second];
    auto name = names_.find(p.impl_ptr().get());
    last_overflow_ = name != names_.end() ? name->second
                                          : "param group " + std::to_string(first->first) +
                                                ", index " + std::to_string(first->second);
  }
  st.stage = Stage::Stepped;
  return !found;
}

void GradScaler::warn_if_below_one(double new_scale) {
  if (new_scale >= 1.0) {
    warned_below_one_ = false;
    return;
  }
  if (warned_below_one_) return;
  warned_below_one_ = true;
  std::fprintf(stderr,
               "[GradScaler] warning: the loss scale fell to %g, below 1: gradients now overflow "
               "even unscaled (inf/NaN in the forward pass or the loss?), and the steps keep "
               "being skipped\n",
               new_scale);
}

void GradScaler::update(std::optional<double> new_scale) {
  if (!enabled_) return;
  if (!scale_.defined()) check_scale("update");
  NoGradGuard no_grad;
  if (new_scale) {
    scale_.fill_(*new_scale);
    host_scale_ = static_cast<float>(*new_scale);
  } else {
    TensorList found;
    bool known = true;
    bool any = false;
    for (const auto& [opt, st] : per_optimizer_) {
      for (const DeviceCheck& c : st.checks) found.push_back(c.found_inf.to(scale_.device()));
      if (st.checks.empty()) continue;
      if (st.found_inf) {
        any = any || *st.found_inf;
      } else {
        known = false;
      }
    }
    if (found.empty()) {
      fail(
          "No inf checks were recorded prior to update. (Call scaler.step(optimizer) or "
          "scaler.unscale_(optimizer) after scaler.scale(loss).backward() in each iteration.)");
    }
    Tensor combined = found[0].clone();
    for (size_t k = 1; k < found.size(); ++k) combined.add_(found[k]);
    _amp_update_scale_(scale_, growth_tracker_, combined, growth_factor_, backoff_factor_,
                       growth_interval_);
    if (known && host_scale_) {
      float s = static_cast<float>(*host_scale_);
      auto t = static_cast<int32_t>(host_tracker_);
      amp_update_scale_value(s, t, any ? 1.0f : 0.0f, growth_factor_, backoff_factor_,
                             growth_interval_);
      host_scale_ = s;
      host_tracker_ = t;
    } else {  // unscale_ without step(): the flags were never read, so read the result
      host_scale_ = scale_.item<double>();
      host_tracker_ = growth_tracker_.item<int64_t>();
    }
  }
  warn_if_below_one(*host_scale_);
  per_optimizer_.clear();
  nn::detail::clear_scaled_grads(this);
  scaled_since_update_ = false;
}

void GradScaler::update(const Tensor& new_scale) {
  if (!enabled_) return;
  const char* reason =
      "new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
      "with requires_grad=False.";
  if (!new_scale.defined() || new_scale.device().type() != device_type_ || new_scale.numel() != 1 ||
      new_scale.requires_grad()) {
    fail(reason);
  }
  if (!scale_.defined()) check_scale("update");
  scale_.copy_(new_scale.reshape({}));
  host_scale_ = scale_.item<double>();
  warn_if_below_one(*host_scale_);
  per_optimizer_.clear();
  nn::detail::clear_scaled_grads(this);
  scaled_since_update_ = false;
}

double GradScaler::get_scale() const {
  if (!enabled_) return 1.0;
  return scale_.defined() ? scale_.item<double>() : init_scale_;
}

int64_t GradScaler::get_growth_tracker() const {
  if (!enabled_) return 0;
  return growth_tracker_.defined() ? growth_tracker_.item<int64_t>() : init_growth_tracker_;
}

void GradScaler::set_parameter_names(const nn::NamedTensors& named_parameters) {
  names_.clear();
  for (const auto& [name, p] : named_parameters) {
    if (p.defined()) names_[p.impl_ptr().get()] = name;
  }
}

GradScalerStateDict GradScaler::state_dict() const {
  GradScalerStateDict sd;
  if (!enabled_) return sd;
  sd.insert("scale", scalar_tensor(get_scale(), kFloat64));
  sd.insert("growth_factor", scalar_tensor(growth_factor_, kFloat64));
  sd.insert("backoff_factor", scalar_tensor(backoff_factor_, kFloat64));
  sd.insert("growth_interval", scalar_tensor(growth_interval_, kInt64));
  sd.insert("_growth_tracker", scalar_tensor(get_growth_tracker(), kInt64));
  return sd;
}

void GradScaler::load_state_dict(const GradScalerStateDict& state_dict) {
  if (!enabled_) return;
  if (state_dict.size() == 0) {
    fail(
        "The source state dict is empty, possibly because it was saved from a disabled "
        "instance of GradScaler.");
  }
  const double scale = entry(state_dict, "scale").item<double>();
  const double growth = entry(state_dict, "growth_factor").item<double>();
  const double backoff = entry(state_dict, "backoff_factor").item<double>();
  const double interval = entry(state_dict, "growth_interval").item<double>();
  const double tracker = entry(state_dict, "_growth_tracker").item<double>();
  if (!std::isfinite(scale) || !(scale > 0)) {
    fail("load_state_dict: 'scale' must be positive and finite, got " + std::to_string(scale));
  }
  if (!(growth > 1.0)) fail("load_state_dict: 'growth_factor' must be > 1.0");
  if (!(backoff < 1.0)) fail("load_state_dict: 'backoff_factor' must be < 1.0");
  if (!(interval >= 1) || interval != std::floor(interval)) {
    fail("load_state_dict: 'growth_interval' must be a positive integer");
  }
  if (!(tracker >= 0) || tracker >= interval || tracker != std::floor(tracker)) {
    fail("load_state_dict: '_growth_tracker' must be an integer in [0, growth_interval)");
  }
  init_scale_ = scale;
  growth_factor_ = growth;
  backoff_factor_ = backoff;
  growth_interval_ = static_cast<int64_t>(interval);
  init_growth_tracker_ = static_cast<int64_t>(tracker);
  if (scale_.defined()) scale_.fill_(scale);
  if (growth_tracker_.defined()) growth_tracker_.fill_(init_growth_tracker_);
  host_scale_ = static_cast<float>(scale);
  host_tracker_ = init_growth_tracker_;
}

}  // namespace ember::amp
