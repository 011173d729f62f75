// The vocabulary of the op tables (elementwise_ops.def, reduce_ops.def): which dtypes an op
// takes, how its gradient is defined, what its autograd node saves.
#pragma once

#include <cstdint>
#include <type_traits>

namespace ember {

// Which dtypes an op takes (the tables' `dtypes` column). The op layer promotes or rejects every
// other dtype before a backend sees it, and kernels are compiled for exactly the dtypes admitted.
enum class DTypeClass : uint8_t {
  Float,        // every dtype; integers and bool promote to the default float dtype (exp, atan2)
  FloatOnly,    // floating dtypes; integers and bool are rejected (activations)
  Numeric,      // every dtype but bool (neg, abs, relu)
  Any,          // every dtype
  Division,     // every dtype; an integer divisor of zero raises (fmod, remainder, div modes)
  Integral,     // integers and bool (bitwise and, or, xor, not)
  IntegerOnly,  // integers, not bool (shifts)
};

// How an op's gradient is defined (the `derivative` / `grad` column).
enum class Grad : uint8_t {
  Formula,  // a formula (element-wise: EMBER_GRAD's; reductions: src/ops/reduce_grad.cpp)
  Zero,     // piecewise constant: the node passes back zeros (EMBER_ZERO_GRAD)
  None,     // not differentiable: bool or integer results, no node (EMBER_NO_GRAD)
};

// What an op's autograd node keeps for its backward.
enum class Saved : uint8_t { Nothing, Inputs, Output, InputsAndOutput };

// Whether a dtype class admits compute type T (16-bit floats compute in float).
template <class T>
constexpr bool admits(DTypeClass c) {
  constexpr bool fp = std::is_floating_point_v<T>, boolean = std::is_same_v<T, bool>;
  switch (c) {
    case DTypeClass::Float:
    case DTypeClass::FloatOnly:
      return fp;
    case DTypeClass::Numeric:
      return !boolean;
    case DTypeClass::Integral:
      return !fp;
    case DTypeClass::IntegerOnly:
      return !fp && !boolean;
    case DTypeClass::Any:
    case DTypeClass::Division:
      return true;
  }
  return false;
}

}  // namespace ember
