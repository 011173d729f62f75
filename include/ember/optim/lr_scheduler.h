// Learning-rate schedulers (torch.optim.lr_scheduler). A scheduler acts on the lr of every group
// of its optimizer; constructing one records each group's initial_lr and applies epoch 0, and
// step() advances one epoch. Chainable schedulers compute from the group's current lr, so
// several may act on one optimizer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim::lr_scheduler {

using SchedulerStateDict = OrderedDict<std::string, Tensor>;

class LRScheduler {
 public:
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  virtual ~LRScheduler() = default;

  // Advances one epoch and sets every group's lr.
  virtual void step();
  // Jumps to epoch with the closed form where the scheduler has one (as PyTorch's step(epoch)).
  void step(int64_t epoch);
  // The lrs the last step set, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  Optimizer& optimizer() { return *optimizer_; }

  // Flat form: "last_epoch", "_step_count" (0-dim int64), "base_lrs.<g>", "_last_lr.<g>"
  // (0-dim float64) and the scheduler's own settings.
  virtual SchedulerStateDict state_dict() const;
  virtual void load_state_dict(const SchedulerStateDict& state_dict);

 protected:
  // last_epoch == -1 sets each group's initial_lr to its lr; otherwise initial_lr must be set.
  LRScheduler(Optimizer& optimizer, int64_t last_epoch = -1);
  // The chainable form: lrs for last_epoch_ from the groups' current lrs.
  virtual std::vector<double> get_lr() = 0;
  // The closed form for last_epoch_; defaults to get_lr().
  virtual std::vector<double> closed_form_lr() { return get_lr(); }
  // Derived constructors end with this: applies epoch last_epoch + 1 (0 for a fresh scheduler).
  void initial_step();
  std::vector<double> group_lrs() const;
  void apply(const std::vector<double>& lrs);

  Optimizer* optimizer_;
  int64_t last_epoch_;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;

  friend class SequentialLR;
};

// lr = base_lr * gamma^(epoch / step_size).
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1, int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t step_size_;
  double gamma_;
};

// lr = base_lr * gamma^(number of milestones reached).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1,
              int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  std::vector<int64_t> milestones_;  // sorted, repeats count twice
  double gamma_;
};

// lr = base_lr * gamma^epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma, int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 (chainable recurrence).
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0,
                    int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  int64_t T_max_;
  double eta_min_;
};

// lr = base_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters) /
// total_iters).
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0,
           int64_t total_iters = 5, int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;
  std::vector<double> closed_form_lr() override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

// The 1cycle policy: lr rises from max_lr / div_factor to max_lr over pct_start of total_steps,
// then falls to initial_lr / final_div_factor (three_phase: back to initial_lr first). With
// cycle_momentum, SGD/RMSprop momentum or Adam's beta1 moves inversely between base_momentum
// and max_momentum.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start = 0.3,
             const std::string& anneal_strategy = "cos", double div_factor = 25.0,
             double final_div_factor = 1e4, bool three_phase = false, bool cycle_momentum = true,
             double base_momentum = 0.85, double max_momentum = 0.95, int64_t last_epoch = -1);
  // One max_lr per group.
  OneCycleLR(Optimizer& optimizer, const std::vector<double>& max_lrs, int64_t total_steps,
             double pct_start = 0.3, const std::string& anneal_strategy = "cos",
             double div_factor = 25.0, double final_div_factor = 1e4, bool three_phase = false,
             bool cycle_momentum = true, double base_momentum = 0.85, double max_momentum = 0.95,
             int64_t last_epoch = -1);
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

 protected:
  std::vector<double> get_lr() override;

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr, start_momentum, end_momentum;  // 0 initial, 1 max, 2 min / 0 max, 1 base
  };
  double anneal(double start, double end, double pct) const;

  int64_t total_steps_;
  bool cos_;
  bool cycle_momentum_;
  bool use_beta1_ = false;
  std::vector<Phase> phases_;
  // Per group: initial, max and min lr; max and base momentum.
  std::vector<double> initial_lrs_, max_lrs_, min_lrs_, max_momenta_, base_momenta_;
};

// Runs schedulers one after another: schedulers[i] from milestones[i - 1] on.
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones, int64_t last_epoch = -1);
  // Keys of the inner schedulers are prefixed "_schedulers.<i>.".
  SchedulerStateDict state_dict() const override;
  void load_state_dict(const SchedulerStateDict& state_dict) override;

  // Advances one epoch on the scheduler whose turn it is.
  void step() override;

 protected:
  std::vector<double> get_lr() override;

 private:
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

// Lowers lr by factor when a metric stopped improving for patience epochs.
class ReduceLROnPlateau {
 public:
  ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode = "min", double factor = 0.1,
                    int64_t patience = 10, double threshold = 1e-4,
                    const std::string& threshold_mode = "rel", int64_t cooldown = 0,
                    double min_lr = 0.0, double eps = 1e-8);
  // One min_lr per group.
  ReduceLROnPlateau(Optimizer& optimizer, const std::string& mode, double factor, int64_t patience,
                    double threshold, const std::string& threshold_mode, int64_t cooldown,
                    const std::vector<double>& min_lrs, double eps = 1e-8);

  void step(double metric);
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

  // "last_epoch", "best", "num_bad_epochs", "cooldown_counter", settings, "_last_lr.<g>".
  SchedulerStateDict state_dict() const;
  void load_state_dict(const SchedulerStateDict& state_dict);

 private:
  bool is_better(double a) const;

  Optimizer* optimizer_;
  bool max_mode_;
  bool rel_;
  double factor_;
  int64_t patience_;
  double threshold_;
  int64_t cooldown_;
  std::vector<double> min_lrs_;
  double eps_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace ember::optim::lr_scheduler

// libtorch's names: its schedulers live in torch::optim itself, and its plateau scheduler is
// ReduceLROnPlateauScheduler (ember's takes the mode as "min"/"max" and the threshold mode as
// "rel"/"abs" strings, PyTorch's spelling, where libtorch takes enums).
namespace ember::optim {
using lr_scheduler::CosineAnnealingLR;
using lr_scheduler::ExponentialLR;
using lr_scheduler::LinearLR;
using lr_scheduler::LRScheduler;
using lr_scheduler::MultiStepLR;
using lr_scheduler::OneCycleLR;
using lr_scheduler::ReduceLROnPlateau;
using lr_scheduler::SequentialLR;
using lr_scheduler::StepLR;
using ReduceLROnPlateauScheduler = lr_scheduler::ReduceLROnPlateau;
}  // namespace ember::optim
