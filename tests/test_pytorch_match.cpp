// ember trains like PyTorch: an MLP and a small CNN start from PyTorch's initial weights (read
// from safetensors) and take the same 20 batches; the per-step losses of SGD with momentum and
// of AdamW match PyTorch's (tests/fixtures/pytorch/make_training_golden.py made the files) within
// float32 tolerance. Built twice: on the CPU (test_pytorch_match) and on the emulated cuda:0
// (test_pytorch_match_sim, EMBER_MATCH_CUDA).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

#ifdef EMBER_MATCH_CUDA
const Device kDevice(kCUDA, 0);
#else
const Device kDevice(kCPU);
#endif

nn::Sequential build(const std::string& model) {
  if (model == "mlp") {
    return nn::Sequential(nn::Flatten(), nn::Linear(64, 32), nn::ReLU(), nn::Linear(32, 10));
  }
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::ReLU(),
      nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Conv2d(nn::Conv2dOptions(4, 8, 3).padding(1)),
      nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), nn::Linear(8 * 3 * 3, 10));
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name, const TensorList& p) {
  if (name == "sgd") {
    return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.05).momentum(0.9));
  }
  return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-3).weight_decay(0.01));
}

void expect_pytorch_losses(const std::string& model_name, const std::string& opt_name) {
  const std::string file =
      std::string(EMBER_FIXTURES_DIR) + "/pytorch/" + model_name + ".safetensors";
  const auto golden = io::load_safetensors(file);
  nn::Sequential model = build(model_name);
  nn::StateDict initial;
  for (const auto& [name, t] : model->state_dict()) initial.insert(name, golden[name]);
  model->load_state_dict(initial);
  model->to(kDevice);
  auto opt = make_optimizer(opt_name, model->parameters());
  const Tensor inputs = golden["inputs"].to(kDevice);
  const Tensor targets = golden["targets"].to(kDevice);
  const std::vector<float> expected = golden["loss." + opt_name].to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(expected.size()), inputs.size(0));
  for (int64_t i = 0; i < inputs.size(0); ++i) {
    opt->zero_grad();
    Tensor loss =
        nn::functional::cross_entropy(model->forward(inputs.select(0, i)), targets.select(0, i));
    loss.backward();
    opt->step();
    const float got = loss.item<float>();
    const float want = expected[static_cast<size_t>(i)];
    EXPECT_NEAR(got, want, 2e-5 + 2e-5 * std::fabs(want))
        << model_name << " " << opt_name << " step " << i << " on " << kDevice.str();
  }
}

}  // namespace

TEST(PyTorchMatch, MlpSgdMomentum) { expect_pytorch_losses("mlp", "sgd"); }
TEST(PyTorchMatch, MlpAdamW) { expect_pytorch_losses("mlp", "adamw"); }
TEST(PyTorchMatch, CnnSgdMomentum) { expect_pytorch_losses("cnn", "sgd"); }
TEST(PyTorchMatch, CnnAdamW) { expect_pytorch_losses("cnn", "adamw"); }
