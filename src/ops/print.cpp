// PyTorch-style text for tensors (operator<<, to_string): the layout, number formats and
// summarisation rules of torch's repr, with dtype names written without the "torch." prefix.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "ember/ops.h"
#include "ember/tensor.h"

namespace ember {
namespace {

// torch's default print options.
constexpr int kPrecision = 4;
constexpr int64_t kThreshold = 1000;  // more elements than this are summarised
constexpr int64_t kEdgeItems = 3;     // items kept at each end of a summarised dim
constexpr int kLineWidth = 80;

// ---- number text --------------------------------------------------------------------------------

// printf would write "-nan" for a NaN with its sign bit set; Python always writes "nan".
bool nonfinite_text(double v, std::string& out) {
  if (std::isnan(v)) {
    out = "nan";
    return true;
  }
  if (std::isinf(v)) {
    out = v > 0 ? "inf" : "-inf";
    return true;
  }
  return false;
}

std::string fixed_text(double v, int precision) {
  std::string s;
  if (nonfinite_text(v, s)) return s;
  char buf[400];  // 1e308 in fixed notation fits
  std::snprintf(buf, sizeof(buf), "%.*f", precision, v);
  return buf;
}

std::string sci_text(double v, int precision) {
  std::string s;
  if (nonfinite_text(v, s)) return s;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*e", precision, v);
  return buf;
}

std::string pad_left(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// ---- the values shown ---------------------------------------------------------------------------

// The elements a print shows, copied to the host: the whole tensor, or for a summarised one only
// the edge items of each long dim (so printing a huge device tensor copies a few hundred values).
struct Shown {
  Shape sizes;            // sizes of the copied block, row-major
  std::vector<bool> cut;  // per dim: "..." stands between the head and the tail items
  std::vector<double> floats;
  std::vector<int64_t> ints;  // integer and bool tensors
};

Shown gather_shown(const Tensor& t, bool summarize) {
  Shown s;
  const int64_t nd = t.dim();
  s.sizes = t.sizes();
  s.cut.assign(static_cast<size_t>(nd), false);
  std::vector<int64_t> cut_dims;
  for (int64_t d = 0; d < nd; ++d) {
    if (summarize && t.size(d) > 2 * kEdgeItems) {
      s.sizes[d] = 2 * kEdgeItems;
      s.cut[d] = true;
      cut_dims.push_back(d);
    }
  }
  const DType host_dtype = t.is_floating_point() ? kFloat64 : kInt64;
  Tensor host;
  if (cut_dims.empty()) {
    host = t.to(Device(kCPU), host_dtype).contiguous();
  } else {
    host = empty(s.sizes, TensorOptions(host_dtype));
    // One copy per combination of head/tail blocks over the summarised dims.
    const size_t k = cut_dims.size();
    for (uint64_t mask = 0; mask < (uint64_t{1} << k); ++mask) {
      Tensor src = t;
      Tensor dst = host;
      for (size_t j = 0; j < k; ++j) {
        const int64_t d = cut_dims[j];
        const bool tail = (mask >> j) & 1;
        src = src.narrow(d, tail ? t.size(d) - kEdgeItems : 0, kEdgeItems);
        dst = dst.narrow(d, tail ? kEdgeItems : 0, kEdgeItems);
      }
      dst.copy_(src);
    }
  }
  if (host_dtype == kFloat64) {
    s.floats = host.to_vector<double>();
  } else {
    s.ints = host.to_vector<int64_t>();
  }
  return s;
}

// ---- one format for every element ---------------------------------------------------------------

// Chooses one format and width for all shown elements, as torch's _Formatter does: floats print in
// integer mode ("1."), fixed ("1.5000") or scientific ("1.0000e-05") depending on the nonzero
// finite values only; nan and inf take part in the padding but not in the choice.
class Formatter {
 public:
  Formatter(const Shown& s, DType dtype) : dtype_(dtype) {
    if (dtype == kBool) {
      for (int64_t v : s.ints) width_ = std::max(width_, v ? size_t{4} : size_t{5});
      return;
    }
    if (!is_floating_point(dtype)) {
      for (int64_t v : s.ints) width_ = std::max(width_, std::to_string(v).size());
      return;
    }
    floating_ = true;
    double min_abs = INFINITY, max_abs = 0;
    bool any = false;
    for (double v : s.floats) {
      if (!std::isfinite(v) || v == 0) continue;
      any = true;
      min_abs = std::min(min_abs, std::fabs(v));
      max_abs = std::max(max_abs, std::fabs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    if (!any) return;
    const bool wide = max_abs / min_abs > 1000.0 || max_abs > 1.0e8;
    sci_mode_ = int_mode_ ? wide : (wide || min_abs < 1.0e-4);
    for (double v : s.floats) {
      if (!std::isfinite(v) || v == 0) continue;
      size_t w;
      if (sci_mode_) {
        w = sci_text(v, kPrecision).size();
      } else if (int_mode_) {
        w = fixed_text(v, 0).size() + 1;  // the trailing "."
      } else {
        w = fixed_text(v, kPrecision).size();
      }
      width_ = std::max(width_, w);
    }
  }

  size_t width() const { return width_; }

  std::string format(const Shown& s, int64_t i) const {
    std::string text;
    if (!floating_) {
      const int64_t v = s.ints[static_cast<size_t>(i)];
      text = dtype_ == kBool ? (v ? "True" : "False") : std::to_string(v);
    } else {
      const double v = s.floats[static_cast<size_t>(i)];
      if (sci_mode_) {
        text = sci_text(v, kPrecision);
      } else if (int_mode_) {
        text = fixed_text(v, 0);
        if (std::isfinite(v)) text += '.';
      } else {
        text = fixed_text(v, kPrecision);
      }
    }
    return pad_left(std::move(text), width_);
  }

 private:
  DType dtype_;
  bool floating_ = false;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t width_ = 1;
};

// ---- layout -------------------------------------------------------------------------------------

struct Printer {
  const Shown& shown;
  const Formatter& fmt;
  std::vector<int64_t> block;  // elements per step of each dim in the row-major copy

  // The positions of one dim that are printed, with -1 where "..." goes.
  std::vector<int64_t> positions(int64_t d) const {
    std::vector<int64_t> p;
    const int64_t n = shown.sizes[d];
    for (int64_t i = 0; i < n; ++i) {
      if (shown.cut[d] && i == kEdgeItems) p.push_back(-1);
      p.push_back(i);
    }
    return p;
  }

  // A 1-D row: elements wrapped to the line width, continuation lines under the first element.
  void row(int64_t d, int64_t base, int indent, std::string& out) const {
    const int64_t element_length = static_cast<int64_t>(fmt.width()) + 2;  // ", " included
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / element_length);
    out += '[';
    int64_t on_line = 0;
    bool first = true;
    for (int64_t i : positions(d)) {
      if (!first) {
        if (on_line == per_line) {
          out += ",\n";
          out.append(static_cast<size_t>(indent + 1), ' ');
          on_line = 0;
        } else {
          out += ", ";
        }
      }
      first = false;
      out += i < 0 ? std::string(" ...") : fmt.format(shown, base + i * block[d]);
      ++on_line;
    }
    out += ']';
  }

  // A sub-tensor of dim >= 1 starting at dim d; slices of an N-dim block are separated by N-1
  // newlines, so 3-D and higher blocks have blank lines between them.
  void nested(int64_t d, int64_t base, int indent, std::string& out) const {
    const int64_t nd = static_cast<int64_t>(shown.sizes.size());
    if (d == nd - 1) {
      row(d, base, indent, out);
      return;
    }
    out += '[';
    bool first = true;
    for (int64_t i : positions(d)) {
      if (!first) {
        out += ',';
        out.append(static_cast<size_t>(nd - d - 1), '\n');
        out.append(static_cast<size_t>(indent + 1), ' ');
      }
      first = false;
      if (i < 0) {
        out += "...";
      } else {
        nested(d + 1, base + i * block[d], indent + 1, out);
      }
    }
    out += ']';
  }
};

std::string data_text(const Tensor& t, int indent) {
  const bool summarize = t.numel() > kThreshold;
  Shown shown = gather_shown(t, summarize);
  Formatter fmt(shown, t.dtype());
  if (t.dim() == 0) return fmt.format(shown, 0);
  Printer p{shown, fmt, std::vector<int64_t>(shown.sizes.size(), 1)};
  for (int64_t d = static_cast<int64_t>(shown.sizes.size()) - 2; d >= 0; --d) {
    p.block[d] = p.block[d + 1] * shown.sizes[d + 1];
  }
  std::string out;
  p.nested(0, 0, indent, out);
  return out;
}

// Appends ", suffix" items, starting a new line under the data when one would pass the line width
// (torch's _add_suffixes, including its count of the last line's length).
std::string with_suffixes(const std::string& body, const std::vector<std::string>& suffixes,
                          int indent) {
  std::string out = body;
  const size_t nl = body.rfind('\n');
  int64_t last_line = static_cast<int64_t>(body.size()) -
                      (nl == std::string::npos ? -1 : static_cast<int64_t>(nl)) + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t len = static_cast<int64_t>(suffix.size());
    if (last_line + len + 2 > kLineWidth) {
      out += ",\n";
      out.append(static_cast<size_t>(indent), ' ');
      out += suffix;
      last_line = indent + len;
    } else {
      out += ", ";
      out += suffix;
      last_line += len + 2;
    }
  }
  out += ')';
  return out;
}

std::string size_tuple(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + ")";
}

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "[ Tensor (undefined) ]";
  const std::string prefix = "tensor(";
  const int indent = static_cast<int>(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.is_cpu()) suffixes.push_back("device='" + t.device().str() + "'");
  const std::string dtype_suffix = "dtype=" + std::string(dtype_name(t.dtype()));
  std::string data;
  if (t.numel() == 0) {
    // Nothing shows the shape or an integer dtype, so both are spelled out (as NumPy does).
    if (t.dim() != 1) suffixes.push_back("size=" + size_tuple(t.sizes()));
    if (t.dtype() != default_dtype()) suffixes.push_back(dtype_suffix);
    data = "[]";
  } else {
    const DType d = t.dtype();
    if (d != default_dtype() && d != kInt64 && d != kBool) suffixes.push_back(dtype_suffix);
    data = data_text(t, indent);
  }
  return with_suffixes(prefix + data, suffixes, indent);
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << to_string(t); }

}  // namespace ember
