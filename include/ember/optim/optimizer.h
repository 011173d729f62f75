// Optimizer base (torch.optim.Optimizer): parameter groups with their own options, per-parameter
// state, zero_grad, and flat state dicts that can be written to safetensors as they are.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/nn/options.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::optim {

// Options of one optimizer kind (SGDOptions, AdamOptions, ...). Besides the typed accessors each
// kind exposes its options by PyTorch's names ("lr", "momentum", "betas", ...; bools as 0 or 1),
// which state dicts and schedulers use.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // Option names in PyTorch's order.
  virtual std::vector<std::string> option_names() const = 0;
  // The option's value(s) (two for "betas"); raises for an unknown name.
  virtual std::vector<double> get_option(const std::string& name) const = 0;
  virtual void set_option(const std::string& name, const std::vector<double>& value) = 0;
  bool has_option(const std::string& name) const;
};

// CRTP helper: clone() for an options class.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

// Parameters that share options. A group built without options takes the optimizer's defaults.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit, as libtorch's
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  template <class O, class = std::enable_if_t<std::is_base_of_v<OptimizerOptions, O>>>
  OptimizerParamGroup(std::vector<Tensor> params, const O& options)
      : OptimizerParamGroup(std::move(params), options.clone()) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }

  // The group's learning rate (what schedulers read and set).
  double lr() const { return options().get_lr(); }
  void set_lr(double lr) { options().set_lr(lr); }
  // The lr a scheduler started from (PyTorch's group["initial_lr"]); set by the first scheduler.
  bool has_initial_lr() const { return has_initial_lr_; }
  double initial_lr() const;
  void set_initial_lr(double lr) {
    initial_lr_ = lr;
    has_initial_lr_ = true;
  }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  double initial_lr_ = 0.0;
  bool has_initial_lr_ = false;
};

// Per-parameter state by PyTorch's names ("step", "exp_avg", "momentum_buffer", ...). "step" is a
// 0-dim float32 CPU tensor, as in PyTorch.
using ParamState = OrderedDict<std::string, Tensor>;
// Flat state dicts: "state.<i>.<name>", "param_groups.<g>.<option>", "param_groups.<g>.params".
using OptimizerStateDict = OrderedDict<std::string, Tensor>;
using LossClosure = std::function<Tensor()>;

class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer() = default;

  // One update of every parameter with a gradient (under no-grad). With a closure: runs it first
  // with grad mode on and returns its loss.
  Tensor step(const LossClosure& closure = nullptr);
  // Resets every parameter's gradient: undefined (set_to_none) or zero.
  void zero_grad(bool set_to_none = true);
  // Adds a group; its missing options come from the defaults.
  void add_param_group(const OptimizerParamGroup& group);

  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  OptimizerOptions& defaults() { return *defaults_; }
  // "SGD", "Adam", ...: used in error messages.
  const std::string& name() const { return name_; }

  // The state of a parameter (created empty on first access).
  ParamState& state(const Tensor& param);
  // Whether a parameter has state yet.
  bool has_state(const Tensor& param) const;

  // Flat form: "state.<i>.<name>" tensors (i counts parameters across groups in order),
  // "param_groups.<g>.<option>" 0-dim float64 ("betas": two values), "param_groups.<g>.params"
  // int64 indices, and "param_groups.<g>.initial_lr" when a scheduler set it.
  OptimizerStateDict state_dict() const;
  // Loads a state dict of an optimizer with the same group sizes; state tensors move to each
  // parameter's device (floating ones to its dtype).
  void load_state_dict(const OptimizerStateDict& state_dict);

 protected:
  Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults);
  // Checks the defaults and adds the groups; derived constructors call it (check_options is
  // virtual).
  void init(const std::vector<OptimizerParamGroup>& groups);
  // A plain parameter list as one group (no group when the list is empty).
  static std::vector<OptimizerParamGroup> single_group(std::vector<Tensor> params);
  // Validates a group's options ("[SGD] Invalid learning rate: -1").
  virtual void check_options(const OptimizerOptions& options) const = 0;
  // Updates one group's parameters that have gradients (called under no-grad).
  virtual void step_group(OptimizerParamGroup& group) = 0;
  // Parameters of the group with gradients, checked against their parameters.
  std::vector<Tensor> params_with_grad(const OptimizerParamGroup& group) const;
  // Increments a parameter's "step" (creating it at 0) and returns the new value.
  double increment_step(ParamState& st);
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string name_;
  std::vector<OptimizerParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

}  // namespace ember::optim
