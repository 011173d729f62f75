// One call per row of the autocast table (src/ops/autocast_ops.def), shared by the CPU test
// (test_autocast.cpp) and the emulated CUDA test (sim/test_autocast_cuda.cpp). A case builds its
// inputs from Inputs: `a` tensors take the first dtype, `b` tensors the second (a promote op's
// other operand), so one case covers float32, 16-bit, mixed and float64 inputs.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "ops/autocast.h"

namespace ember_test {

struct AutocastInputs {
  ember::Device device;
  ember::DType first;
  ember::DType second;
  // Values in [0.5, 1.5): every op of the table is defined there (log, rsqrt, pow, ...).
  ember::Tensor a(const ember::Shape& s) const { return make(s, first); }
  ember::Tensor b(const ember::Shape& s) const { return make(s, second); }
  ember::Tensor index(std::vector<int64_t> v, const ember::Shape& s) const {
    return ember::tensor(v, s, ember::TensorOptions().dtype(ember::kInt64).device(device));
  }

 private:
  ember::Tensor make(const ember::Shape& s, ember::DType t) const {
    ember::NoGradGuard ng;
    return (ember::rand(s) + 0.5).to(device, t);
  }
};

using AutocastCase = std::function<ember::Tensor(const AutocastInputs&)>;

inline const std::map<std::string, AutocastCase>& autocast_cases() {
  using namespace ember;
  namespace F = ember::nn::functional;
  using In = AutocastInputs;
  static const std::map<std::string, AutocastCase> cases = {
      // lower precision
      {"linear",
       [](const In& i) {
         return linear(i.a({4, 3}), i.a({2, 3}), i.a({2}));
       }},
      {"matmul",
       [](const In& i) {
         return matmul(i.a({2, 4, 3}), i.a({3, 2}));
       }},
      {"mm",
       [](const In& i) {
         return mm(i.a({4, 3}), i.a({3, 2}));
       }},
      {"bmm",
       [](const In& i) {
         return bmm(i.a({2, 4, 3}), i.a({2, 3, 2}));
       }},
      {"addmm",
       [](const In& i) {
         return addmm(i.a({4, 2}), i.a({4, 3}), i.a({3, 2}));
       }},
      {"conv1d",
       [](const In& i) {
         return F::conv1d(i.a({1, 2, 5}), i.a({3, 2, 2}), i.a({3}));
       }},
      {"conv2d",
       [](const In& i) {
         return F::conv2d(i.a({1, 2, 4, 4}), i.a({3, 2, 2, 2}), i.a({3}));
       }},
      {"conv_transpose2d",
       [](const In& i) {
         return F::conv_transpose2d(i.a({1, 2, 3, 3}), i.a({2, 3, 2, 2}), i.a({3}));
       }},
      {"scaled_dot_product_attention",
       [](const In& i) {
         return F::scaled_dot_product_attention(i.a({1, 3, 4}), i.a({1, 5, 4}), i.a({1, 5, 2}));
       }},
      // float32: element-wise
      {"exp", [](const In& i) { return exp(i.a({5})); }},
      {"expm1", [](const In& i) { return expm1(i.a({5})); }},
      {"log", [](const In& i) { return log(i.a({5})); }},
      {"log2", [](const In& i) { return log2(i.a({5})); }},
      {"log1p", [](const In& i) { return log1p(i.a({5})); }},
      {"reciprocal", [](const In& i) { return reciprocal(i.a({5})); }},
      {"rsqrt", [](const In& i) { return rsqrt(i.a({5})); }},
      {"tan", [](const In& i) { return tan(i.a({5})); }},
      {"pow", [](const In& i) { return pow(i.a({5}), 2.5); }},
      {"softplus", [](const In& i) { return softplus(i.a({5})); }},
      // float32: reductions, norms, softmax
      {"sum",
       [](const In& i) {
         return sum(i.a({3, 4}));
       }},
      {"prod",
       [](const In& i) {
         return prod(i.a({3, 4}));
       }},
      {"cumsum",
       [](const In& i) {
         return cumsum(i.a({3, 4}), 1);
       }},
      {"cumprod",
       [](const In& i) {
         return cumprod(i.a({3, 4}), 1);
       }},
      {"norm",
       [](const In& i) {
         return norm(i.a({3, 4}));
       }},
      {"logsumexp",
       [](const In& i) {
         return logsumexp(i.a({3, 4}), {1});
       }},
      {"softmax",
       [](const In& i) {
         return softmax(i.a({3, 4}), 1);
       }},
      {"log_softmax",
       [](const In& i) {
         return log_softmax(i.a({3, 4}), 1);
       }},
      {"layer_norm",
       [](const In& i) {
         return F::layer_norm(i.a({3, 4}), {4}, i.a({4}), i.a({4}));
       }},
      {"group_norm",
       [](const In& i) {
         return F::group_norm(i.a({2, 4, 3}), 2, i.a({4}), i.a({4}));
       }},
      // float32: losses
      {"cross_entropy",
       [](const In& i) {
         return F::cross_entropy(i.a({3, 4}), i.index({0, 3, 1}, {3}));
       }},
      {"nll_loss",
       [](const In& i) {
         return F::nll_loss(i.a({3, 4}), i.index({0, 3, 1}, {3}));
       }},
      {"mse_loss",
       [](const In& i) {
         return F::mse_loss(i.a({3, 4}), i.a({3, 4}));
       }},
      {"l1_loss",
       [](const In& i) {
         return F::l1_loss(i.a({3, 4}), i.a({3, 4}));
       }},
      {"smooth_l1_loss",
       [](const In& i) {
         return F::smooth_l1_loss(i.a({3, 4}), i.a({3, 4}));
       }},
      {"huber_loss",
       [](const In& i) {
         return F::huber_loss(i.a({3, 4}), i.a({3, 4}));
       }},
      {"kl_div",
       [](const In& i) {
         return F::kl_div(i.a({3, 4}), i.a({3, 4}));
       }},
      {"binary_cross_entropy_with_logits",
       [](const In& i) {
         return F::binary_cross_entropy_with_logits(i.a({3, 4}), i.a({3, 4}));
       }},
      {"binary_cross_entropy",
       [](const In& i) {
         // probabilities in (0, 1)
         return F::binary_cross_entropy(i.a({3, 4}) * 0.5, i.a({3, 4}) * 0.5);
       }},
      // promote: the second operand may be wider
      {"addcmul", [](const In& i) { return addcmul(i.a({4}), i.b({4}), i.a({4}), 0.5); }},
      {"addcdiv", [](const In& i) { return addcdiv(i.a({4}), i.b({4}), i.a({4}), 0.5); }},
      {"atan2", [](const In& i) { return atan2(i.a({4}), i.b({4})); }},
      {"dot", [](const In& i) { return dot(i.a({4}), i.b({4})); }},
      {"index_put",
       [](const In& i) {
         return index_put(i.a({5}), {i.index({1, 3}, {2})}, i.b({2}));
       }},
      {"scatter_add",
       [](const In& i) {
         return scatter_add(i.a({5}), 0, i.index({1, 3}, {2}), i.b({2}));
       }},
      {"cat",
       [](const In& i) {
         return cat({i.a({2, 3}), i.b({1, 3})}, 0);
       }},
      {"stack",
       [](const In& i) {
         return stack({i.a({2, 3}), i.b({2, 3})}, 0);
       }},
  };
  return cases;
}

}  // namespace ember_test

namespace ember_test {

// The dtype a case returns, or "throws" with the message kept in *error.
inline std::string autocast_outcome(const AutocastCase& c, const AutocastInputs& in,
                                    std::string* error = nullptr) {
  try {
    return std::string(ember::dtype_name(c(in).dtype()));
  } catch (const ember::Error& e) {
    if (error) *error = e.what();
    return "throws";
  }
}

// Runs every row of the table on device under `amp::autocast(device.type(), low)`, for float32,
// 16-bit, mixed (16-bit with a float32 second operand) and float64 inputs, and checks the output
// dtype against the row's policy; rows not on this device type's list must behave as without
// autocast. Returns the number of rows checked.
inline size_t check_autocast_table(ember::Device device, ember::DType low) {
  using namespace ember;
  namespace ac = ember::autocast;
  const auto& cases = autocast_cases();
  const std::string low_name(dtype_name(low));
  const std::pair<DType, DType> configs[] = {
      {kFloat32, kFloat32}, {low, low}, {low, kFloat32}, {kFloat64, kFloat64}};
  size_t checked = 0;
  for (const ac::OpInfo& row : ac::kOps) {
    auto it = cases.find(row.name);
    if (it == cases.end()) {
      ADD_FAILURE() << "autocast row " << row.name << " has no case in tests/autocast_cases.h";
      continue;
    }
    const ac::Policy p = device.type() == kCUDA ? row.cuda : row.cpu;
    for (const auto& [first, second] : configs) {
      SCOPED_TRACE(std::string(row.name) + " with " + std::string(dtype_name(first)) + ", " +
                   std::string(dtype_name(second)) + " inputs on " + device.str());
      const AutocastInputs in{device, first, second};
      const std::string plain = autocast_outcome(it->second, in);
      std::string error;
      std::string cast;
      {
        amp::autocast guard(device.type(), low);
        cast = autocast_outcome(it->second, in, &error);
      }
      if (p == ac::Policy::Banned) {
        EXPECT_EQ(cast, "throws");
        EXPECT_NE(error.find("unsafe to autocast"), std::string::npos) << error;
        continue;
      }
      if (p == ac::Policy::None || first == kFloat64) {
        EXPECT_EQ(cast, plain) << error;
        continue;
      }
      std::string want = "float32";
      if (p == ac::Policy::LowerPrecision) want = low_name;
      if (p == ac::Policy::Promote && second == low) want = low_name;
      EXPECT_EQ(cast, want) << error;
    }
    ++checked;
  }
  return checked;
}

}  // namespace ember_test

namespace ember_test {

// The ops autocast runs in float32 must also be right when a caller runs them in 16 bits: their
// kernels accumulate in float32 and round once. Each op runs on 16-bit inputs and on the same
// values widened to float32; the results may differ only by the final rounding (a few units of
// the 16-bit format's last place), where 16-bit accumulation over 4096 elements would be off by
// far more (a bfloat16 running sum of ones stops growing at 256). Forward and the input's
// gradient are compared. Returns the number of ops checked.
inline size_t check_16bit_accumulation(ember::Device device, ember::DType half) {
  using namespace ember;
  namespace F = ember::nn::functional;
  using Fn = std::function<Tensor(const Tensor&)>;
  const Tensor target =
      tensor(std::vector<int64_t>{3, 0, 7, 1}, {4}, TensorOptions().dtype(kInt64).device(device));
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"sum", [](const Tensor& x) { return sum(x); }},
      {"sum_dim", [](const Tensor& x) { return sum(x, {1}); }},
      {"mean", [](const Tensor& x) { return mean(x, {1}); }},
      {"prod", [](const Tensor& x) { return prod(x.narrow(1, 0, 8), 1); }},
      {"cumsum", [](const Tensor& x) { return cumsum(x, 1); }},
      {"norm", [](const Tensor& x) { return norm(x, 2.0, {1}); }},
      {"logsumexp", [](const Tensor& x) { return logsumexp(x, {1}); }},
      {"softmax", [](const Tensor& x) { return softmax(x, 1) * 1024.0; }},
      {"log_softmax", [](const Tensor& x) { return log_softmax(x, 1); }},
      {"layer_norm", [](const Tensor& x) { return F::layer_norm(x, {1024}); }},
      {"group_norm",
       [](const Tensor& x) {
         return F::group_norm(x.view({4, 8, 128}), 2);
       }},
      {"cross_entropy", [&](const Tensor& x) { return F::cross_entropy(x, target); }},
      {"nll_loss", [&](const Tensor& x) { return F::nll_loss(x, target); }},
      {"mse_loss", [](const Tensor& x) { return F::mse_loss(x, x * 0.0 + 0.25); }},
  };
  NoGradGuard outer;
  const Tensor base = (rand({4, 1024}) + 0.5).to(half).to(kFloat32);  // 16-bit representable
  const double ulp = half == kBFloat16 ? 1.0 / 128 : 1.0 / 1024;
  size_t checked = 0;
  for (const auto& [name, fn] : ops) {
    SCOPED_TRACE(name + " in " + std::string(dtype_name(half)) + " on " + device.str());
    try {
      EnableGradGuard grad;
      Tensor x16 = base.to(device, half).requires_grad_();
      Tensor x32 = base.to(device).clone().requires_grad_();  // never base itself
      Tensor y16 = fn(x16);
      Tensor y32 = fn(x32);
      EXPECT_EQ(y16.dtype(), half);
      const Tensor a = y16.detach().to(kCPU, kFloat32), b = y32.detach().to(kCPU, kFloat32);
      const double scale = b.abs().max().item<double>() + 1e-30;
      EXPECT_LE((a - b).abs().max().item<double>(), 2 * ulp * scale);
      // Gradients: the same upstream gradient w (16-bit values) through both; a plain sum would
      // give softmax and the norms gradients that cancel to rounding noise.
      const Tensor w = (rand(y32.sizes()) - 0.5).to(half).to(kFloat32);
      (y16 * w.to(device, half)).sum().backward();
      (y32 * w.to(device)).sum().backward();
      const Tensor ga = x16.grad().to(kCPU, kFloat32), gb = x32.grad().to(kCPU, kFloat32);
      const double gscale = gb.abs().max().item<double>() + 1e-30;
      EXPECT_LE((ga - gb).abs().max().item<double>(), 8 * ulp * gscale);
      ++checked;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  return checked;
}

}  // namespace ember_test
