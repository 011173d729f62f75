// An insertion-ordered map from names to values (libtorch's OrderedDict): what named_parameters,
// state_dict and friends return. Lookups by key are hashed; iteration follows insertion order.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/error.h"

namespace ember {

// One entry: a std::pair (item.first, item.second, `auto& [key, value]`) that also reads as
// libtorch's OrderedDict::Item (item.key(), item.value()).
template <class Key, class Value>
struct OrderedDictItem : std::pair<Key, Value> {
  using std::pair<Key, Value>::pair;
  const Key& key() const noexcept { return this->first; }
  Value& value() noexcept { return this->second; }
  const Value& value() const noexcept { return this->second; }
};

template <class Key, class Value>
class OrderedDict {
 public:
  using Item = OrderedDictItem<Key, Value>;
  using iterator = typename std::vector<Item>::iterator;
  using const_iterator = typename std::vector<Item>::const_iterator;

  OrderedDict() = default;
  OrderedDict(std::initializer_list<Item> items) {
    for (const Item& i : items) insert(i.first, i.second);
  }

  // Adds a new key; raises when it is present already.
  Value& insert(const Key& key, Value value) {
    if (index_.count(key))
      throw ValueError("[OrderedDict] key '" + key_str(key) + "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(key, std::move(value));
    return items_.back().second;
  }
  // Adds the key or replaces its value, keeping its position.
  Value& insert_or_assign(const Key& key, Value value) {
    auto it = index_.find(key);
    if (it == index_.end()) return insert(key, std::move(value));
    return items_[it->second].second = std::move(value);
  }
  // Removes a key (later keys move up); raises when it is absent.
  void erase(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) throw IndexError("[OrderedDict] key '" + key_str(key) + "' not found");
    const size_t pos = it->second;
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(pos));
    index_.erase(it);
    for (auto& [k, i] : index_) {
      if (i > pos) --i;
    }
  }

  bool contains(const Key& key) const { return index_.count(key) != 0; }
  // The value for key, or nullptr.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  // The value for key; raises IndexError naming the key when it is absent.
  Value& operator[](const Key& key) { return at(key); }
  const Value& operator[](const Key& key) const { return at(key); }
  Value& at(const Key& key) {
    Value* v = find(key);
    if (!v) throw IndexError("[OrderedDict] key '" + key_str(key) + "' not found");
    return *v;
  }
  const Value& at(const Key& key) const {
    const Value* v = find(key);
    if (!v) throw IndexError("[OrderedDict] key '" + key_str(key) + "' not found");
    return *v;
  }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() {
    items_.clear();
    index_.clear();
  }
  const std::vector<Item>& items() const { return items_; }
  std::vector<Key> keys() const {
    std::vector<Key> k;
    k.reserve(items_.size());
    for (const Item& i : items_) k.push_back(i.first);
    return k;
  }
  std::vector<Value> values() const {
    std::vector<Value> v;
    v.reserve(items_.size());
    for (const Item& i : items_) v.push_back(i.second);
    return v;
  }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }

 private:
  static std::string key_str(const Key& key) {
    if constexpr (std::is_convertible_v<Key, std::string>) {
      return std::string(key);
    } else {
      return std::to_string(key);
    }
  }

  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
};

}  // namespace ember
