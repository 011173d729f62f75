// Learning-rate schedulers with PyTorch's chainable forms (get_lr) and closed forms.
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/ops.h"
#include "optim/fused.h"

namespace ember::optim::lr_scheduler {

namespace {

constexpr double kPi = 3.14159265358979323846;

// Python's a % b for b > 0.
int64_t py_mod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return r < 0 ? r + b : r;
}

Tensor f64(double v) { return scalar_tensor(v, kFloat64); }
Tensor i64(int64_t v) { return scalar_tensor(v, kInt64); }

double get_f64(const SchedulerStateDict& sd, const std::string& key) {
  const Tensor* t = sd.find(key);
  if (!t) throw ValueError("[LRScheduler.load_state_dict] missing key '" + key + "'");
  return t->item<double>();
}

int64_t get_i64(const SchedulerStateDict& sd, const std::string& key) {
  const Tensor* t = sd.find(key);
  if (!t) throw ValueError("[LRScheduler.load_state_dict] missing key '" + key + "'");
  return t->item<int64_t>();
}

void put_list(SchedulerStateDict& sd, const std::string& name, const std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) sd.insert(name + "." + std::to_string(i), f64(v[i]));
}

void get_list(const SchedulerStateDict& sd, const std::string& name, std::vector<double>& v) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = get_f64(sd, name + "." + std::to_string(i));
}

}  // namespace

// ---- LRScheduler --------------------------------------------------------------------------------

LRScheduler::LRScheduler(Optimizer& optimizer, int64_t last_epoch)
    : optimizer_(&optimizer), last_epoch_(last_epoch) {
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    if (last_epoch == -1) {
      if (!groups[i].has_initial_lr()) groups[i].set_initial_lr(groups[i].lr());
    } else if (!groups[i].has_initial_lr()) {
      throw ValueError("[LRScheduler] param 'initial_lr' is not specified in param_groups[" +
                       std::to_string(i) + "] when resuming an optimizer");
    }
    base_lrs_.push_back(groups[i].initial_lr());
  }
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> out;
  for (const OptimizerParamGroup& g : optimizer_->param_groups()) out.push_back(g.lr());
  return out;
}

void LRScheduler::apply(const std::vector<double>& lrs) {
  auto& groups = optimizer_->param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].set_lr(lrs[i]);
  last_lr_ = group_lrs();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  apply(get_lr());
}

void LRScheduler::step(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  apply(closed_form_lr());
}

SchedulerStateDict LRScheduler::state_dict() const {
  SchedulerStateDict sd;
  sd.insert("last_epoch", i64(last_epoch_));
  sd.insert("_step_count", i64(step_count_));
  put_list(sd, "base_lrs", base_lrs_);
  put_list(sd, "_last_lr", last_lr_);
  return sd;
}

void LRScheduler::load_state_dict(const SchedulerStateDict& sd) {
  last_epoch_ = get_i64(sd, "last_epoch");
  step_count_ = get_i64(sd, "_step_count");
  get_list(sd, "base_lrs", base_lrs_);
  last_lr_.resize(base_lrs_.size());
  get_list(sd, "_last_lr", last_lr_);
}

// ---- StepLR -------------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), step_size_(step_size), gamma_(gamma) {
  if (step_size <= 0) throw ValueError("[StepLR] step_size must be positive");
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> StepLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double b : base_lrs_) {
    lrs.push_back(b * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)));
  }
  return lrs;
}

SchedulerStateDict StepLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("step_size", i64(step_size_));
  sd.insert("gamma", f64(gamma_));
  return sd;
}

void StepLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  step_size_ = get_i64(sd, "step_size");
  gamma_ = get_f64(sd, "gamma");
}

// ---- MultiStepLR --------------------------------------------------------------------------------

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma,
                         int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (hits == 0) return lrs;
  for (double& lr : lrs) lr *= std::pow(gamma_, static_cast<double>(hits));
  return lrs;
}

std::vector<double> MultiStepLR::closed_form_lr() {
  const auto reached =
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * std::pow(gamma_, static_cast<double>(reached)));
  return lrs;
}

SchedulerStateDict MultiStepLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("milestones", tensor(milestones_, {static_cast<int64_t>(milestones_.size())}, kInt64));
  sd.insert("gamma", f64(gamma_));
  return sd;
}

void MultiStepLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  if (const Tensor* m = sd.find("milestones")) milestones_ = m->to_vector<int64_t>();
  gamma_ = get_f64(sd, "gamma");
}

// ---- ExponentialLR ------------------------------------------------------------------------------

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

std::vector<double> ExponentialLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double b : base_lrs_) lrs.push_back(b * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

SchedulerStateDict ExponentialLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("gamma", f64(gamma_));
  return sd;
}

void ExponentialLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  gamma_ = get_f64(sd, "gamma");
}

// ---- CosineAnnealingLR --------------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min,
                                     int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch), T_max_(T_max), eta_min_(eta_min) {
  if (T_max <= 0) throw ValueError("[CosineAnnealingLR] T_max must be positive");
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  const double T = static_cast<double>(T_max_);
  const double e = static_cast<double>(last_epoch_);
  if (last_epoch_ == 0) return lrs;
  for (size_t i = 0; i < lrs.size(); ++i) {
    const double base = base_lrs_[i];
    if (step_count_ == 1 && last_epoch_ > 0) {
      lrs[i] = eta_min_ + (base - eta_min_) * (1 + std::cos(e * kPi / T)) / 2;
    } else if (py_mod(last_epoch_ - 1 - T_max_, 2 * T_max_) == 0) {
      lrs[i] = lrs[i] + (base - eta_min_) * (1 - std::cos(kPi / T)) / 2;
    } else {
      lrs[i] =
          (1 + std::cos(kPi * e / T)) / (1 + std::cos(kPi * (e - 1) / T)) * (lrs[i] - eta_min_) +
          eta_min_;
    }
  }
  return lrs;
}

std::vector<double> CosineAnnealingLR::closed_form_lr() {
  std::vector<double> lrs;
  for (double b : base_lrs_) {
    lrs.push_back(eta_min_ + (b - eta_min_) *
                                 (1 + std::cos(kPi * static_cast<double>(last_epoch_) /
                                               static_cast<double>(T_max_))) /
                                 2);
  }
  return lrs;
}

SchedulerStateDict CosineAnnealingLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("T_max", i64(T_max_));
  sd.insert("eta_min", f64(eta_min_));
  return sd;
}

void CosineAnnealingLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  T_max_ = get_i64(sd, "T_max");
  eta_min_ = get_f64(sd, "eta_min");
}

// ---- LinearLR -----------------------------------------------------------------------------------

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor,
                   int64_t total_iters, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  if (start_factor > 1.0 || start_factor <= 0) {
    throw ValueError(
        "[LinearLR] Starting multiplicative factor expected to be greater than 0 and less or "
        "equal to 1.");
  }
  if (end_factor > 1.0 || end_factor < 0) {
    throw ValueError("[LinearLR] Ending multiplicative factor expected to be between 0 and 1.");
  }
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr *= start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double d = end_factor_ - start_factor_;
  for (double& lr : lrs) {
    lr *= 1.0 + d / (static_cast<double>(total_iters_) * start_factor_ +
                     static_cast<double>(last_epoch_ - 1) * d);
  }
  return lrs;
}

std::vector<double> LinearLR::closed_form_lr() {
  std::vector<double> lrs;
  const double t = static_cast<double>(std::min(total_iters_, last_epoch_));
  for (double b : base_lrs_) {
    lrs.push_back(b * (start_factor_ +
                       (end_factor_ - start_factor_) * t / static_cast<double>(total_iters_)));
  }
  return lrs;
}

SchedulerStateDict LinearLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("start_factor", f64(start_factor_));
  sd.insert("end_factor", f64(end_factor_));
  sd.insert("total_iters", i64(total_iters_));
  return sd;
}

void LinearLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  start_factor_ = get_f64(sd, "start_factor");
  end_factor_ = get_f64(sd, "end_factor");
  total_iters_ = get_i64(sd, "total_iters");
}

// ---- OneCycleLR ---------------------------------------------------------------------------------

namespace {

// Sets each group's initial_lr to max_lr / div_factor before the base class reads it.
Optimizer& prepare_one_cycle(Optimizer& optimizer, const std::vector<double>& max_lrs,
                             double div_factor, int64_t last_epoch) {
  auto& groups = optimizer.param_groups();
  if (max_lrs.size() != groups.size()) {
    throw ValueError("[OneCycleLR] expected " + std::to_string(groups.size()) +
                     " values for max_lr, got " + std::to_string(max_lrs.size()));
  }
  if (last_epoch == -1) {
    for (size_t i = 0; i < groups.size(); ++i) groups[i].set_initial_lr(max_lrs[i] / div_factor);
  }
  return optimizer;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start,
                       const std::string& anneal_strategy, double div_factor,
                       double final_div_factor, bool three_phase, bool cycle_momentum,
                       double base_momentum, double max_momentum, int64_t last_epoch)
    : OneCycleLR(optimizer, std::vector<double>(optimizer.param_groups().size(), max_lr),
                 total_steps, pct_start, anneal_strategy, div_factor, final_div_factor, three_phase,
                 cycle_momentum, base_momentum, max_momentum, last_epoch) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs,
                       int64_t total_steps, double pct_start, const std::string& anneal_strategy,
                       double div_factor, double final_div_factor, bool three_phase,
                       bool cycle_momentum, double base_momentum, double max_momentum,
                       int64_t last_epoch)
    : LRScheduler(prepare_one_cycle(optimizer, max_lrs, div_factor, last_epoch), last_epoch),
      total_steps_(total_steps),
      cos_(anneal_strategy == "cos"),
      cycle_momentum_(cycle_momentum) {
  if (total_steps <= 0) {
    throw ValueError("[OneCycleLR] Expected positive integer total_steps, but got " +
                     std::to_string(total_steps));
  }
  if (pct_start < 0 || pct_start > 1) {
    throw ValueError("[OneCycleLR] Expected float between 0 and 1 pct_start, but got " +
                     detail::format_double(pct_start));
  }
  if (anneal_strategy != "cos" && anneal_strategy != "linear") {
    throw ValueError("[OneCycleLR] anneal_strategy must be one of 'cos' or 'linear', instead got " +
                     anneal_strategy);
  }
  const double total = static_cast<double>(total_steps);
  if (three_phase) {
    phases_ = {{pct_start * total - 1, 0, 1, 0, 1},
               {2 * pct_start * total - 2, 1, 0, 1, 0},
               {total - 1, 0, 2, 0, 0}};
  } else {
    phases_ = {{pct_start * total - 1, 0, 1, 0, 1}, {total - 1, 1, 2, 1, 0}};
  }
  auto& groups = optimizer.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    initial_lrs_.push_back(groups[i].initial_lr());
    max_lrs_.push_back(max_lrs[i]);
    min_lrs_.push_back(groups[i].initial_lr() / final_div_factor);
    max_momenta_.push_back(max_momentum);
    base_momenta_.push_back(base_momentum);
  }
  if (cycle_momentum) {
    const OptimizerOptions& d = optimizer.defaults();
    if (!d.has_option("momentum") && !d.has_option("betas")) {
      throw ValueError(
          "[OneCycleLR] optimizer must support momentum or beta1 with `cycle_momentum` option "
          "enabled");
    }
    use_beta1_ = d.has_option("betas");
    if (last_epoch == -1) {
      for (OptimizerParamGroup& g : groups) {
        if (use_beta1_) {
          std::vector<double> betas = g.options().get_option("betas");
          g.options().set_option("betas", {max_momentum, betas[1]});
        } else {
          g.options().set_option("momentum", {max_momentum});
        }
      }
    }
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (cos_) return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1);
  return (end - start) * pct + start;
}

std::vector<double> OneCycleLR::get_lr() {
  if (last_epoch_ > total_steps_) {
    throw ValueError("[OneCycleLR] Tried to step " + std::to_string(last_epoch_) +
                     " times. The specified number of total steps is " +
                     std::to_string(total_steps_));
  }
  const double step = static_cast<double>(last_epoch_);
  auto& groups = optimizer_->param_groups();
  std::vector<double> lrs;
  for (size_t i = 0; i < groups.size(); ++i) {
    const double lr_at[3] = {initial_lrs_[i], max_lrs_[i], min_lrs_[i]};
    const double m_at[2] = {max_momenta_[i], base_momenta_[i]};
    double start_step = 0.0, lr = 0.0, momentum = 0.0;
    for (size_t k = 0; k < phases_.size(); ++k) {
      const Phase& ph = phases_[k];
      if (step <= ph.end_step || k + 1 == phases_.size()) {
        const double pct = (step - start_step) / (ph.end_step - start_step);
        lr = anneal(lr_at[ph.start_lr], lr_at[ph.end_lr], pct);
        momentum = anneal(m_at[ph.start_momentum], m_at[ph.end_momentum], pct);
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    if (cycle_momentum_) {
      if (use_beta1_) {
        const std::vector<double> betas = groups[i].options().get_option("betas");
        groups[i].options().set_option("betas", {momentum, betas[1]});
      } else {
        groups[i].options().set_option("momentum", {momentum});
      }
    }
  }
  return lrs;
}

SchedulerStateDict OneCycleLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("total_steps", i64(total_steps_));
  put_list(sd, "initial_lr", initial_lrs_);
  put_list(sd, "max_lr", max_lrs_);
  put_list(sd, "min_lr", min_lrs_);
  put_list(sd, "max_momentum", max_momenta_);
  put_list(sd, "base_momentum", base_momenta_);
  return sd;
}

void OneCycleLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  total_steps_ = get_i64(sd, "total_steps");
  get_list(sd, "initial_lr", initial_lrs_);
  get_list(sd, "max_lr", max_lrs_);
  get_list(sd, "min_lr", min_lrs_);
  get_list(sd, "max_momentum", max_momenta_);
  get_list(sd, "base_momentum", base_momenta_);
}

// ---- SequentialLR -------------------------------------------------------------------------------

SequentialLR::SequentialLR(Optimizer& optimizer,
                           std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones, int64_t last_epoch)
    : LRScheduler(optimizer, last_epoch),
      schedulers_(std::move(schedulers)),
      milestones_(std::move(milestones)) {
  if (schedulers_.empty()) {
    throw ValueError("[SequentialLR] Sequential Schedulers expects at least one scheduler");
  }
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    if (!schedulers_[i] || &schedulers_[i]->optimizer() != &optimizer) {
      throw ValueError(
          "[SequentialLR] Sequential Schedulers expects all schedulers to belong to the same "
          "optimizer, but got scheduler at index " +
          std::to_string(i) + " to be different than the optimizer passed in.");
    }
  }
  if (milestones_.size() != schedulers_.size() - 1) {
    throw ValueError(
        "[SequentialLR] Sequential Schedulers expects number of schedulers provided to be one "
        "more than the number of milestone points, but got number of schedulers " +
        std::to_string(schedulers_.size()) + " and the number of milestones to be equal to " +
        std::to_string(milestones_.size()));
  }
  last_epoch_ = last_epoch + 1;
  // Back to the initial lrs, undo the inner schedulers' construction steps, then start the first.
  for (OptimizerParamGroup& g : optimizer.param_groups()) g.set_lr(g.initial_lr());
  for (auto& s : schedulers_) s->last_epoch_ -= 1;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

std::vector<double> SequentialLR::get_lr() { return group_lrs(); }

void SequentialLR::step() {
  ++last_epoch_;
  const size_t idx = static_cast<size_t>(
      std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin());
  LRScheduler& s = *schedulers_[idx];
  if (idx > 0 && milestones_[idx - 1] == last_epoch_) {
    s.step(0);
  } else {
    s.step();
  }
  last_lr_ = s.get_last_lr();
}

SchedulerStateDict SequentialLR::state_dict() const {
  SchedulerStateDict sd = LRScheduler::state_dict();
  sd.insert("_milestones", tensor(milestones_, {static_cast<int64_t>(milestones_.size())}, kInt64));
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    for (const auto& [k, v] : schedulers_[i]->state_dict()) {
      sd.insert("_schedulers." + std::to_string(i) + "." + k, v);
    }
  }
  return sd;
}

void SequentialLR::load_state_dict(const SchedulerStateDict& sd) {
  LRScheduler::load_state_dict(sd);
  if (const Tensor* m = sd.find("_milestones")) milestones_ = m->to_vector<int64_t>();
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    const std::string prefix = "_schedulers." + std::to_string(i) + ".";
    SchedulerStateDict inner;
    for (const auto& [k, v] : sd) {
      if (k.rfind(prefix, 0) == 0) inner.insert(k.substr(prefix.size()), v);
    }
    schedulers_[i]->load_state_dict(inner);
  }
}

// ---- ReduceLROnPlateau --------------------------------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode, double factor,
                                     int64_t patience, double threshold,
                                     const std::string& threshold_mode, int64_t cooldown,
                                     double min_lr, double eps)
    : ReduceLROnPlateau(optimizer, mode, factor, patience, threshold, threshold_mode, cooldown,
                        std::vector<double>(optimizer.param_groups().size(), min_lr), eps) {}

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode, double factor,
                                     int64_t patience, double threshold,
                                     const std::string& threshold_mode, int64_t cooldown,
                                     const std::vector<double>& min_lrs, double eps)
    : optimizer_(&optimizer),
      max_mode_(mode == "max"),
      rel_(threshold_mode == "rel"),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      cooldown_(cooldown),
      min_lrs_(min_lrs),
      eps_(eps) {
  if (factor >= 1.0) throw ValueError("[ReduceLROnPlateau] Factor should be < 1.0.");
  if (mode != "min" && mode != "max") {
    throw ValueError("[ReduceLROnPlateau] mode " + mode + " is unknown!");
  }
  if (threshold_mode != "rel" && threshold_mode != "abs") {
    throw ValueError("[ReduceLROnPlateau] threshold mode " + threshold_mode + " is unknown!");
  }
  if (min_lrs_.size() != optimizer.param_groups().size()) {
    throw ValueError("[ReduceLROnPlateau] expected " +
                     std::to_string(optimizer.param_groups().size()) + " min_lrs, got " +
                     std::to_string(min_lrs_.size()));
  }
  best_ = max_mode_ ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  for (const OptimizerParamGroup& g : optimizer.param_groups()) last_lr_.push_back(g.lr());
}

bool ReduceLROnPlateau::is_better(double a) const {
  if (!max_mode_ && rel_) return a < best_ * (1.0 - threshold_);
  if (!max_mode_) return a < best_ - threshold_;
  if (rel_) return a > best_ * (threshold_ + 1.0);
  return a > best_ + threshold_;
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  auto& groups = optimizer_->param_groups();
  if (num_bad_epochs_ > patience_) {
    for (size_t i = 0; i < groups.size(); ++i) {
      const double old_lr = groups[i].lr();
      const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
      if (old_lr - new_lr > eps_) groups[i].set_lr(new_lr);
    }
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const OptimizerParamGroup& g : groups) last_lr_.push_back(g.lr());
}

SchedulerStateDict ReduceLROnPlateau::state_dict() const {
  SchedulerStateDict sd;
  sd.insert("last_epoch", i64(last_epoch_));
  sd.insert("best", f64(best_));
  sd.insert("num_bad_epochs", i64(num_bad_epochs_));
  sd.insert("cooldown_counter", i64(cooldown_counter_));
  sd.insert("factor", f64(factor_));
  sd.insert("patience", i64(patience_));
  sd.insert("threshold", f64(threshold_));
  sd.insert("cooldown", i64(cooldown_));
  sd.insert("eps", f64(eps_));
  sd.insert("mode_max", i64(max_mode_ ? 1 : 0));
  sd.insert("threshold_rel", i64(rel_ ? 1 : 0));
  put_list(sd, "min_lrs", min_lrs_);
  put_list(sd, "_last_lr", last_lr_);
  return sd;
}

void ReduceLROnPlateau::load_state_dict(const SchedulerStateDict& sd) {
  last_epoch_ = get_i64(sd, "last_epoch");
  best_ = get_f64(sd, "best");
  num_bad_epochs_ = get_i64(sd, "num_bad_epochs");
  cooldown_counter_ = get_i64(sd, "cooldown_counter");
  factor_ = get_f64(sd, "factor");
  patience_ = get_i64(sd, "patience");
  threshold_ = get_f64(sd, "threshold");
  cooldown_ = get_i64(sd, "cooldown");
  eps_ = get_f64(sd, "eps");
  max_mode_ = get_i64(sd, "mode_max") != 0;
  rel_ = get_i64(sd, "threshold_rel") != 0;
  get_list(sd, "min_lrs", min_lrs_);
  get_list(sd, "_last_lr", last_lr_);
}

}  // namespace ember::optim::lr_scheduler
