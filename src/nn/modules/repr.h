// Python's repr of values, for PyTorch's module printing.
#pragma once

#include <charconv>
#include <cmath>
#include <string>

namespace ember::nn::detail {

// 1.0, 0.01, 1e-05, inf: the shortest round-tripping digits, as Python's float repr.
inline std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const double a = std::fabs(v);
  auto fmt = (a != 0 && (a < 1e-4 || a >= 1e16)) ? std::chars_format::scientific
                                                 : std::chars_format::fixed;
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt);
  std::string s(buf, r.ptr);
  if (fmt == std::chars_format::scientific) {
    // Python writes 1e-05: at least two exponent digits.
    const size_t e = s.find('e');
    std::string mant = s.substr(0, e), ex = s.substr(e + 1);
    const char sign = ex[0] == '-' ? '-' : '+';
    if (ex[0] == '-' || ex[0] == '+') ex = ex.substr(1);
    if (ex.size() < 2) ex = "0" + ex;
    return mant + "e" + sign + ex;
  }
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

inline std::string py_bool(bool b) { return b ? "True" : "False"; }

}  // namespace ember::nn::detail
