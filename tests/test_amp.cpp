// amp::GradScaler: the scale sequence of scripted runs with inf/NaN gradients equals PyTorch's
// (tests/fixtures/pytorch/make_grad_scaler_golden.py), skipped steps leave parameters and
// optimizer state untouched, state dicts round-trip, and misuse raises. Built twice: on the CPU
// and (EMBER_AMP_CUDA) on the emulated GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "ember/ember.h"

#ifdef EMBER_AMP_CUDA
#include "backend/cuda/amp_kernels.h"
#endif

namespace ember {
namespace {

#ifdef EMBER_AMP_CUDA
const Device kDevice(kCUDA, 0);
#else
const Device kDevice(kCPU);
#endif

amp::GradScalerOptions options() { return amp::GradScalerOptions().device(kDevice.type()); }

Tensor param_from(const Tensor& host) {
  return host.to(kDevice, false, true).detach().requires_grad_(true);
}

// Runs the loss (p * x).sum() through scale / backward / step / update.
bool scaled_step(amp::GradScaler& scaler, optim::Optimizer& opt, const Tensor& p, const Tensor& x) {
  opt.zero_grad();
  scaler.scale((p * x.to(kDevice)).sum()).backward();
  const bool stepped = scaler.step(opt);
  scaler.update();
  return stepped;
}

Tensor vec(std::vector<double> v) { return tensor(v, Shape{static_cast<int64_t>(v.size())}); }

// ---- against PyTorch ----------------------------------------------------------------------------

void check_run(const std::string& run, amp::GradScalerOptions o,
               const std::function<std::unique_ptr<optim::Optimizer>(Tensor)>& make_opt) {
  const auto golden =
      io::load_safetensors(std::string(EMBER_FIXTURES_DIR) + "/pytorch/grad_scaler.safetensors");
  Tensor p = param_from(golden.at(run + ".param0"));
  auto opt = make_opt(p);
  amp::GradScaler scaler(o);
  const Tensor xs = golden.at(run + ".x");
  const auto scales = golden.at(run + ".scale").to_vector<double>();
  const auto trackers = golden.at(run + ".tracker").to_vector<int64_t>();
  const auto stepped = golden.at(run + ".stepped").to_vector<int64_t>();
  const Tensor params = golden.at(run + ".param");
  for (int64_t i = 0; i < xs.size(0); ++i) {
    const bool did = scaled_step(scaler, *opt, p, xs.select(0, i));
    EXPECT_EQ(did, stepped[i] != 0) << run << " step " << i;
    EXPECT_EQ(scaler.get_scale(), scales[i]) << run << " step " << i;  // exact, as float32
    EXPECT_EQ(scaler.get_growth_tracker(), trackers[i]) << run << " step " << i;
    const auto got = p.detach().to(Device(kCPU)).to_vector<float>();
    const auto want = params.select(0, i).to_vector<float>();
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_NEAR(got[k], want[k], 1e-5 * (1 + std::fabs(want[k]))) << run << " step " << i;
    }
  }
}

TEST(GradScaler, ScaleSequenceMatchesPyTorchSGD) {
  check_run("a", options().init_scale(1024).growth_factor(2).backoff_factor(0.5).growth_interval(3),
            [](Tensor p) {
              return std::make_unique<optim::SGD>(std::vector<Tensor>{p},
                                                  optim::SGDOptions(0.01).momentum(0.9));
            });
}

TEST(GradScaler, ScaleSequenceMatchesPyTorchAdamBelowOne) {
  testing::internal::CaptureStderr();
  check_run("b", options().growth_factor(3).backoff_factor(0.3).growth_interval(2), [](Tensor p) {
    return std::make_unique<optim::Adam>(std::vector<Tensor>{p}, optim::AdamOptions(0.01));
  });
  const std::string err = testing::internal::GetCapturedStderr();
  // The scale crosses below 1 once in this run: one warning.
  const std::string needle = "below 1";
  ASSERT_NE(err.find(needle), std::string::npos) << err;
  EXPECT_EQ(err.find(needle, err.find(needle) + 1), std::string::npos) << err;
}

// ---- skipped steps ------------------------------------------------------------------------------

void expect_same_state(const optim::OptimizerStateDict& a, const optim::OptimizerStateDict& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, t] : a) {
    const Tensor* o = b.find(key);
    ASSERT_NE(o, nullptr) << key;
    EXPECT_TRUE(equal(t.to(Device(kCPU)), o->to(Device(kCPU)))) << key;
  }
}

template <class Opt, class Options>
void skipped_step_keeps_state(Options o) {
  Tensor p = param_from(vec({0.5, -1.0, 2.0}));
  Opt opt(std::vector<Tensor>{p}, o);
  amp::GradScaler scaler(options().init_scale(256));
  EXPECT_TRUE(scaled_step(scaler, opt, p, vec({1, 2, 3})));  // builds momentum / moments
  const Tensor before = p.detach().clone();
  const auto state = opt.state_dict();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(scaled_step(scaler, opt, p, vec({1, inf, 3})));
  EXPECT_FALSE(scaled_step(scaler, opt, p, vec({std::nan(""), 1, 3})));
  EXPECT_TRUE(equal(before, p.detach()));
  expect_same_state(state, opt.state_dict());
  EXPECT_EQ(scaler.get_scale(), 64.0);
  EXPECT_TRUE(scaled_step(scaler, opt, p, vec({1, 2, 3})));
  EXPECT_FALSE(equal(before, p.detach()));
}

TEST(GradScaler, SkippedStepLeavesSGDMomentumUntouched) {
  skipped_step_keeps_state<optim::SGD>(optim::SGDOptions(0.1).momentum(0.9));
}

TEST(GradScaler, SkippedStepLeavesAdamMomentsAndStepUntouched) {
  skipped_step_keeps_state<optim::Adam>(optim::AdamOptions(0.1));
}

TEST(GradScaler, UnscaleDividesGradientsByTheScale) {
  Tensor p = param_from(vec({1, 2}));
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  amp::GradScaler scaler(options().init_scale(8));
  scaler.scale((p * vec({3, -5}).to(kDevice)).sum()).backward();
  EXPECT_EQ(p.grad().to(Device(kCPU)).to_vector<float>(), (std::vector<float>{24, -40}));
  scaler.unscale_(opt);
  EXPECT_EQ(p.grad().to(Device(kCPU)).to_vector<float>(), (std::vector<float>{3, -5}));
  EXPECT_TRUE(scaler.step(opt));
  scaler.update();
}

// ---- state dict ---------------------------------------------------------------------------------

TEST(GradScaler, StateDictRoundTrip) {
  Tensor p = param_from(vec({1, 2}));
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  amp::GradScaler a(
      options().init_scale(32).growth_factor(4).backoff_factor(0.25).growth_interval(3));
  const double inf = std::numeric_limits<double>::infinity();
  scaled_step(a, opt, p, vec({1, 1}));
  scaled_step(a, opt, p, vec({inf, 1}));
  scaled_step(a, opt, p, vec({1, 1}));
  const auto sd = a.state_dict();
  EXPECT_EQ(sd.at("scale").item<double>(), 8.0);
  EXPECT_EQ(sd.at("_growth_tracker").item<int64_t>(), 1);
  EXPECT_EQ(sd.at("growth_interval").item<int64_t>(), 3);

  amp::GradScaler b(options());
  b.load_state_dict(sd);
  EXPECT_EQ(b.get_scale(), 8.0);
  EXPECT_EQ(b.get_growth_tracker(), 1);
  EXPECT_EQ(b.get_growth_factor(), 4.0);
  EXPECT_EQ(b.get_backoff_factor(), 0.25);
  EXPECT_EQ(b.get_growth_interval(), 3);
  // Both continue identically: two clean steps reach the growth interval.
  Tensor q = param_from(vec({1, 2}));
  optim::SGD opt_b(std::vector<Tensor>{q}, optim::SGDOptions(0.1));
  for (int i = 0; i < 3; ++i) {
    scaled_step(a, opt, p, vec({1, 1}));
    scaled_step(b, opt_b, q, vec({1, 1}));
    EXPECT_EQ(a.get_scale(), b.get_scale()) << i;
    EXPECT_EQ(a.get_growth_tracker(), b.get_growth_tracker()) << i;
  }
  EXPECT_EQ(b.get_scale(), 32.0);
}

TEST(GradScaler, LoadStateDictRefusesBadInput) {
  amp::GradScaler s(options());
  EXPECT_THROW(
      {
        try {
          s.load_state_dict({});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("The source state dict is empty"),
                    std::string::npos);
          throw;
        }
      },
      Error);
  amp::GradScaler full_scaler(options());
  auto sd = full_scaler.state_dict();
  sd.erase("_growth_tracker");
  try {
    s.load_state_dict(sd);
    FAIL() << "missing entry accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'_growth_tracker'"), std::string::npos) << e.what();
  }
  sd = full_scaler.state_dict();
  sd.insert_or_assign("scale", scalar_tensor(-1.0, kFloat64));
  EXPECT_THROW(s.load_state_dict(sd), Error);
  EXPECT_EQ(s.get_scale(), 65536.0);  // nothing changed
}

TEST(GradScaler, DisabledScalerPassesThrough) {
  Tensor p = param_from(vec({1, 2}));
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.5));
  amp::GradScaler s(options().enabled(false));
  const Tensor loss = (p * vec({1, 1}).to(kDevice)).sum();
  EXPECT_TRUE(s.scale(loss).is_same(loss));
  loss.backward();
  EXPECT_TRUE(s.step(opt));
  s.update();
  EXPECT_EQ(s.get_scale(), 1.0);
  EXPECT_EQ(s.state_dict().size(), 0u);
  EXPECT_EQ(p.detach().to(Device(kCPU)).to_vector<float>(), (std::vector<float>{0.5f, 1.5f}));
}

// ---- errors -------------------------------------------------------------------------------------

template <class Fn>
void expect_error(Fn fn, const std::string& text) {
  try {
    fn();
    FAIL() << "no error; expected: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(GradScaler, MisuseRaisesPyTorchsErrors) {
  Tensor p = param_from(vec({1, 2}));
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  amp::GradScaler s(options());
  expect_error([&] { s.step(opt); }, "Attempted step but _scale is None");
  expect_error([&] { s.unscale_(opt); }, "Attempted unscale_ but _scale is None");
  expect_error([&] { s.update(); }, "Attempted update but _scale is None");

  s.scale((p * vec({1, 1}).to(kDevice)).sum()).backward();
  expect_error([&] { s.update(); }, "No inf checks were recorded prior to update.");
  s.unscale_(opt);
  expect_error([&] { s.unscale_(opt); },
               "unscale_() has already been called on this optimizer since the last update().");
  s.step(opt);
  expect_error([&] { s.step(opt); }, "step() has already been called since the last update().");
  expect_error([&] { s.unscale_(opt); }, "unscale_() is being called after step().");
  s.update();
  // The next iteration forgot scale(): its gradients are not scaled.
  expect_error([&] { s.step(opt); }, "step() called without scaler.scale(loss)");

  // An optimizer whose parameters the scaled loss never reached.
  Tensor other = param_from(vec({3}));
  optim::SGD unseen(std::vector<Tensor>{other}, optim::SGDOptions(0.1));
  s.scale((p * vec({1, 1}).to(kDevice)).sum()).backward();
  expect_error([&] { s.step(unseen); }, "No inf checks were recorded for this optimizer.");

  expect_error([] { amp::GradScaler bad(options().growth_factor(1.0)); },
               "The growth factor must be > 1.0.");
  expect_error([] { amp::GradScaler bad(options().backoff_factor(1.0)); },
               "The backoff factor must be < 1.0.");
}

TEST(GradScaler, RefusesFloat16Gradients) {
  Tensor p = vec({1, 2}).to(kDevice, kFloat16).requires_grad_(true);
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  amp::GradScaler s(options());
  s.scale(p.sum()).backward();
  expect_error([&] { s.step(opt); }, "Attempting to unscale FP16 gradients.");
}

// ---- guardrails ---------------------------------------------------------------------------------

TEST(GradScaler, ClippingScaledGradientsIsAnError) {
  Tensor p = param_from(vec({1, 2}));
  Tensor untouched = param_from(vec({5}));
  optim::SGD opt(std::vector<Tensor>{p}, optim::SGDOptions(0.1));
  amp::GradScaler s(options().init_scale(1024));
  for (int iter = 0; iter < 2; ++iter) {
    opt.zero_grad();
    s.scale((p * vec({3, 4}).to(kDevice)).sum()).backward();
    expect_error([&] { nn::utils::clip_grad_norm_({p}, 1.0); }, "call scaler.unscale_(optimizer)");
    expect_error([&] { nn::utils::clip_grad_value_({p}, 1.0); }, "[clip_grad_value_]");
    s.unscale_(opt);
    const Tensor total = nn::utils::clip_grad_norm_({p}, 1.0);
    EXPECT_NEAR(total.item<double>(), 5.0, 1e-5);  // the true norm, not 1024 times it
    EXPECT_TRUE(s.step(opt));
    s.update();
  }
  // Gradients the scaled loss did not reach are free to clip.
  (untouched * 2).sum().backward();
  s.scale((p * vec({3, 4}).to(kDevice)).sum()).backward();
  EXPECT_NO_THROW(nn::utils::clip_grad_norm_({untouched}, 1.0));
}

TEST(GradScaler, NamesTheFirstOverflowingParameter) {
  Tensor w = param_from(vec({1, 2}));
  Tensor b = param_from(vec({3}));
  optim::SGD opt(std::vector<Tensor>{w, b}, optim::SGDOptions(0.1));
  amp::GradScaler s(options());
  auto run = [&](double bx) {
    opt.zero_grad();
    s.scale((w * vec({1, 1}).to(kDevice)).sum() + (b * vec({bx}).to(kDevice)).sum()).backward();
    const bool stepped = s.step(opt);
    s.update();
    return stepped;
  };
  EXPECT_TRUE(run(1.0));
  EXPECT_FALSE(s.last_overflow_parameter().has_value());
  EXPECT_FALSE(run(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(s.last_overflow_parameter().value_or(""), "param group 0, index 1");
  nn::NamedTensors names;
  names.insert("encoder.weight", w);
  names.insert("head.bias", b);
  s.set_parameter_names(names);
  EXPECT_FALSE(run(std::nan("")));
  EXPECT_EQ(s.last_overflow_parameter().value_or(""), "head.bias");
}

// ---- bf16 autocast + GradScaler training against PyTorch
// ------------------------------------------

nn::Sequential build(const std::string& model) {
  if (model == "mlp") {
    return nn::Sequential(nn::Flatten(), nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10));
  }
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::ReLU(),
      nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(1)),
      nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), nn::Linear(8 * 3 * 3, 10));
}

// The 20 steps of make_training_golden.py's runs (SGD, momentum 0.9) under bfloat16 autocast with
// a GradScaler (tests/fixtures/pytorch/make_amp_training_golden.py).
void expect_pytorch_amp_losses(const std::string& name) {
  const std::string dir = std::string(EMBER_FIXTURES_DIR) + "/pytorch/";
  const auto data = io::load_safetensors(dir + name + ".safetensors");
  const auto golden = io::load_safetensors(dir + "amp_training.safetensors");
  nn::Sequential model = build(name);
  nn::StateDict initial;
  for (const auto& [key, t] : model->state_dict()) initial.insert(key, data.at(key));
  model->load_state_dict(initial);
  model->to(kDevice);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  amp::GradScaler scaler(options().init_scale(65536).growth_interval(4));
  const Tensor inputs = data.at("inputs").to(kDevice);
  const Tensor targets = data.at("targets").to(kDevice);
  const auto losses = golden.at(name + ".loss").to_vector<float>();
  const auto scales = golden.at(name + ".scale").to_vector<double>();
  // Both round the same float32 values to bfloat16 and accumulate in float32, so the losses agree
  // to float32 rounding (measured: 2.4e-7 for the MLP, 4.8e-7 for the CNN on the emulated GPU),
  // except the CNN on the CPU: ember's CPU convolution (im2col + GEMM) rounds its bfloat16
  // operands at other points than PyTorch's oneDNN convolution, which moves a loss by up to
  // 0.0038 over the 20 steps. Either bound is below the gap between PyTorch's bfloat16 and float32
  // runs (0.0012 for the MLP, 0.012 for the CNN), so a run that ignored autocast would fail.
  const double tolerance = name == "cnn" && kDevice.is_cpu() ? 5e-3 : 2e-5;
  for (int64_t i = 0; i < inputs.size(0); ++i) {
    opt.zero_grad();
    Tensor loss;
    {
      amp::autocast guard(kDevice.type(), kBFloat16);
      loss =
          nn::functional::cross_entropy(model->forward(inputs.select(0, i)), targets.select(0, i));
    }
    EXPECT_EQ(loss.dtype(), kFloat32);
    scaler.scale(loss).backward();
    EXPECT_TRUE(scaler.step(opt));
    scaler.update();
    const float want = losses[static_cast<size_t>(i)];
    EXPECT_NEAR(loss.item<float>(), want, tolerance)
        << name << " step " << i << " on " << kDevice.str();
    EXPECT_EQ(scaler.get_scale(), scales[static_cast<size_t>(i)]) << name << " step " << i;
  }
}

TEST(GradScalerTraining, MlpBf16AutocastMatchesPyTorch) { expect_pytorch_amp_losses("mlp"); }
TEST(GradScalerTraining, CnnBf16AutocastMatchesPyTorch) { expect_pytorch_amp_losses("cnn"); }

#ifdef EMBER_AMP_CUDA
TEST(GradScaler, UnscaleIsOneLaunchPerDtype) {
  TensorList params;
  for (int i = 0; i < 3; ++i) params.push_back(param_from(vec({1, 2, 3})));
  params.push_back(vec({1, 2}).to(kDevice, kBFloat16).requires_grad_(true));
  optim::SGD opt(params, optim::SGDOptions(0.1));
  amp::GradScaler s(options());
  Tensor loss = params[0].sum();
  for (size_t i = 1; i < params.size(); ++i) loss = loss + params[i].sum().to(kFloat32);
  s.scale(loss).backward();
  const int64_t before = cuda_kernels::amp_unscale_launch_count();
  s.unscale_(opt);
  EXPECT_EQ(cuda_kernels::amp_unscale_launch_count() - before, 2);
  EXPECT_TRUE(s.step(opt));
  s.update();
}
#endif

}  // namespace
}  // namespace ember
