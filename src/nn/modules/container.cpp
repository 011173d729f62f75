#include "ember/nn/modules/container.h"

#include <ostream>

namespace ember::nn {

size_t detail::checked_index(const char* container, int64_t i, size_t size) {
  const int64_t n = static_cast<int64_t>(size);
  const int64_t w = i < 0 ? i + n : i;
  if (w < 0 || w >= n) {
    throw IndexError(std::string("[") + container + "] index " + std::to_string(i) +
                     " is out of range for " + std::to_string(n) + " modules");
  }
  return static_cast<size_t>(w);
}

Tensor SequentialImpl::forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& f : forwards_) y = f(y);
  return y;
}

void SequentialImpl::pretty_print(std::ostream& out) const { out << "Sequential()"; }

void ModuleListImpl::push_back(const AnyModulePtr& module) {
  if (!module.ptr()) throw ValueError("[ModuleList] cannot append an empty module holder");
  append(std::to_string(size()), module.ptr());
}

void ModuleListImpl::extend(const std::vector<AnyModulePtr>& modules) {
  for (const auto& m : modules) push_back(m);
}

void ModuleListImpl::extend(const ModuleListImpl& other) {
  // Copy first: other may be this list.
  std::vector<std::shared_ptr<Module>> items(other.begin(), other.end());
  for (auto& m : items) push_back(AnyModulePtr(m));
}

void ModuleListImpl::pretty_print(std::ostream& out) const { out << "ModuleList()"; }

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  auto children = named_children();
  if (!children.contains(key)) {
    throw IndexError("[ModuleDict] no module named '" + key + "'");
  }
  return children[key];
}

std::vector<std::string> ModuleDictImpl::keys() const {
  std::vector<std::string> k;
  for (const auto& [name, m] : named_children()) k.push_back(name);
  return k;
}

void ModuleDictImpl::update(const Items& items) {
  for (const auto& [key, module] : items) {
    if (!module.ptr()) throw ValueError("[ModuleDict] module '" + key + "' is empty");
    if (contains(key))
      replace_child(key, module.ptr());
    else
      add_child(key, module.ptr());
  }
}

void ModuleDictImpl::pretty_print(std::ostream& out) const { out << "ModuleDict()"; }

}  // namespace ember::nn
