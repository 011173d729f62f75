// EMBER_ARG declares an option with a chaining setter and a getter, as libtorch's TORCH_ARG:
//   struct LinearOptions { EMBER_ARG(bool, bias) = true; };  LinearOptions().bias(false).bias()
#pragma once

#define EMBER_ARG(T, name)                           \
 public:                                             \
  auto& name(const T& new_##name) {                  \
    this->name##_ = new_##name;                      \
    return *this;                                    \
  }                                                  \
  const T& name() const noexcept { return name##_; } \
  T& name() noexcept { return name##_; }             \
                                                     \
 private:                                            \
  T name##_

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ember/error.h"

namespace ember::nn {

// N integers given as one (repeated) or as N: kernel_size(3) or kernel_size({3, 5}).
template <size_t N>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }  // NOLINT: implicit, as libtorch's
  ExpandingArray(std::initializer_list<int64_t> list) {
    if (list.size() != N) {
      throw ValueError("[nn] expected " + std::to_string(N) + " values, got " +
                       std::to_string(list.size()));
    }
    size_t i = 0;
    for (int64_t v : list) values_[i++] = v;
  }
  ExpandingArray(const std::vector<int64_t>& list) {  // NOLINT
    if (list.size() != N) {
      throw ValueError("[nn] expected " + std::to_string(N) + " values, got " +
                       std::to_string(list.size()));
    }
    for (size_t i = 0; i < N; ++i) values_[i] = list[i];
  }
  int64_t operator[](size_t i) const { return values_[i]; }
  int64_t& operator[](size_t i) { return values_[i]; }
  const std::array<int64_t, N>& values() const { return values_; }
  std::vector<int64_t> vec() const { return {values_.begin(), values_.end()}; }
  static constexpr size_t size() { return N; }
  friend bool operator==(const ExpandingArray&, const ExpandingArray&) = default;

 private:
  std::array<int64_t, N> values_{};
};

}  // namespace ember::nn
