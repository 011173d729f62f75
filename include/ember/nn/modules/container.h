// Containers: Sequential (chains forward), ModuleList and ModuleDict (hold submodules). Children
// are registered, so parameters, state_dict keys ("0.weight") and printing follow PyTorch.
//   nn::Sequential net(nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 10));
//   nn::ModuleDict heads({{"cls", nn::Linear(16, 10)}, {"box", nn::Linear(16, 4)}});
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

namespace detail {

template <class T, class = void>
struct impl_of {
  using type = T;
};
template <class T>
struct impl_of<T, std::void_t<typename T::ContainedType>> {
  using type = typename T::ContainedType;
};
// LinearImpl for LinearImpl or Linear.
template <class T>
using impl_of_t = typename impl_of<std::decay_t<T>>::type;

template <class M>
std::shared_ptr<M> as_shared(const std::shared_ptr<M>& p) {
  return p;
}
template <class Impl>
std::shared_ptr<Impl> as_shared(const ModuleHolder<Impl>& h) {
  return h.ptr();
}

// Wraps container index i (negative counts from the end) or raises IndexError.
size_t checked_index(const char* container, int64_t i, size_t size);

}  // namespace detail

// Any module, given as a holder (nn::Linear(...)) or a shared_ptr: what ModuleList and
// ModuleDict hold.
class AnyModulePtr {
 public:
  template <class Impl>
  AnyModulePtr(const ModuleHolder<Impl>& holder) : ptr_(holder.ptr()) {}  // NOLINT: implicit
  template <class M, class = std::enable_if_t<std::is_base_of_v<Module, M>>>
  AnyModulePtr(std::shared_ptr<M> module) : ptr_(std::move(module)) {}  // NOLINT: implicit
  const std::shared_ptr<Module>& ptr() const { return ptr_; }

 private:
  std::shared_ptr<Module> ptr_;
};

// Common to the indexed containers: children in order, typed access.
class IndexedContainer : public Module {
 public:
  size_t size() const { return modules_.size(); }
  bool is_empty() const { return modules_.empty(); }
  // The i-th module (negative i counts from the end).
  std::shared_ptr<Module> operator[](int64_t i) const {
    return modules_[detail::checked_index(name().c_str(), i, modules_.size())];
  }
  // The i-th module as T (an Impl type or its holder type); raises TypeError if it is not one.
  template <class T>
  std::shared_ptr<detail::impl_of_t<T>> ptr(int64_t i) const {
    auto p = std::dynamic_pointer_cast<detail::impl_of_t<T>>((*this)[i]);
    if (!p) {
      throw TypeError("[" + name() + "] module " + std::to_string(i) + " (" + (*this)[i]->name() +
                      ") is not of the requested type");
    }
    return p;
  }
  template <class T>
  detail::impl_of_t<T>& at(int64_t i) const {
    return *ptr<T>(i);
  }
  auto begin() const { return modules_.begin(); }
  auto end() const { return modules_.end(); }

 protected:
  using Module::Module;
  void append(const std::string& key, std::shared_ptr<Module> module) {
    add_child(key, module);
    modules_.push_back(std::move(module));
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

// What Sequential chains: a module with Tensor forward(const Tensor&).
template <class M>
concept SequentialElement = requires(M& m, const Tensor& x) {
  { m.forward(x) } -> std::convertible_to<Tensor>;
};

// Modules run in order, each one's output the next one's input. A pushed module must have
// `Tensor forward(const Tensor&)` (checked at compile time).
class SequentialImpl : public IndexedContainer {
 public:
  SequentialImpl() : IndexedContainer("Sequential") {}
  template <class First, class... Rest,
            class = std::enable_if_t<!std::is_same_v<std::decay_t<First>, SequentialImpl>>>
  explicit SequentialImpl(First&& first, Rest&&... rest) : SequentialImpl() {
    push_back(std::forward<First>(first));
    (push_back(std::forward<Rest>(rest)), ...);
  }

  // Appends under the key "<size>", or under name.
  template <class M>
  void push_back(const M& module) {
    push_back(std::to_string(size()), module);
  }
  template <class M>
  void push_back(const std::string& name, const M& module) {
    if constexpr (!ModuleHandle<M>) {
      static_assert(detail::always_false_v<M>,
                    "Sequential takes modules as holders (nn::Linear(...)) or std::shared_ptr "
                    "(std::make_shared<NetImpl>(...)), not module objects by value");
    } else {
      auto p = detail::as_shared(module);
      using Impl = typename decltype(p)::element_type;
      static_assert(std::is_base_of_v<Module, Impl>, "Sequential holds nn modules");
      static_assert(SequentialElement<Impl>,
                    "Sequential needs modules with Tensor forward(const Tensor&): one whose "
                    "forward takes other arguments (two tensors, ...) cannot be chained; keep it "
                    "in a ModuleList or as a member and call its forward yourself");
      if constexpr (SequentialElement<Impl>) {
        if (!p) throw ValueError("[Sequential] cannot push an empty module holder");
        forwards_.emplace_back([p](const Tensor& x) -> Tensor { return p->forward(x); });
        append(name, p);
      }
    }
  }
  // Every module's forward in turn; the input itself when empty.
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& out) const override;

 private:
  std::vector<std::function<Tensor(const Tensor&)>> forwards_;
};
EMBER_MODULE(Sequential);

// A list of submodules (no forward): layers built in a loop.
class ModuleListImpl : public IndexedContainer {
 public:
  ModuleListImpl() : IndexedContainer("ModuleList") {}
  ModuleListImpl(std::vector<AnyModulePtr> modules) : ModuleListImpl() {  // NOLINT
    extend(modules);
  }
  template <
      class First, class... Rest,
      class = std::enable_if_t<!std::is_same_v<std::decay_t<First>, ModuleListImpl> &&
                               !std::is_same_v<std::decay_t<First>, std::vector<AnyModulePtr>>>>
  explicit ModuleListImpl(First&& first, Rest&&... rest) : ModuleListImpl() {
    push_back(AnyModulePtr(std::forward<First>(first)));
    (push_back(AnyModulePtr(std::forward<Rest>(rest))), ...);
  }
  void push_back(const AnyModulePtr& module);
  void extend(const std::vector<AnyModulePtr>& modules);
  void extend(const ModuleListImpl& other);
  void pretty_print(std::ostream& out) const override;
};
EMBER_MODULE(ModuleList);

// Submodules by name, in insertion order.
class ModuleDictImpl : public Module {
 public:
  using Items = std::vector<std::pair<std::string, AnyModulePtr>>;
  ModuleDictImpl() : Module("ModuleDict") {}
  ModuleDictImpl(const Items& items) : ModuleDictImpl() { update(items); }  // NOLINT
  ModuleDictImpl(std::initializer_list<std::pair<std::string, AnyModulePtr>> items)
      : ModuleDictImpl(Items(items)) {}

  size_t size() const { return named_children().size(); }
  bool is_empty() const { return size() == 0; }
  bool contains(const std::string& key) const { return named_children().contains(key); }
  // The module under key; raises KeyError naming it when absent.
  std::shared_ptr<Module> operator[](const std::string& key) const;
  template <class T>
  std::shared_ptr<detail::impl_of_t<T>> ptr(const std::string& key) const {
    auto p = std::dynamic_pointer_cast<detail::impl_of_t<T>>((*this)[key]);
    if (!p) throw TypeError("[ModuleDict] module '" + key + "' is not of the requested type");
    return p;
  }
  std::vector<std::string> keys() const;
  std::vector<std::shared_ptr<Module>> values() const { return children(); }
  OrderedDict<std::string, std::shared_ptr<Module>> items() const { return named_children(); }
  // Adds each pair in order; an existing key has its module replaced (keeping its position).
  void update(const Items& items);
  void insert(const std::string& key, const AnyModulePtr& module) { update({{key, module}}); }
  void pretty_print(std::ostream& out) const override;
};

class ModuleDict : public ModuleHolder<ModuleDictImpl> {
 public:
  using ModuleHolder<ModuleDictImpl>::ModuleHolder;
  using Impl = ModuleDictImpl;
  // nn::ModuleDict heads({{"cls", nn::Linear(16, 10)}, {"box", nn::Linear(16, 4)}});
  ModuleDict(std::initializer_list<std::pair<std::string, AnyModulePtr>> items)
      : ModuleHolder(std::make_shared<ModuleDictImpl>(items)) {}
};

}  // namespace ember::nn
