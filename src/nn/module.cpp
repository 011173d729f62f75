#include "ember/nn/module.h"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "ember/autograd.h"
#include "ember/ops.h"

namespace ember::nn {

Module::Module(std::string name) : name_(std::move(name)) {}

namespace {

void check_name(const Module& m, const std::string& name, const char* what) {
  if (name.empty() || name.find('.') != std::string::npos) {
    throw ValueError("[" + m.name() + "] " + what + " name '" + name +
                     "' must be non-empty and contain no '.'");
  }
}

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << ']';
  return o.str();
}

}  // namespace

Tensor& Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name(*this, name, "parameter");
  if (buffers_.contains(name) || children_.contains(name)) {
    throw ValueError("[" + name_ + "] attribute '" + name + "' already exists");
  }
  if (tensor.defined()) {
    // A parameter is a leaf of its own, whatever graph produced the initial values.
    if (!tensor.is_leaf() || tensor.is_view()) tensor = tensor.detach();
    if (requires_grad && !tensor.is_floating_point()) {
      throw TypeError("[" + name_ + "] parameter '" + name + "' must be floating point, got " +
                      std::string(dtype_name(tensor.dtype())));
    }
    tensor.requires_grad_(requires_grad);
  }
  return parameters_.insert_or_assign(name, std::move(tensor));
}

Tensor& Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_name(*this, name, "buffer");
  if (parameters_.contains(name) || children_.contains(name)) {
    throw ValueError("[" + name_ + "] attribute '" + name + "' already exists");
  }
  if (tensor.defined() && tensor.requires_grad()) tensor = tensor.detach();
  auto np = std::find(non_persistent_.begin(), non_persistent_.end(), name);
  if (!persistent && np == non_persistent_.end()) non_persistent_.push_back(name);
  if (persistent && np != non_persistent_.end()) non_persistent_.erase(np);
  return buffers_.insert_or_assign(name, std::move(tensor));
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> module) {
  check_name(*this, name, "submodule");
  if (!module) throw ValueError("[" + name_ + "] submodule '" + name + "' is empty");
  if (parameters_.contains(name) || buffers_.contains(name)) {
    throw ValueError("[" + name_ + "] attribute '" + name + "' already exists");
  }
  children_.insert(name, std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!children_.contains(name)) {
    throw IndexError("[" + name_ + "] has no submodule '" + name + "' to replace");
  }
  if (!module) throw ValueError("[" + name_ + "] submodule '" + name + "' is empty");
  children_.insert_or_assign(name, std::move(module));
}

void Module::collect_named(NamedTensors& out, const std::string& prefix, bool recurse,
                           bool params) const {
  for (const auto& [name, t] : params ? parameters_ : buffers_) {
    if (t.defined()) out.insert(prefix + name, t);
  }
  if (!recurse) return;
  for (const auto& [name, child] : children_) {
    child->collect_named(out, prefix + name + ".", true, params);
  }
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect_named(out, "", recurse, true);
  return out;
}

TensorList Module::parameters(bool recurse) const { return named_parameters(recurse).values(); }

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect_named(out, "", recurse, false);
  return out;
}

TensorList Module::buffers(bool recurse) const { return named_buffers(recurse).values(); }

std::vector<std::shared_ptr<Module>> Module::children() const { return children_.values(); }

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  return children_;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  return named_modules("", include_self).values();
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(const std::string& prefix,
                                                                        bool include_self) {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  // Explicit stack of (name, module), visiting children in registration order.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> stack;
  if (include_self) {
    out.insert(prefix, shared_from_this());
  }
  auto push_children = [&](const std::string& base, const Module& m) {
    const auto& items = m.children_.items();
    for (auto it = items.rbegin(); it != items.rend(); ++it) {
      stack.emplace_back(base.empty() ? it->first : base + "." + it->first, it->second);
    }
  };
  push_children(prefix, *this);
  while (!stack.empty()) {
    auto [name, m] = std::move(stack.back());
    stack.pop_back();
    // The same module registered twice is listed once, as in PyTorch.
    bool seen = false;
    for (const auto& [n, v] : out) seen = seen || v == m;
    if (seen) continue;
    out.insert(name, m);
    push_children(name, *m);
  }
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [name, child] : children_) child->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [name, child] : children_) child->train(on);
}

void Module::convert(const std::function<Tensor(const Tensor&)>& fn) {
  NoGradGuard no_grad;
  for (auto& [name, p] : parameters_) {
    if (!p.defined()) continue;
    p.set_data(fn(p));
    Tensor& g = p.mutable_grad();
    if (g.defined()) g.set_data(fn(g));
  }
  for (auto& [name, b] : buffers_) {
    if (b.defined()) b.set_data(fn(b));
  }
  for (const auto& [name, child] : children_) child->convert(fn);
}

void Module::to(Device device, bool non_blocking) {
  convert([&](const Tensor& t) { return t.to(device, non_blocking); });
}

void Module::to(DType dtype, bool non_blocking) {
  if (!is_floating_point(dtype)) {
    throw TypeError(std::string("[") + name_ +
                    ".to] nn.Module.to only accepts floating point dtypes, but got desired dtype=" +
                    std::string(dtype_name(dtype)));
  }
  convert([&](const Tensor& t) { return t.is_floating_point() ? t.to(dtype, non_blocking) : t; });
}

void Module::to(Device device, DType dtype, bool non_blocking) {
  if (!is_floating_point(dtype)) {
    throw TypeError(std::string("[") + name_ +
                    ".to] nn.Module.to only accepts floating point dtypes, but got desired dtype=" +
                    std::string(dtype_name(dtype)));
  }
  convert([&](const Tensor& t) {
    return t.is_floating_point() ? t.to(device, dtype, non_blocking) : t.to(device, non_blocking);
  });
}

void Module::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      if (g.grad_fn()) g = g.detach();
      g.zero_();
    }
  }
}

void Module::collect_state(StateDict& out, const std::string& prefix) const {
  for (const auto& [name, t] : parameters_) {
    if (t.defined()) out.insert(prefix + name, t);
  }
  for (const auto& [name, t] : buffers_) {
    if (t.defined() &&
        std::find(non_persistent_.begin(), non_persistent_.end(), name) == non_persistent_.end()) {
      out.insert(prefix + name, t);
    }
  }
  for (const auto& [name, child] : children_) child->collect_state(out, prefix + name + ".");
}

StateDict Module::state_dict() const {
  StateDict out;
  collect_state(out, "");
  return out;
}

void Module::load_state_dict(const StateDict& state, bool strict) {
  StateDict own = state_dict();
  std::vector<std::string> missing, unexpected, errors;
  for (const auto& [name, t] : own) {
    const Tensor* src = state.find(name);
    if (!src) {
      missing.push_back(name);
      continue;
    }
    if (!src->defined()) {
      errors.push_back("While copying the parameter named \"" + name +
                       "\", the value in the checkpoint is undefined.");
      continue;
    }
    if (src->sizes() != t.sizes()) {
      errors.push_back(
          "size mismatch for " + name + ": copying a param with shape " + shape_str(src->sizes()) +
          " from checkpoint, the shape in current model is " + shape_str(t.sizes()) + ".");
    }
  }
  for (const auto& [name, t] : state) {
    if (!own.contains(name)) unexpected.push_back(name);
  }
  auto quoted = [](const std::vector<std::string>& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); ++i) s += (i ? ", \"" : "\"") + keys[i] + "\"";
    return s;
  };
  std::vector<std::string> msgs;
  if (strict && !unexpected.empty()) {
    msgs.push_back("Unexpected key(s) in state_dict: " + quoted(unexpected) + ". ");
  }
  if (strict && !missing.empty()) {
    msgs.push_back("Missing key(s) in state_dict: " + quoted(missing) + ". ");
  }
  msgs.insert(msgs.end(), errors.begin(), errors.end());
  if (!msgs.empty()) {
    std::string m = "[load_state_dict] Error(s) in loading state_dict for " + name_ + ":";
    for (const std::string& e : msgs) m += "\n\t" + e;
    throw Error(m);
  }
  NoGradGuard no_grad;
  for (auto& [name, t] : own) {
    if (const Tensor* src = state.find(name)) {
      Tensor dst = t;
      dst.copy_(*src);
    }
  }
}

void Module::pretty_print(std::ostream& out) const { out << name_ << "()"; }

void Module::print_tree(std::ostream& out, int indent) const {
  if (children_.empty()) {
    pretty_print(out);
    return;
  }
  // "Name(args)" becomes "Name(", the arguments on a line of their own, then the children.
  std::ostringstream head;
  pretty_print(head);
  const std::string h = head.str();
  const size_t open = h.find('(');
  const std::string pad(static_cast<size_t>(indent + 2), ' ');
  out << h.substr(0, open) << "(\n";
  if (open != std::string::npos && h.size() > open + 2) {
    out << pad << h.substr(open + 1, h.size() - open - 2) << "\n";
  }
  for (const auto& [name, child] : children_) {
    out << pad << "(" << name << "): ";
    child->print_tree(out, indent + 2);
    out << "\n";
  }
  out << std::string(static_cast<size_t>(indent), ' ') << ")";
}

std::ostream& operator<<(std::ostream& out, const Module& module) {
  module.print_tree(out, 0);
  return out;
}

}  // namespace ember::nn
