// GPT-2 from the model zoo on the CPU: shapes, weight tying, training on a fixed batch (the loss
// falls), sampling, self-describing checkpoints, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

#ifdef EMBER_GPT2_CUDA
const Device kDevice("cuda");
#else
const Device kDevice("cpu");
#endif

// The first AdamW steps from PyTorch's initial weights and batches (make_gpt2_golden.py) give
// PyTorch's losses. float32 on both sides: the sums run in another order (BLAS, the fused
// attention kernels), which moves a loss by ~1e-6 per step; 1e-4 leaves room for ten steps of
// that drift and still fails on any real difference (a wrong scale, mask or tie moves it by >1e-2).
TEST(GPT2, FirstLossesMatchPyTorch) {
  const std::string path = std::string(EMBER_FIXTURES_DIR) + "/pytorch/gpt2_tiny.safetensors";
  auto file = io::load_safetensors(path);
  auto made = models::make("gpt2-tiny", {{"n_embd", "32"}, {"context", "32"}});
  auto* model = dynamic_cast<models::GPT2Impl*>(made.get());
  ASSERT_NE(model, nullptr);
  nn::StateDict state;
  for (const auto& [key, value] : model->state_dict()) state.insert(key, file[key]);
  model->load_state_dict(state, true);
  model->to(kDevice);
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-3).weight_decay(0.1));
  Tensor inputs = file["inputs"], targets = file["targets"], golden = file["loss.adamw"];
  const int64_t steps = golden.size(0);
  for (int64_t i = 0; i < steps; ++i) {
    Tensor loss = model->loss(inputs.select(0, i).to(kDevice), targets.select(0, i).to(kDevice));
    opt.zero_grad();
    loss.backward();
    opt.step();
    EXPECT_NEAR(loss.item<float>(), golden.select(0, i).item<float>(), 1e-4) << "step " << i;
  }
  EXPECT_LT(golden.select(0, steps - 1).item<float>(),
            golden.select(0, 0).item<float>() - 0.3);  // it learns
}

#ifndef EMBER_GPT2_CUDA

models::GPT2 tiny() {
  manual_seed(0);
  return models::GPT2(models::gpt2_tiny_config());
}

Tensor tokens(int64_t B, int64_t T, int64_t vocab) {
  return randint(vocab, {B, T}, TensorOptions().dtype(kInt64));
}

TEST(GPT2, ConfigsMatchGPT2SmallAndTiny) {
  const models::GPT2Config c = models::gpt2_config();
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.context, 1024);
  EXPECT_EQ(c.vocab_size, 50304);
  EXPECT_EQ(models::gpt2_tiny_config().vocab_size, 256);
}

TEST(GPT2, ForwardShapeAndTiedWeights) {
  models::GPT2 model = tiny();
  Tensor logits = model(tokens(2, 9, 256));
  EXPECT_EQ(logits.sizes(), Shape({2, 9, 256}));
  // lm_head is wte: no separate output matrix among the parameters.
  const models::GPT2Config c = model->config;
  const int64_t per_block = 2 * 2 * c.n_embd + (3 * c.n_embd * c.n_embd + 3 * c.n_embd) +
                            (c.n_embd * c.n_embd + c.n_embd) +
                            (4 * c.n_embd * c.n_embd + 4 * c.n_embd) +
                            (4 * c.n_embd * c.n_embd + c.n_embd);
  EXPECT_EQ(model->num_parameters(),
            c.vocab_size * c.n_embd + c.context * c.n_embd + c.n_layer * per_block + 2 * c.n_embd);
  model->loss(tokens(2, 9, 256), tokens(2, 9, 256)).backward();
  EXPECT_TRUE(model->wte->weight.grad().defined());
}

TEST(GPT2, CausalPrefixesDoNotSeeTheFuture) {
  models::GPT2 model = tiny();
  model->eval();
  Tensor idx = tokens(1, 12, 256);
  Tensor full = model(idx).narrow(1, 0, 5);
  Tensor prefix = model(idx.narrow(1, 0, 5).contiguous());
  EXPECT_TRUE(allclose(full, prefix, 1e-5, 1e-5));
}

TEST(GPT2, LossFallsOnAFixedBatch) {
  models::GPT2 model = tiny();
  optim::AdamW opt(model->parameters(), optim::AdamWOptions(3e-3).weight_decay(0.0));
  Tensor x = tokens(4, 32, 256), y = tokens(4, 32, 256);
  double first = 0.0, last = 0.0;
  for (int step = 0; step < 15; ++step) {
    opt.zero_grad();
    Tensor loss = model->loss(x, y);
    loss.backward();
    opt.step();
    if (step == 0) first = loss.item<float>();
    last = loss.item<float>();
  }
  EXPECT_NEAR(first, std::log(256.0), 0.3);  // small initial weights: near-uniform predictions
  EXPECT_LT(last, first - 0.5);
}

TEST(GPT2, GenerateAppendsTokensAndIsSeeded) {
  models::GPT2 model = tiny();
  Tensor prompt = tokens(2, 3, 256);
  Tensor greedy = model->generate(prompt, 5, 0.0);
  EXPECT_EQ(greedy.sizes(), Shape({2, 8}));
  EXPECT_TRUE(equal(greedy.narrow(1, 0, 3), prompt));
  EXPECT_TRUE(model->is_training());  // restored
  Generator a(Device(kCPU), 7), b(Device(kCPU), 7);
  Tensor s1 = model->generate(prompt, 70, 0.8, 10, &a);  // longer than the context: a window
  Tensor s2 = model->generate(prompt, 70, 0.8, 10, &b);
  EXPECT_EQ(s1.sizes(), Shape({2, 73}));
  EXPECT_TRUE(equal(s1, s2));
  EXPECT_GE(s1.min().item<int64_t>(), 0);
  EXPECT_LT(s1.max().item<int64_t>(), 256);
}

TEST(GPT2, BadInputNamesTheModel) {
  models::GPT2 model = tiny();
  expect_error([&] { model(tokens(1, 65, 256)); }, "[GPT2] sequence length 65 is longer");
  expect_error(
      [&] {
        model(full({1, 4}, 256, TensorOptions().dtype(kInt64)));
      },
      "[GPT2] token id 256 is outside the vocabulary");
  expect_error(
      [&] {
        model(full({1, 4}, -1, TensorOptions().dtype(kInt64)));
      },
      "[GPT2] token id -1");
  expect_error([&] { model(zeros({1, 4})); }, "[GPT2] expected token ids");
  models::GPT2Config bad = models::gpt2_tiny_config();
  bad.n_head = 3;
  expect_error([&] { models::GPT2{bad}; }, "[GPT2] bad configuration");
}

TEST(ModelZoo, SaveLoadRebuildsTheArchitecture) {
  const std::string path = testing::TempDir() + "ember_zoo_gpt2.safetensors";
  manual_seed(1);
  auto model = models::make("gpt2-tiny", {{"n_layer", "1"}, {"context", "16"}});
  models::save(model, path, {{"note", "kept"}});
  EXPECT_EQ(io::load_safetensors_metadata(path).at("note"), "kept");
  auto loaded = models::load(path);
  auto* g = dynamic_cast<models::GPT2Impl*>(loaded.get());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->config.n_layer, 1);
  EXPECT_EQ(g->config.context, 16);
  auto a = model->state_dict();
  auto b = loaded->state_dict();
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, value] : a) EXPECT_TRUE(equal(value, b[key])) << key;

  const std::string cnn_path = testing::TempDir() + "ember_zoo_cnn.safetensors";
  auto cnn = models::make("fashion-cnn");
  models::save(cnn, cnn_path);
  auto cnn2 = models::load(cnn_path);
  EXPECT_EQ(models::model_name(*cnn2), "fashion-cnn");
  cnn2->eval();
  auto* seq = dynamic_cast<nn::SequentialImpl*>(cnn2.get());
  ASSERT_NE(seq, nullptr);
  EXPECT_EQ(seq->forward(zeros({2, 1, 28, 28})).sizes(), Shape({2, 10}));
  std::remove(path.c_str());
  std::remove(cnn_path.c_str());
}

TEST(ModelZoo, BadNamesAndFiles) {
  expect_error([] { models::make("gpt5"); }, "[models.make] unknown model 'gpt5'");
  expect_error([] { models::make("gpt2-tiny", {{"layers", "2"}}); }, "no config key 'layers'");
  expect_error([] { models::make("gpt2-tiny", {{"n_layer", "x"}}); }, "is not an integer");
  const std::string path = testing::TempDir() + "ember_zoo_plain.safetensors";
  io::save_safetensors(path, nn::Linear(2, 2)->state_dict());
  expect_error([&] { models::load(path); }, "[models.load]");
  expect_error([&] { models::save(nn::Linear(2, 2).ptr(), path); }, "[models.save]");
  std::remove(path.c_str());
}

#endif  // EMBER_GPT2_CUDA

}  // namespace
