// Optimizer base: groups, state, zero_grad, state dicts and the helpers the optimizers share.
#include "ember/optim/optimizer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <unordered_set>

#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/cuda.h"
#include "ember/ops.h"
#include "optim/fused.h"

namespace ember::optim {

bool OptimizerOptions::has_option(const std::string& name) const {
  const std::vector<std::string> names = option_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_),
      has_initial_lr_(other.has_initial_lr_) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
    initial_lr_ = other.initial_lr_;
    has_initial_lr_ = other.has_initial_lr_;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  if (!options_) throw ValueError("[OptimizerParamGroup] the group has no options yet");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  if (!options_) throw ValueError("[OptimizerParamGroup] the group has no options yet");
  return *options_;
}

double OptimizerParamGroup::initial_lr() const {
  if (!has_initial_lr_) {
    throw ValueError("[OptimizerParamGroup] param 'initial_lr' is not specified in the group");
  }
  return initial_lr_;
}

Optimizer::Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults)
    : name_(std::move(name)), defaults_(std::move(defaults)) {}

void Optimizer::init(const std::vector<OptimizerParamGroup>& groups) {
  check_options(*defaults_);
  if (groups.empty()) fail("optimizer got an empty parameter list");
  for (const OptimizerParamGroup& g : groups) add_param_group(g);
}

std::vector<OptimizerParamGroup> Optimizer::single_group(std::vector<Tensor> params) {
  std::vector<OptimizerParamGroup> groups;
  if (!params.empty()) groups.emplace_back(std::move(params));
  return groups;
}

void Optimizer::fail(const std::string& what) const { throw ValueError("[" + name_ + "] " + what); }

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  OptimizerParamGroup g(group);
  if (!g.has_options()) g.set_options(defaults_->clone());
  check_options(g.options());
  std::unordered_set<const TensorImpl*> seen;
  for (const Tensor& p : g.params()) {
    if (!p.defined())
      fail("optimizer can only optimize Tensors, but one of the params is undefined");
    if (!p.is_leaf()) fail("can't optimize a non-leaf Tensor");
    if (!seen.insert(p.impl_ptr().get()).second) {
      fail("optimizer contains a parameter group with duplicate parameters");
    }
  }
  for (const OptimizerParamGroup& other : groups_) {
    for (const Tensor& p : other.params()) {
      if (seen.count(p.impl_ptr().get()))
        fail("some parameters appear in more than one parameter group");
    }
  }
  groups_.push_back(std::move(g));
}

Tensor Optimizer::step(const LossClosure& closure) {
  Tensor loss;
  if (closure) {
    EnableGradGuard grad;
    loss = closure();
  }
  NoGradGuard no_grad;
  for (OptimizerParamGroup& g : groups_) step_group(g);
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  for (OptimizerParamGroup& g : groups_) {
    for (const Tensor& p : g.params()) {
      Tensor& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        grad = Tensor();
      } else {
        if (grad.grad_fn()) {
          grad = grad.detach();
        } else {
          grad.requires_grad_(false);
        }
        NoGradGuard no_grad;
        grad.zero_();
      }
    }
  }
}

ParamState& Optimizer::state(const Tensor& param) { return state_[param.impl_ptr().get()]; }

bool Optimizer::has_state(const Tensor& param) const {
  return state_.count(param.impl_ptr().get()) != 0;
}

std::vector<Tensor> Optimizer::params_with_grad(const OptimizerParamGroup& group) const {
  std::vector<Tensor> out;
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (g.sizes() != p.sizes()) {
      fail("the gradient of a parameter has shape " + shape_str(g.sizes()) +
           " but the parameter has shape " + shape_str(p.sizes()));
    }
    if (g.device() != p.device()) {
      fail("the gradient of a parameter is on " + g.device().str() + " but the parameter is on " +
           p.device().str());
    }
    if (!p.is_floating_point()) fail("can only optimize floating-point parameters");
    out.push_back(p);
  }
  return out;
}

double Optimizer::increment_step(ParamState& st) {
  // The count is a host number: a captured step would replay the first step's count forever.
  if (cuda::is_current_stream_capturing()) {
    throw Error("[" + name() +
                ".step] cannot be captured in a CUDA graph yet: its step count lives on the host, "
                "so every replay would repeat the captured step's bias correction; capture SGD, "
                "or run this optimizer's step() outside the graph after replay()");
  }
  Tensor* s = st.find("step");
  if (!s) s = &st.insert("step", detail::step_tensor(0.0));
  float* v = s->data_ptr<float>();
  *v += 1.0f;
  return static_cast<double>(*v);
}

OptimizerStateDict Optimizer::state_dict() const {
  OptimizerStateDict out;
  int64_t index = 0;
  for (const OptimizerParamGroup& g : groups_) {
    for (const Tensor& p : g.params()) {
      auto it = state_.find(p.impl_ptr().get());
      if (it != state_.end()) {
        for (const auto& [name, t] : it->second) {
          out.insert("state." + std::to_string(index) + "." + name, t);
        }
      }
      ++index;
    }
  }
  index = 0;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    const OptimizerParamGroup& g = groups_[gi];
    const std::string prefix = "param_groups." + std::to_string(gi) + ".";
    for (const std::string& name : g.options().option_names()) {
      const std::vector<double> v = g.options().get_option(name);
      Tensor t = v.size() == 1 ? scalar_tensor(v[0], kFloat64)
                               : tensor(v, {static_cast<int64_t>(v.size())}, kFloat64);
      out.insert(prefix + name, t);
    }
    if (g.has_initial_lr())
      out.insert(prefix + "initial_lr", scalar_tensor(g.initial_lr(), kFloat64));
    std::vector<int64_t> ids(g.params().size());
    for (int64_t& id : ids) id = index++;
    out.insert(prefix + "params", tensor(ids, {static_cast<int64_t>(ids.size())}, kInt64));
  }
  return out;
}

void Optimizer::load_state_dict(const OptimizerStateDict& sd) {
  const std::string where = "[Optimizer.load_state_dict] ";
  // The index between `begin` and the next dot of a key, or a ValueError naming the key.
  const auto index_of = [&](const std::string& key, size_t begin, size_t end) {
    int64_t v = -1;
    const char* first = key.data() + begin;
    const char* last = key.data() + end;
    auto [ptr, ec] = std::from_chars(first, last, v);
    if (first == last || ec != std::errc() || ptr != last || v < 0) {
      throw ValueError(where + "malformed key '" + key + "'");
    }
    return v;
  };
  std::vector<std::string> known = {"params", "initial_lr"};
  if (!groups_.empty()) {
    for (const std::string& n : groups_.front().options().option_names()) known.push_back(n);
  }
  std::map<int64_t, Tensor> saved_params;  // group -> its saved parameter indices
  for (const auto& [key, t] : sd) {
    if (key.rfind("param_groups.", 0) != 0) continue;
    const size_t dot = key.find('.', 13);
    if (dot == std::string::npos) throw ValueError(where + "malformed key '" + key + "'");
    const std::string name = key.substr(dot + 1);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      // SGD's momentum or AdamW's betas: the state of another optimizer.
      throw ValueError(where + "'" + key + "' is not an option of this optimizer: the state " +
                       "dict was saved by another optimizer");
    }
    if (name == "params") saved_params[index_of(key, 13, dot)] = t;
  }
  if (saved_params.size() != groups_.size()) {
    throw ValueError(where + "loaded state dict has a different number of parameter groups");
  }
  // Saved parameter index -> parameter, group by group in order.
  std::unordered_map<int64_t, Tensor> id_map;
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    auto it = saved_params.find(static_cast<int64_t>(gi));
    if (it == saved_params.end()) {
      throw ValueError(where + "loaded state dict lacks param_groups." + std::to_string(gi));
    }
    const std::vector<int64_t> ids = it->second.to_vector<int64_t>();
    if (ids.size() != groups_[gi].params().size()) {
      throw ValueError(where +
                       "loaded state dict contains a parameter group that doesn't match the size "
                       "of optimizer's group");
    }
    for (size_t j = 0; j < ids.size(); ++j) id_map[ids[j]] = groups_[gi].params()[j];
  }
  // Check every state entry before changing anything.
  std::vector<std::tuple<Tensor, std::string, Tensor>> entries;
  for (const auto& [key, t] : sd) {
    if (key.rfind("state.", 0) != 0) continue;
    const size_t dot = key.find('.', 6);
    if (dot == std::string::npos) throw ValueError(where + "malformed key '" + key + "'");
    const int64_t id = index_of(key, 6, dot);
    const std::string name = key.substr(dot + 1);
    auto it = id_map.find(id);
    if (it == id_map.end()) {
      throw ValueError(where + "state for parameter " + std::to_string(id) +
                       ", which is in no parameter group");
    }
    const Tensor& p = it->second;
    if (name != "step" && t.dim() > 0 && t.sizes() != p.sizes()) {
      throw ValueError(where + "state '" + key + "' has shape " + shape_str(t.sizes()) +
                       " but its parameter has shape " + shape_str(p.sizes()));
    }
    entries.emplace_back(p, name, t);
  }
  for (size_t gi = 0; gi < groups_.size(); ++gi) {
    OptimizerParamGroup& g = groups_[gi];
    const std::string prefix = "param_groups." + std::to_string(gi) + ".";
    for (const std::string& name : g.options().option_names()) {
      if (const Tensor* t = sd.find(prefix + name))
        g.options().set_option(name, t->to_vector<double>());
    }
    if (const Tensor* t = sd.find(prefix + "initial_lr")) g.set_initial_lr(t->item<double>());
    check_options(g.options());
  }
  state_.clear();
  NoGradGuard no_grad;
  for (auto& [p, name, t] : entries) {
    Tensor v;
    if (name == "step") {
      v = t.to(kCPU, kFloat32, false, true);
    } else if (t.is_floating_point()) {
      v = t.to(p.device(), p.dtype(), false, true).contiguous();
    } else {
      v = t.to(p.device(), false, true).contiguous();
    }
    state(p).insert_or_assign(name, v);
  }
}

namespace detail {

Tensor step_tensor(double value) { return scalar_tensor(value, kFloat32); }

Tensor state_like(const Tensor& param, double value) {
  return full(param.sizes(), value, param.options());
}

void unknown_option(const std::string& optimizer, const std::string& name) {
  throw ValueError("[" + optimizer + "] unknown option '" + name + "'");
}

double single(const std::string& name, const std::vector<double>& value) {
  if (value.size() != 1) {
    throw ValueError("[Optimizer] option '" + name + "' takes one value, got " +
                     std::to_string(value.size()));
  }
  return value[0];
}

std::string format_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Python's repr: shortest form that round-trips.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (std::isfinite(v) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

void check_nonnegative(const std::string& optimizer, const char* what, double value) {
  if (!(value >= 0.0)) {
    throw ValueError("[" + optimizer + "] Invalid " + what + ": " + format_double(value));
  }
}

}  // namespace detail

}  // namespace ember::optim
