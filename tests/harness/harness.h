// The op harness: every op is declared once as a case and run on every backend present, for each
// dtype and input layout, against a naive float64 reference, with poisoned outputs.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::harness {

// A host tensor of doubles in row-major order: what references read and write.
struct Ref {
  Shape shape;
  std::vector<double> data;

  Ref() = default;
  Ref(Shape s, std::vector<double> d) : shape(std::move(s)), data(std::move(d)) {}
  explicit Ref(const Tensor& t);  // copies any tensor's values
  int64_t numel() const { return shape.numel(); }
  // Element at a multi-index; broadcast-aware when idx has more dims than shape.
  double at(const std::vector<int64_t>& idx) const;
};

// Iterates every multi-index of shape in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& fn);
// Naive broadcast helpers for references.
Ref ref_unary(const Ref& a, const std::function<double(double)>& f);
Ref ref_binary(const Ref& a, const Ref& b, const std::function<double(double, double)>& f);
Ref ref_ternary(const Ref& a, const Ref& b, const Ref& c,
                const std::function<double(double, double, double)>& f);

// What values an input holds.
enum class Fill {
  Normal,    // standard normal (integers: uniform in [-9, 9])
  Positive,  // uniform in [0.1, 4]
  Unit,      // uniform in (-0.95, 0.95)
  NonZero,   // normal, |x| >= 0.25 (integers: non-zero in [-9, 9])
  Bool,      // random true/false
  Small,     // integers in [0, 3]
  Wide,      // normal * 4 (integers: uniform in [-30, 30]); exercises rounding and casts
};

struct InputSpec {
  Shape shape;
  Fill fill = Fill::Normal;
  std::optional<DType> dtype;  // fixed dtype (e.g. bool masks, int64 indices); else the case dtype
  bool layouts = true;         // whether the runner may give it non-contiguous layouts
};

// What autograd's check of a case covers: in float64, the analytical gradient of
// sum(out_k * w_k) (w_k random) against central finite differences, on every device.
struct GradCheck {
  std::vector<size_t> inputs;   // differentiable inputs; empty = every floating input
  std::vector<size_t> outputs;  // outputs the loss reads; empty = every floating output
  double atol = 1e-6;
  double rtol = 1e-5;
};

struct OpCase {
  std::string name;           // op name, also the test name
  std::vector<DType> dtypes;  // dtypes to test
  std::vector<InputSpec> inputs;
  // Calls the op under test.
  std::function<TensorList(const TensorList&)> run;
  // Naive float64 reference from the inputs' values; dtype is the case dtype being run (for ops
  // whose result depends on it, e.g. integer division).
  std::function<std::vector<Ref>(const std::vector<Ref>&, DType)> reference;
  // Normalised mean squared error allowed per dtype; <0 uses the default for the dtype.
  double tolerance = -1;
  // Custom inputs (e.g. valid index tensors): when set, replaces the generator from `inputs`.
  std::function<TensorList(DType, std::mt19937&)> make_inputs;
  // Set for differentiable ops (register_gradcheck).
  std::optional<GradCheck> gradcheck;
};

// Adds a case to the global registry (use EMBER_HARNESS_CASES).
int register_case(OpCase c);
const std::vector<OpCase>& registered_cases();
// Marks the named case as differentiable (use in EMBER_HARNESS_CASES).
void register_gradcheck(const std::string& name, GradCheck g = {});
// Attaches the registered gradchecks to their cases; returns the names that match no case.
std::vector<std::string> attach_gradchecks();

// Dtype lists.
std::vector<DType> float_dtypes();    // f16, bf16, f32, f64
std::vector<DType> numeric_dtypes();  // floats and integers, no bool
std::vector<DType> all_dtypes();      // everything
std::vector<DType> integer_dtypes(bool with_bool = false);

// Random input of a spec, made on the CPU.
Tensor make_input(const InputSpec& spec, DType dtype, std::mt19937& rng);

}  // namespace ember::harness

#define EMBER_HARNESS_CONCAT2(a, b) a##b
#define EMBER_HARNESS_CONCAT(a, b) EMBER_HARNESS_CONCAT2(a, b)
// EMBER_HARNESS_CASES { register_case(...); ... } registers cases at static-init time.
#define EMBER_HARNESS_CASES                                           \
  static void EMBER_HARNESS_CONCAT(ember_cases_, __LINE__)();         \
  static const int EMBER_HARNESS_CONCAT(ember_cases_reg_, __LINE__) = \
      (EMBER_HARNESS_CONCAT(ember_cases_, __LINE__)(), 0);            \
  static void EMBER_HARNESS_CONCAT(ember_cases_, __LINE__)()
