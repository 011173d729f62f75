// Element types, their sizes and names, and PyTorch's type-promotion lattice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "ember/half.h"

namespace ember {

enum class DType : int8_t { Bool, UInt8, Int8, Int32, Int64, Float16, BFloat16, Float32, Float64 };

inline constexpr int kNumDTypes = 9;
inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kInt8 = DType::Int8;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kFloat = kFloat32;
inline constexpr DType kDouble = kFloat64;
inline constexpr DType kHalf = kFloat16;
inline constexpr DType kLong = kInt64;
inline constexpr DType kInt = kInt32;
// libtorch's short spellings.
inline constexpr DType kF16 = kFloat16;
inline constexpr DType kBF16 = kBFloat16;
inline constexpr DType kF32 = kFloat32;
inline constexpr DType kF64 = kFloat64;
inline constexpr DType kI8 = kInt8;
inline constexpr DType kI32 = kInt32;
inline constexpr DType kI64 = kInt64;
inline constexpr DType kU8 = kUInt8;
inline constexpr DType kByte = kUInt8;
inline constexpr DType kChar = kInt8;

// Bytes per element.
size_t element_size(DType t);
// "float32", "int64", ... (PyTorch's names without the "torch." prefix).
std::string_view dtype_name(DType t);
// True for float16, bfloat16, float32, float64.
bool is_floating_point(DType t);
// True for the integer types; bool counts only when include_bool.
bool is_integral(DType t, bool include_bool = false);
// The smallest type both a and b convert to without losing their category (PyTorch's
// promote_types).
DType promote_types(DType a, DType b);
// The dtype factories use when none is given (float32, as in PyTorch).
DType default_dtype();
// Changes the default floating dtype (float32 or float64 only, as torch.set_default_dtype).
void set_default_dtype(DType t);

std::ostream& operator<<(std::ostream& os, DType t);

// Maps a C++ element type to its DType.
template <class T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = kBool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = kUInt8;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = kInt8;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = kInt32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = kInt64;
};
template <>
struct dtype_of<Half> {
  static constexpr DType value = kFloat16;
};
template <>
struct dtype_of<BFloat16> {
  static constexpr DType value = kBFloat16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = kFloat32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = kFloat64;
};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace ember
