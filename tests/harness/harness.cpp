// The op-harness runner: inputs, layouts, poisoned outputs, comparison against references.
#include "harness/harness.h"

#include <cmath>
#include <sstream>

#include "backend/cpu/cpu_backend.h"

namespace ember::harness {

// ---- references ---------------------------------------------------------------------------------

Ref::Ref(const Tensor& t) : shape(t.sizes()), data(t.to_vector<double>()) {}

double Ref::at(const std::vector<int64_t>& idx) const {
  // Right-aligned broadcast: size-1 dims read index 0.
  size_t off = idx.size() - shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i = shape[d] == 1 ? 0 : idx[off + d];
    flat = flat * shape[d] + i;
  }
  return data[static_cast<size_t>(flat)];
}

void for_each_index(const Shape& shape,
                    const std::function<void(const std::vector<int64_t>&)>& fn) {
  int64_t n = shape.numel();
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    fn(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

Ref ref_unary(const Ref& a, const std::function<double(double)>& f) {
  Ref out(a.shape, a.data);
  for (double& v : out.data) v = f(v);
  return out;
}

Ref ref_binary(const Ref& a, const Ref& b, const std::function<double(double, double)>& f) {
  Shape s = broadcast_shapes(a.shape, b.shape);
  Ref out(s, {});
  out.data.reserve(static_cast<size_t>(s.numel()));
  for_each_index(s,
                 [&](const std::vector<int64_t>& i) { out.data.push_back(f(a.at(i), b.at(i))); });
  return out;
}

Ref ref_ternary(const Ref& a, const Ref& b, const Ref& c,
                const std::function<double(double, double, double)>& f) {
  Shape s = broadcast_shapes(broadcast_shapes(a.shape, b.shape), c.shape);
  Ref out(s, {});
  out.data.reserve(static_cast<size_t>(s.numel()));
  for_each_index(
      s, [&](const std::vector<int64_t>& i) { out.data.push_back(f(a.at(i), b.at(i), c.at(i))); });
  return out;
}

// ---- registry and inputs ------------------------------------------------------------------------

namespace {
std::vector<OpCase>& registry() {
  static std::vector<OpCase> cases;
  return cases;
}
}  // namespace

int register_case(OpCase c) {
  registry().push_back(std::move(c));
  return static_cast<int>(registry().size());
}

const std::vector<OpCase>& registered_cases() { return registry(); }

namespace {
std::vector<std::pair<std::string, GradCheck>>& gradcheck_registry() {
  static std::vector<std::pair<std::string, GradCheck>> g;
  return g;
}
}  // namespace

void register_gradcheck(const std::string& name, GradCheck g) {
  gradcheck_registry().emplace_back(name, std::move(g));
}

std::vector<std::string> attach_gradchecks() {
  std::vector<std::string> missing;
  for (auto& [name, g] : gradcheck_registry()) {
    bool found = false;
    for (OpCase& c : registry()) {
      if (c.name == name) {
        c.gradcheck = g;
        found = true;
      }
    }
    if (!found) missing.push_back(name);
  }
  return missing;
}

std::vector<DType> float_dtypes() { return {kFloat16, kBFloat16, kFloat32, kFloat64}; }
std::vector<DType> integer_dtypes(bool with_bool) {
  std::vector<DType> v = {kUInt8, kInt8, kInt32, kInt64};
  if (with_bool) v.insert(v.begin(), kBool);
  return v;
}
std::vector<DType> numeric_dtypes() {
  std::vector<DType> v = integer_dtypes(false);
  for (DType t : float_dtypes()) v.push_back(t);
  return v;
}
std::vector<DType> all_dtypes() {
  std::vector<DType> v = numeric_dtypes();
  v.insert(v.begin(), kBool);
  return v;
}

Tensor make_input(const InputSpec& spec, DType case_dtype, std::mt19937& rng) {
  DType dt = spec.dtype.value_or(case_dtype);
  int64_t n = spec.shape.numel();
  std::vector<double> v(static_cast<size_t>(n));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  bool integral = !is_floating_point(dt);
  int64_t lo = dt == kUInt8 ? 0 : -9;
  std::uniform_int_distribution<int64_t> ints(lo, 9);
  for (double& x : v) {
    switch (spec.fill) {
      case Fill::Normal:
        x = integral ? static_cast<double>(ints(rng)) : normal(rng);
        break;
      case Fill::Positive:
        x = integral ? static_cast<double>(1 + ints(rng) % 9 + (ints(rng) < 0 ? 9 : 0))
                     : 0.1 + 3.9 * uni(rng);
        if (integral) x = std::fabs(x) < 1 ? 1 : std::fabs(x);
        break;
      case Fill::Unit:
        x = integral ? static_cast<double>(ints(rng) % 2) : -0.95 + 1.9 * uni(rng);
        break;
      case Fill::NonZero:
        if (integral) {
          do x = static_cast<double>(ints(rng));
          while (x == 0);
        } else {
          do x = normal(rng);
          while (std::fabs(x) < 0.25);
        }
        break;
      case Fill::Bool:
        x = uni(rng) < 0.5 ? 0.0 : 1.0;
        break;
      case Fill::Small:
        x = static_cast<double>(static_cast<int>(uni(rng) * 4) % 4);
        break;
      case Fill::Wide:
        x = integral ? static_cast<double>(static_cast<int64_t>(uni(rng) * 61) - 30)
                     : 4 * normal(rng);
        if (dt == kUInt8) x = std::fabs(x);
        break;
    }
    if (dt == kBool) x = x != 0.0 ? 1.0 : 0.0;
  }
  return tensor(v, Shape{n}).reshape(spec.shape).to(dt);
}

}  // namespace ember::harness
