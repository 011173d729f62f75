// EMBER_ARG declares an option with a chaining setter and a getter, as libtorch's TORCH_ARG:
//   struct LinearOptions { EMBER_ARG(bool, bias) = true; };  LinearOptions().bias(false).bias()
#pragma once

#define EMBER_ARG(T, name)                          \
 public:                                            \
  auto& name(const T& new_##name) {                 \
    this->name##_ = new_##name;                     \
    return *this;                                   \
  }                                                 \
  const T& name() const noexcept { return name##_; } \
  T& name() noexcept { return name##_; }            \
                                                    \
 private:                                           \
  T name##_
