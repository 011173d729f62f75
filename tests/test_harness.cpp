// Runs every registered op case on every backend present, for each dtype and input layout.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "backend/backend.h"
#include "harness/harness.h"

using namespace ember;
using namespace ember::harness;

namespace {

enum class Layout { Contiguous, Transposed, Sliced };

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Transposed:
      return "transposed";
    default:
      return "sliced";
  }
}

// The same values on device, in a non-contiguous layout when asked.
Tensor place(const Tensor& t, Device dev, Layout layout) {
  if (layout == Layout::Transposed && t.dim() >= 2) {
    Shape s = t.sizes();
    std::swap(s[s.size() - 1], s[s.size() - 2]);
    Tensor out = empty(s, TensorOptions().dtype(t.dtype()).device(dev)).transpose(-1, -2);
    out.copy_(t);
    return out;
  }
  if (layout == Layout::Sliced && t.dim() >= 1) {
    Shape s = t.sizes();
    s.back() *= 2;
    Tensor out =
        empty(s, TensorOptions().dtype(t.dtype()).device(dev)).slice(-1, 0, std::nullopt, 2);
    out.copy_(t);
    return out;
  }
  return t.to(dev, false, true);
}

double default_tolerance(DType t) {
  switch (t) {
    case kFloat16:
      return 5e-6;
    case kBFloat16:
      return 1e-4;
    case kFloat32:
      return 1e-11;
    case kFloat64:
      return 1e-20;
    default:
      return 0.0;  // exact
  }
}

// Compares one output with its reference; returns an empty string when they agree.
std::string compare(const Tensor& got_t, const Ref& want, double tol) {
  std::ostringstream err;
  if (got_t.sizes() != want.shape) {
    err << "shape " << got_t.sizes() << " != reference shape " << want.shape;
    return err.str();
  }
  Ref got(got_t);
  bool exact = !is_floating_point(got_t.dtype());
  if (tol < 0) tol = default_tolerance(got_t.dtype());
  double num = 0, den = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    double g = got.data[i], w = want.data[i];
    if (exact) w = got_t.dtype() == kBool ? (w != 0) : w;
    if (std::isnan(w) || std::isnan(g)) {
      if (std::isnan(w) != std::isnan(g)) {
        err << "element " << i << ": got " << g << ", want " << w;
        return err.str();
      }
      continue;
    }
    if (std::isinf(w) || std::isinf(g)) {
      if (g != w) {
        err << "element " << i << ": got " << g << ", want " << w;
        return err.str();
      }
      continue;
    }
    if (exact && g != w) {
      err << "element " << i << ": got " << g << ", want " << w << " (exact dtype " << got_t.dtype()
          << ")";
      return err.str();
    }
    num += (g - w) * (g - w);
    den += w * w;
  }
  double nmse = num / std::max(den, 1e-300);
  if (!exact && den == 0 ? num > tol : nmse > tol) {
    err << "normalised error " << nmse << " > " << tol << " (" << got_t.dtype() << ")";
    return err.str();
  }
  return {};
}

// Every backend present; the emulated-CUDA build of the harness runs only the device cases (the
// CPU ones run in the plain build).
std::vector<Device> devices() {
#ifdef EMBER_HARNESS_CUDA_ONLY
  std::vector<Device> d;
#else
  std::vector<Device> d = {Device(kCPU)};
#endif
  try {
    backend(kCUDA);
    d.push_back(Device(kCUDA, 0));
  } catch (const Error&) {
  }
  return d;
}

void run_case(const OpCase& c, Device dev) {
  uint32_t seed = static_cast<uint32_t>(std::hash<std::string>{}(c.name));
  for (DType dt : c.dtypes) {
    std::mt19937 rng(seed + static_cast<uint32_t>(dt));
    TensorList inputs;
    if (c.make_inputs) {
      inputs = c.make_inputs(dt, rng);
    } else {
      for (const InputSpec& s : c.inputs) inputs.push_back(make_input(s, dt, rng));
    }
    std::vector<Ref> refs;
    for (const Tensor& t : inputs) refs.push_back(Ref(t));
    std::vector<Ref> want = c.reference(refs, dt);
    for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
      // Fresh device copies for every run: in-place cases modify their inputs.
      bool changed = false;
      auto placed_inputs = [&]() {
        TensorList placed;
        changed = false;
        for (size_t i = 0; i < inputs.size(); ++i) {
          bool may = c.make_inputs || i >= c.inputs.size() || c.inputs[i].layouts;
          placed.push_back(place(inputs[i], dev, may ? layout : Layout::Contiguous));
          changed |= !placed.back().is_contiguous();
        }
        return placed;
      };
      placed_inputs();
      if (layout != Layout::Contiguous && !changed) continue;
      // Two poison patterns: an output element a kernel never writes keeps one of them.
      for (uint8_t poison : {uint8_t(0xFF), uint8_t(0x00)}) {
        TensorList placed = placed_inputs();
        set_alloc_poison(true, poison);
        TensorList got;
        try {
          got = c.run(placed);
        } catch (const std::exception& e) {
          set_alloc_poison(false);
          ADD_FAILURE() << c.name << " [" << dt << ", " << layout_name(layout) << ", " << dev
                        << "] threw: " << e.what();
          return;
        }
        set_alloc_poison(false);
        ASSERT_EQ(got.size(), want.size()) << c.name << ": number of outputs";
        for (size_t k = 0; k < got.size(); ++k) {
          EXPECT_EQ(got[k].device(), dev) << c.name << " output " << k;
          std::string e = compare(got[k], want[k], c.tolerance);
          if (!e.empty()) {
            ADD_FAILURE() << c.name << " [" << dt << ", " << layout_name(layout) << ", " << dev
                          << ", poison " << int(poison) << "] output " << k << ": " << e;
            return;
          }
        }
      }
    }
  }
}

// ---- gradcheck ----------------------------------------------------------------------------------

std::vector<std::string>& unmatched_gradchecks() {
  static std::vector<std::string> names;
  return names;
}

// sum(out_k * w_k) over the checked outputs, as a host double.
double loss_value(const OpCase& c, const TensorList& outs, const TensorList& weights) {
  double total = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!weights[k].defined()) continue;
    total += (outs[k].to(kFloat64) * weights[k]).sum().item<double>();
  }
  (void)c;
  return total;
}

// Analytical gradients (backward of a random weighting of the outputs) against central finite
// differences, in float64. Inputs enter the op as clones of leaves, so in-place cases work too.
void run_gradcheck(const OpCase& c, Device dev) {
  const GradCheck& gc = *c.gradcheck;
  std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>{}(c.name)) + 7);
  TensorList host;
  if (c.make_inputs) {
    host = c.make_inputs(kFloat64, rng);
  } else {
    for (const InputSpec& s : c.inputs) host.push_back(make_input(s, kFloat64, rng));
  }
  std::vector<size_t> diff = gc.inputs;
  if (diff.empty()) {
    for (size_t i = 0; i < host.size(); ++i) {
      if (host[i].dtype() == kFloat64) diff.push_back(i);
    }
  }
  ASSERT_FALSE(diff.empty()) << c.name << ": no differentiable input";
  auto run_on = [&](const TensorList& values) {
    TensorList placed;
    for (const Tensor& t : values) placed.push_back(t.to(dev, false, true));
    return placed;
  };

  TensorList leaves = run_on(host);
  TensorList args = leaves;
  for (size_t i : diff) {
    leaves[i].requires_grad_(true);
    args[i] = leaves[i].clone();
  }
  TensorList outs = c.run(args);
  TensorList weights(outs.size());
  std::normal_distribution<double> normal;
  for (size_t k = 0; k < outs.size(); ++k) {
    bool chosen = gc.outputs.empty()
                      ? is_floating_point(outs[k].dtype())
                      : std::find(gc.outputs.begin(), gc.outputs.end(), k) != gc.outputs.end();
    if (!chosen || !outs[k].requires_grad()) continue;
    std::vector<double> w(static_cast<size_t>(outs[k].numel()));
    for (double& v : w) v = normal(rng);
    weights[k] = tensor(w, outs[k].sizes(), kFloat64).to(dev);
  }
  Tensor loss;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!weights[k].defined()) continue;
    Tensor term = (outs[k].to(kFloat64) * weights[k]).sum();
    loss = loss.defined() ? loss + term : term;
  }
  ASSERT_TRUE(loss.defined()) << c.name << ": no output requires grad";
  TensorList grad_inputs;
  for (size_t i : diff) grad_inputs.push_back(leaves[i]);
  TensorList analytic;
  try {
    analytic = autograd::grad({loss}, grad_inputs, {}, std::nullopt, false, true);
  } catch (const std::exception& e) {
    ADD_FAILURE() << c.name << " [" << dev << "] backward threw: " << e.what();
    return;
  }

  const double eps = 1e-6;
  NoGradGuard no_grad;
  for (size_t n = 0; n < diff.size(); ++n) {
    const size_t i = diff[n];
    std::vector<double> base = host[i].to_vector<double>();
    std::vector<double> got = analytic[n].defined() ? analytic[n].to_vector<double>()
                                                    : std::vector<double>(base.size(), 0.0);
    ASSERT_EQ(got.size(), base.size()) << c.name << ": gradient of input " << i;
    for (size_t j = 0; j < base.size(); ++j) {
      double fx[2];
      for (int side = 0; side < 2; ++side) {
        std::vector<double> v = base;
        v[j] += side == 0 ? eps : -eps;
        TensorList vals = host;
        vals[i] = tensor(v, host[i].sizes(), kFloat64);
        fx[side] = loss_value(c, c.run(run_on(vals)), weights);
      }
      double num = (fx[0] - fx[1]) / (2 * eps);
      if (std::fabs(got[j] - num) > gc.atol + gc.rtol * std::fabs(num)) {
        ADD_FAILURE() << c.name << " [" << dev << "] d/d input " << i << " element " << j
                      << ": analytical " << got[j] << ", numerical " << num;
        return;
      }
    }
  }
}

class GradTest : public ::testing::Test {
 public:
  GradTest(const OpCase* c, Device d) : case_(c), dev_(d) {}
  void TestBody() override { run_gradcheck(*case_, dev_); }

 private:
  const OpCase* case_;
  Device dev_;
};

class CaseTest : public ::testing::Test {
 public:
  CaseTest(const OpCase* c, Device d) : case_(c), dev_(d) {}
  void TestBody() override { run_case(*case_, dev_); }

 private:
  const OpCase* case_;
  Device dev_;
};

}  // namespace

TEST(Harness, EveryCaseHasDtypesAndAReference) {
  ASSERT_FALSE(registered_cases().empty());
  for (const OpCase& c : registered_cases()) {
    EXPECT_FALSE(c.dtypes.empty()) << c.name;
    EXPECT_TRUE(static_cast<bool>(c.run)) << c.name;
    EXPECT_TRUE(static_cast<bool>(c.reference)) << c.name;
  }
}

// The harness itself must catch a kernel that leaves outputs unwritten or computes wrong values.
TEST(Harness, CatchesUnwrittenAndWrongOutputs) {
  OpCase unwritten{"unwritten",
                   {kFloat32, kInt32},
                   {{{3, 4}}},
                   [](const TensorList& in) { return TensorList{empty_like(in[0])}; },
                   [](const std::vector<Ref>& in, DType) { return std::vector<Ref>{in[0]}; }};
  EXPECT_NONFATAL_FAILURE(run_case(unwritten, Device(kCPU)), "output 0");
  OpCase wrong{"wrong",
               {kFloat32},
               {{{3, 4}}},
               [](const TensorList& in) { return TensorList{in[0] * 1.001}; },
               [](const std::vector<Ref>& in, DType) { return std::vector<Ref>{in[0]}; }};
  EXPECT_NONFATAL_FAILURE(run_case(wrong, Device(kCPU)), "normalised error");
}

TEST(Harness, GradchecksNameRealCases) {
  EXPECT_TRUE(unmatched_gradchecks().empty())
      << "gradcheck for an unknown case: " << unmatched_gradchecks().front();
}

// The gradcheck itself must catch a wrong derivative.
TEST(Harness, GradcheckCatchesWrongDerivatives) {
  OpCase wrong{"wrong_grad",
               {kFloat64},
               {{{3}}},
               [](const TensorList& in) {
                 // Forward x^2, but the recorded graph says 3x.
                 Tensor fwd = (in[0] * in[0]).detach();
                 Tensor lin = in[0] * 1.5;
                 return TensorList{lin + (fwd - lin.detach())};
               },
               [](const std::vector<Ref>& in, DType) { return std::vector<Ref>{in[0]}; }};
  wrong.gradcheck = GradCheck{};
  EXPECT_NONFATAL_FAILURE(run_gradcheck(wrong, Device(kCPU)), "numerical");
}

int main(int argc, char** argv) {
  unmatched_gradchecks() = attach_gradchecks();
  for (const OpCase& c : registered_cases()) {
    if (c.gradcheck) {
      for (Device d : devices()) {
        std::string dev = d.is_cpu() ? "cpu" : "cuda";
        ::testing::RegisterTest("Grad", (c.name + "/" + dev).c_str(), nullptr, nullptr, __FILE__,
                                __LINE__,
                                [&c, d]() -> ::testing::Test* { return new GradTest(&c, d); });
      }
    }
    for (Device d : devices()) {
      std::string dev = d.is_cpu() ? "cpu" : "cuda";
      ::testing::RegisterTest("Op", (c.name + "/" + dev).c_str(), nullptr, nullptr, __FILE__,
                              __LINE__,
                              [&c, d]() -> ::testing::Test* { return new CaseTest(&c, d); });
    }
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
