// nn::Module, the base of every layer, and the holder convention of libtorch's C++ frontend:
// nn::Linear is a shared handle to an nn::LinearImpl (EMBER_MODULE(Linear) declares it), so
// `net->parameters()` and `net(x)` read as in libtorch.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::nn {

class Module;
using NamedTensors = OrderedDict<std::string, Tensor>;
// Parameters and persistent buffers by dotted name ("0.weight", "fc1.bias").
using StateDict = OrderedDict<std::string, Tensor>;

template <class Impl>
class ModuleHolder;

namespace detail {
template <class>
inline constexpr bool always_false_v = false;
template <class T>
struct is_shared_ptr : std::false_type {};
template <class T>
struct is_shared_ptr<std::shared_ptr<T>> : std::true_type {};
}  // namespace detail

// A handle to a module: a holder (nn::Linear, or any EMBER_MODULE type) or a std::shared_ptr.
template <class T>
concept ModuleHandle = detail::is_shared_ptr<std::remove_cvref_t<T>>::value || requires {
  typename std::remove_cvref_t<T>::ContainedType;
};

class Module : public std::enable_shared_from_this<Module> {
 public:
  // name: the type name shown in printing and in error messages ("Linear").
  explicit Module(std::string name = "Module");
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // ---- registration -----------------------------------------------------------------------------
  // Registers a parameter (a leaf; requires grad unless told otherwise) and returns the handle
  // to keep as a member. An undefined tensor registers nothing (PyTorch's `bias=None`).
  Tensor& register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  // A buffer: state that is not trained (running statistics). Non-persistent buffers are moved
  // by to() but left out of state_dict().
  Tensor& register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    static_assert(std::is_base_of_v<Module, M>,
                  "register_module takes an nn module: a holder (nn::Linear(...)) or a "
                  "std::shared_ptr to a class derived from nn::Module");
    if constexpr (std::is_base_of_v<Module, M>) add_child(name, module);
    return module;
  }
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, ModuleHolder<M> holder) {
    return register_module(name, holder.ptr());
  }
  // Anything else (a Tensor, a module object by value) is a compile error that says so.
  template <class T>
  requires(!ModuleHandle<T>) void register_module(const std::string&, T&&) {
    static_assert(detail::always_false_v<T>,
                  "register_module takes a module holder (nn::Linear(...)) or a std::shared_ptr "
                  "to a module (std::make_shared<NetImpl>(...)); register a Tensor with "
                  "register_parameter or register_buffer");
  }
  // Replaces a registered submodule (same name), e.g. to swap a layer of a loaded model.
  template <class M>
  std::shared_ptr<M> replace_module(const std::string& name, std::shared_ptr<M> module) {
    replace_child(name, module);
    return module;
  }

  // ---- traversal (PyTorch's order: own entries first, then each child's, depth first) -----------
  TensorList parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  TensorList buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  // This module (unless include_self is false) and every descendant, depth first.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(const std::string& prefix = "",
                                                                  bool include_self = true);
  // Calls fn on every module, children before their parent (PyTorch's apply).
  void apply(const std::function<void(Module&)>& fn);

  // ---- modes, devices, gradients ----------------------------------------------------------------
  // Training mode (the default) or evaluation mode, for this module and every descendant.
  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  // Moves (or converts) every parameter, buffer and gradient in place: handles held elsewhere
  // (members, an optimizer's parameter list) see the new device and dtype. A dtype conversion
  // touches only floating tensors, as in PyTorch.
  void to(Device device, bool non_blocking = false);
  void to(DType dtype, bool non_blocking = false);
  void to(Device device, DType dtype, bool non_blocking = false);
  // Resets every parameter's gradient: undefined (set_to_none) or zeros.
  void zero_grad(bool set_to_none = true);

  // ---- state ------------------------------------------------------------------------------------
  // Parameters and persistent buffers by dotted name; the tensors share storage with the module.
  StateDict state_dict() const;
  // Copies values in (any device/dtype is converted). strict: every key must match both ways.
  // Shape mismatches always raise; all problems are named in one message, as in PyTorch.
  void load_state_dict(const StateDict& state, bool strict = true);

  // ---- printing ---------------------------------------------------------------------------------
  // One line for this module alone, e.g. "Linear(in_features=784, out_features=10, bias=True)";
  // containers print their children below it (operator<<).
  virtual void pretty_print(std::ostream& out) const;

 protected:
  void add_child(const std::string& name, std::shared_ptr<Module> module);
  void replace_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  void convert(const std::function<Tensor(const Tensor&)>& fn);
  void collect_named(NamedTensors& out, const std::string& prefix, bool recurse, bool params) const;
  void collect_state(StateDict& out, const std::string& prefix) const;
  void print_tree(std::ostream& out, int indent) const;
  friend std::ostream& operator<<(std::ostream& out, const Module& module);

  std::string name_;
  bool training_ = true;
  NamedTensors parameters_;
  NamedTensors buffers_;
  std::vector<std::string> non_persistent_;
  OrderedDict<std::string, std::shared_ptr<Module>> children_;
};

// PyTorch's repr: the module's line, then its children indented, "(name): Child(...)".
std::ostream& operator<<(std::ostream& out, const Module& module);

// A shared handle to a module implementation (libtorch's ModuleHolder): copies share the module.
template <class Impl>
class ModuleHolder {
 public:
  using ContainedType = Impl;

  // Default-constructs the module when Impl allows it, else holds nothing.
  ModuleHolder() {
    if constexpr (std::is_default_constructible_v<Impl>) impl_ = std::make_shared<Impl>();
  }
  ModuleHolder(std::nullptr_t) {}  // NOLINT: an empty holder, to be assigned later
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}  // NOLINT: implicit
  // Constructs the module from its arguments: nn::Linear(784, 10).
  template <class Head, class... Tail,
            class = std::enable_if_t<!std::is_base_of_v<ModuleHolder, std::decay_t<Head>> &&
                                     !std::is_same_v<std::decay_t<Head>, std::shared_ptr<Impl>> &&
                                     !std::is_same_v<std::decay_t<Head>, std::nullptr_t>>>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Impl>(std::forward<Head>(head), std::forward<Tail>(tail)...)) {}

  Impl* operator->() const { return &get(); }
  Impl& operator*() const { return get(); }
  Impl& get() const {
    static_assert(std::is_base_of_v<Module, Impl>,
                  "a module holder (EMBER_MODULE(Name), ModuleHolder<Impl>) needs NameImpl "
                  "derived from ember::nn::Module: struct NameImpl : nn::Module { ... }");
    if (!impl_) throw Error("[nn] accessing an empty module holder");
    return *impl_;
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return impl_ == nullptr; }
  explicit operator bool() const { return impl_ != nullptr; }

  // net(x) is net->forward(x).
  // seq[0], dict["name"]: the contained module's operator[].
  template <class Arg, class I = Impl>
  auto operator[](Arg&& arg) const -> decltype(std::declval<I&>()[std::forward<Arg>(arg)]) {
    return get()[std::forward<Arg>(arg)];
  }

  // (A template of I so that modules without forward, such as containers, still have holders.)
  template <class... Args, class I = Impl>
  auto operator()(Args&&... args) const
      -> decltype(std::declval<I&>().forward(std::forward<Args>(args)...)) {
    return get().forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& out, const ModuleHolder<Impl>& m) {
  return out << static_cast<const Module&>(*m);
}

}  // namespace ember::nn

// Declares the holder nn::Name for a module implementation NameImpl.
#define EMBER_MODULE(Name)                                     \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> {  \
   public:                                                     \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder; \
    using Impl = Name##Impl;                                   \
  }
