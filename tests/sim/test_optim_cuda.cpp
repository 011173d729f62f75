// Optimizers on an emulated device match the CPU: many parameters of odd sizes (one spanning two
// chunks, one not vector-aligned) go through one fused launch per step and come out bit-identical.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "backend/cuda/optim_kernels.h"
#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
using namespace ember::optim;

namespace {

const Device kGpu("cuda:0");

using MakeOpt = std::function<std::unique_ptr<Optimizer>(const std::vector<Tensor>&)>;

// Parameters of odd sizes: one longer than a chunk, one starting one element into its storage
// (so not vector-aligned on the device), one non-contiguous.
std::vector<Tensor> make_params(DType dt, Device dev) {
  manual_seed(11);
  std::vector<Tensor> ps;
  for (int64_t n : {1, 3, 7, 33, 100, 257, 1023}) ps.push_back(randn({n}).to(dev, dt));
  ps.push_back(randn({3, 5, 7}).to(dev, dt));
  ps.push_back(randn({cuda_kernels::kOptimChunk + 5}).to(dev, dt));
  ps.push_back(randn({41}).to(dev, dt).slice(0, 1));  // 40 elements at an odd offset
  ps.push_back(randn({6, 4}).to(dev, dt).t());        // non-contiguous
  for (Tensor& p : ps) p = p.detach().requires_grad_();
  return ps;
}

// Runs 4 steps on the CPU and on the device with the same gradients; every parameter and state
// tensor must agree, and each device step is exactly one launch when there is one group.
void check_matches_cpu(const MakeOpt& make, DType dt, double tol) {
  std::vector<Tensor> cpu = make_params(dt, Device("cpu"));
  std::vector<Tensor> gpu = make_params(dt, kGpu);
  auto opt_cpu = make(cpu);
  auto opt_gpu = make(gpu);
  manual_seed(5);
  for (int step = 0; step < 4; ++step) {
    for (size_t i = 0; i < cpu.size(); ++i) {
      Tensor g = randn(cpu[i].sizes()).to(dt);
      cpu[i].mutable_grad() = g;
      gpu[i].mutable_grad() = g.to(kGpu);
    }
    const int64_t launches = cuda_kernels::optim_launch_count();
    opt_cpu->step();
    opt_gpu->step();
    EXPECT_EQ(cuda_kernels::optim_launch_count() - launches,
              static_cast<int64_t>(opt_gpu->param_groups().size()));
  }
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(gpu[i].device(), kGpu);
    if (tol == 0) {
      EXPECT_EQ(bytes_of(cpu[i]), bytes_of(gpu[i])) << "parameter " << i;
    } else {
      const auto a = cpu[i].to_vector<double>(), b = gpu[i].to_vector<double>();
      for (size_t j = 0; j < a.size(); ++j) ASSERT_NEAR(a[j], b[j], tol) << "parameter " << i;
    }
    const ParamState& sc = opt_cpu->state(cpu[i]);
    const ParamState& sg = opt_gpu->state(gpu[i]);
    ASSERT_EQ(sc.size(), sg.size());
    for (const auto& [name, t] : sc) {
      const Tensor& u = sg[name];
      if (name == "step") {
        EXPECT_TRUE(u.is_cpu());
        EXPECT_EQ(u.item<float>(), 4.0f);
        continue;
      }
      EXPECT_EQ(u.device(), kGpu) << name;
      if (tol == 0) EXPECT_EQ(bytes_of(t), bytes_of(u)) << "parameter " << i << " state " << name;
    }
  }
}

template <class Opt, class O>
MakeOpt maker(O o) {
  return [o](const std::vector<Tensor>& ps) { return std::make_unique<Opt>(ps, o); };
}

}  // namespace

TEST(OptimCuda, SGD) {
  for (const SGDOptions& o : {SGDOptions(0.1), SGDOptions(0.05).momentum(0.9).weight_decay(0.01),
                              SGDOptions(0.05).momentum(0.9).nesterov(true).maximize(true),
                              SGDOptions(0.05).momentum(0.8).dampening(0.2)}) {
    check_matches_cpu(maker<SGD>(o), kFloat32, 0);
  }
}

TEST(OptimCuda, Adam) {
  for (const AdamOptions& o : {AdamOptions(0.01), AdamOptions(0.01).amsgrad(true).weight_decay(0.1),
                               AdamOptions(0.01).maximize(true).betas({0.8, 0.95})}) {
    check_matches_cpu(maker<Adam>(o), kFloat32, 0);
  }
}

TEST(OptimCuda, AdamW) {
  check_matches_cpu(maker<AdamW>(AdamWOptions(0.01).weight_decay(0.1)), kFloat32, 0);
  check_matches_cpu(maker<AdamW>(AdamWOptions(0.01).amsgrad(true)), kFloat32, 0);
}

TEST(OptimCuda, RMSprop) {
  for (const RMSpropOptions& o :
       {RMSpropOptions(0.01), RMSpropOptions(0.01).momentum(0.9).weight_decay(0.1),
        RMSpropOptions(0.01).centered(true).momentum(0.5).maximize(true)}) {
    check_matches_cpu(maker<RMSprop>(o), kFloat32, 0);
  }
}

TEST(OptimCuda, Adagrad) {
  check_matches_cpu(
      maker<Adagrad>(
          AdagradOptions(0.1).lr_decay(0.01).weight_decay(0.1).initial_accumulator_value(0.2)),
      kFloat32, 0);
}

TEST(OptimCuda, OtherDtypes) {
  check_matches_cpu(maker<Adam>(AdamOptions(0.01).amsgrad(true)), kFloat64, 0);
  check_matches_cpu(maker<SGD>(SGDOptions(0.01).momentum(0.9)), kFloat16, 0);
  check_matches_cpu(maker<RMSprop>(RMSpropOptions(0.01).centered(true)), kBFloat16, 0);
}

TEST(OptimCuda, OneLaunchPerGroupAndDtype) {
  std::vector<Tensor> a = make_params(kFloat32, kGpu);
  Tensor d = randn({9}).to(kGpu, kFloat64).requires_grad_();
  Tensor h = randn({5}).to(kGpu, kFloat16).requires_grad_();
  Tensor cpu_param = randn({4}).requires_grad_();
  std::vector<Tensor> group0 = a;
  group0.push_back(d);
  group0.push_back(h);
  group0.push_back(cpu_param);
  Tensor b = randn({17}).to(kGpu).requires_grad_();
  Adam opt({OptimizerParamGroup(group0), OptimizerParamGroup({b}, AdamOptions(0.1))},
           AdamOptions(0.01));
  for (Tensor& p : group0) p.mutable_grad() = ones_like(p);
  b.mutable_grad() = ones_like(b);
  const std::vector<float> b0 = b.cpu().to_vector<float>();
  const int64_t before = cuda_kernels::optim_launch_count();
  opt.step();
  // Group 0: float32, float64 and float16 on the device (the CPU parameter needs no launch);
  // group 1: one more.
  EXPECT_EQ(cuda_kernels::optim_launch_count() - before, 4);
  // Adam's first step moves every element by its group's lr against the gradient.
  const std::vector<float> b1 = b.cpu().to_vector<float>();
  for (size_t i = 0; i < b0.size(); ++i) EXPECT_NEAR(b1[i], b0[i] - 0.1f, 1e-5);
  EXPECT_EQ(opt.state(b)["exp_avg"].device(), kGpu);
  EXPECT_NEAR(opt.state(b)["exp_avg"].cpu().to_vector<float>()[0], 0.1f, 1e-6);
  EXPECT_EQ(opt.state(cpu_param)["exp_avg"].device(), Device("cpu"));
}

TEST(OptimCuda, GradOnAnotherDeviceIsAnError) {
  Tensor p = randn({3}).to(kGpu).requires_grad_();
  p.mutable_grad() = ones({3});
  SGD opt({p}, SGDOptions(0.1));
  try {
    opt.step();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "[SGD] the gradient of a parameter is on cpu but the parameter is on cuda:0");
  }
}

TEST(OptimCuda, StateDictMovesStateToTheParameterDevice) {
  std::vector<Tensor> cpu = {randn({10}).requires_grad_()};
  std::vector<Tensor> gpu = {cpu[0].detach().to(kGpu).requires_grad_()};
  Adam a(cpu, AdamOptions(0.01));
  Adam b(gpu, AdamOptions(0.01));
  Tensor g = randn({10});
  cpu[0].mutable_grad() = g;
  a.step();
  {
    NoGradGuard no_grad;
    gpu[0].copy_(cpu[0]);  // as a checkpoint restores the model
  }
  b.load_state_dict(a.state_dict());
  EXPECT_EQ(b.state(gpu[0])["exp_avg"].device(), kGpu);
  EXPECT_TRUE(b.state(gpu[0])["step"].is_cpu());
  cpu[0].mutable_grad() = g;
  gpu[0].mutable_grad() = g.to(kGpu);
  a.step();
  b.step();
  EXPECT_EQ(bytes_of(cpu[0]), bytes_of(gpu[0])) << "after one more step";
}

TEST(OptimCuda, ClipGradNormOnDevice) {
  Tensor a = zeros({2}).to(kGpu).requires_grad_();
  Tensor b = zeros({1}).to(kGpu).requires_grad_();
  a.mutable_grad() = tensor({3.0f, 4.0f}).to(kGpu);
  b.mutable_grad() = tensor({12.0f}).to(kGpu);
  const Tensor total = nn::utils::clip_grad_norm_({a, b}, 6.5);
  EXPECT_EQ(total.device(), kGpu);
  EXPECT_NEAR(total.item<float>(), 13.0f, 1e-5);
  EXPECT_NEAR(b.grad().cpu().item<float>(), 12 * 6.5 / (13 + 1e-6), 1e-5);
  nn::utils::clip_grad_value_({a}, 1.0);
  EXPECT_EQ(a.grad().cpu().to_vector<float>(), (std::vector<float>{1.0f, 1.0f}));
}
