// Run-time dtype dispatch: visit_dtype(dtype, [&](auto tag) { using T = typename
// decltype(tag)::type; }).
#pragma once

#include <string>
#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/half.h"

namespace ember {

template <class T>
struct TypeTag {
  using type = T;
};

// The type arithmetic runs in: float for the 16-bit floats, the type itself otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<Half> {
  using type = float;
};
template <>
struct compute_type<BFloat16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
inline constexpr bool is_float_type_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Calls fn(TypeTag<T>{}) for the C++ type of dtype.
template <class Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case kBool:
      return fn(TypeTag<bool>{});
    case kUInt8:
      return fn(TypeTag<uint8_t>{});
    case kInt8:
      return fn(TypeTag<int8_t>{});
    case kInt32:
      return fn(TypeTag<int32_t>{});
    case kInt64:
      return fn(TypeTag<int64_t>{});
    case kFloat16:
      return fn(TypeTag<Half>{});
    case kBFloat16:
      return fn(TypeTag<BFloat16>{});
    case kFloat32:
      return fn(TypeTag<float>{});
    case kFloat64:
      return fn(TypeTag<double>{});
  }
  throw Error("[dispatch] unknown dtype");
}

// As visit_dtype, for the floating dtypes only; others raise "[op] ... not implemented for dtype".
template <class Fn>
decltype(auto) visit_float_dtype(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case kFloat16:
      return fn(TypeTag<Half>{});
    case kBFloat16:
      return fn(TypeTag<BFloat16>{});
    case kFloat32:
      return fn(TypeTag<float>{});
    case kFloat64:
      return fn(TypeTag<double>{});
    default:
      throw TypeError(std::string("[") + op + "] not implemented for dtype " +
                      std::string(dtype_name(dtype)));
  }
}

}  // namespace ember
