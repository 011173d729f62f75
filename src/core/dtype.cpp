// DType tables: sizes, names, categories and the promotion lattice.
#include "ember/dtype.h"

#include <atomic>

#include "ember/error.h"
#include "ember/scalar.h"
#include "ember/shape.h"

namespace ember {

namespace {
constexpr int idx(DType t) { return static_cast<int>(t); }
std::atomic<DType> g_default_dtype{kFloat32};
}  // namespace

size_t element_size(DType t) {
  static constexpr size_t sizes[kNumDTypes] = {1, 1, 1, 4, 8, 2, 2, 4, 8};
  return sizes[idx(t)];
}

std::string_view dtype_name(DType t) {
  static constexpr std::string_view names[kNumDTypes] = {
      "bool", "uint8", "int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"};
  return names[idx(t)];
}

bool is_floating_point(DType t) {
  return t == kFloat16 || t == kBFloat16 || t == kFloat32 || t == kFloat64;
}

bool is_integral(DType t, bool include_bool) {
  return t == kUInt8 || t == kInt8 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

DType promote_types(DType a, DType b) {
  // PyTorch's lattice restricted to ember's dtypes. uint8 with int8 would be int16 in PyTorch;
  // ember has no int16 and goes to the next signed type that holds both, int32.
  constexpr DType b1 = kBool, u1 = kUInt8, i1 = kInt8, i4 = kInt32, i8 = kInt64, f2 = kFloat16,
                  bf = kBFloat16, f4 = kFloat32, f8 = kFloat64;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /*        b1  u1  i1  i4  i8  f2  bf  f4  f8 */
      /* b1 */ {b1, u1, i1, i4, i8, f2, bf, f4, f8},
      /* u1 */ {u1, u1, i4, i4, i8, f2, bf, f4, f8},
      /* i1 */ {i1, i4, i1, i4, i8, f2, bf, f4, f8},
      /* i4 */ {i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf */ {bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  return table[idx(a)][idx(b)];
}

DType default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(DType t) {
  if (t != kFloat32 && t != kFloat64) {
    throw TypeError("[set_default_dtype] only float32 and float64 are supported, got " +
                    std::string(dtype_name(t)));
  }
  g_default_dtype.store(t);
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

DType Scalar::dtype() const {
  switch (kind_) {
    case Kind::Bool:
      return kBool;
    case Kind::Int:
      return kInt64;
    default:
      return default_dtype();
  }
}

std::ostream& operator<<(std::ostream& os, const Shape& s) {
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  return os << ']';
}

}  // namespace ember
