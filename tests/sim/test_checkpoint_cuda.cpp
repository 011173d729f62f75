// Gradient checkpointing and safetensors on an emulated CUDA device: the memory checkpointing
// saves, replayed device random streams, and files written from and loaded onto the device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "ember/ember.h"

using namespace ember;

namespace {

const TensorOptions kCuda = TensorOptions().device(Device("cuda:0"));

void expect_identical(const Tensor& a, const Tensor& b, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  Tensor ca = a.cpu().contiguous(), cb = b.cpu().contiguous();
  EXPECT_EQ(std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()), 0);
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

}  // namespace

TEST(CheckpointCuda, ReplaysDeviceRandomOps) {
  manual_seed(0);
  Tensor x = randn({32, 16}, kCuda).requires_grad_();
  Tensor w = randn({16, 16}, kCuda).requires_grad_();
  auto fn = [&](const Tensor& in) {
    Tensor h = in.matmul(w).tanh();
    return h * bernoulli(full_like(h, 0.7)) + rand_like(h);
  };
  manual_seed(5);
  fn(x).pow(2).sum().backward();
  Tensor gx = x.grad().clone(), gw = w.grad().clone();
  Tensor after = rand({8}, kCuda);
  x.mutable_grad() = Tensor();
  w.mutable_grad() = Tensor();

  manual_seed(5);
  utils::checkpoint(fn, x).pow(2).sum().backward();
  expect_identical(x.grad(), gx, "dx");
  expect_identical(w.grad(), gw, "dw");
  expect_identical(rand({8}, kCuda), after, "cuda stream after backward");
}

// 36 tanh layers: plain autograd keeps every layer's output for backward; checkpointing in
// segments of 6 keeps only the 6 segment outputs, and recomputes one segment at a time.
TEST(CheckpointCuda, SavesMemoryOnADeepChain) {
  constexpr int kLayers = 36, kSegment = 6;
  const size_t kBytes = 128 * 128 * sizeof(float);
  manual_seed(1);
  Tensor x = randn({128, 128}, kCuda).requires_grad_();
  auto layers = [](int n) {
    return [n](const Tensor& in) {
      Tensor h = in;
      for (int i = 0; i < n; ++i) h = (h * 1.1).tanh();
      return h;
    };
  };
  struct Run {
    size_t after_forward, peak;
    Tensor grad;
  };
  auto run = [&](bool checkpointed) {
    x.mutable_grad() = Tensor();
    cuda::synchronize();
    const size_t base = cuda::memory_allocated();
    cuda::reset_peak_memory_stats();
    Run r{};
    {
      Tensor h = x;
      if (checkpointed) {
        for (int s = 0; s < kLayers; s += kSegment) h = utils::checkpoint(layers(kSegment), h);
      } else {
        h = layers(kLayers)(h);
      }
      Tensor loss = h.sum();
      r.after_forward = cuda::memory_allocated() - base;
      loss.backward();
    }
    r.peak = cuda::max_memory_allocated() - base;
    r.grad = x.grad().clone();
    return r;
  };
  const Run plain = run(false);
  const Run ck = run(true);
  expect_identical(ck.grad, plain.grad, "dx");
  // Plain: every layer's saved tanh output.
  EXPECT_GE(plain.after_forward, kLayers * kBytes);
  // Checkpointed: the segment outputs and the loss.
  EXPECT_LE(ck.after_forward, (kLayers / kSegment + 1) * kBytes + 4096);
  EXPECT_LT(ck.after_forward * 4, plain.after_forward);
  EXPECT_LT(ck.peak * 2, plain.peak) << "checkpointed peak " << ck.peak << ", plain " << plain.peak;
}

TEST(CheckpointCuda, SafetensorsFromAndToDevice) {
  const std::string fixture = std::string(EMBER_FIXTURES_DIR) + "/safetensors/tensors.safetensors";
  auto host = io::load_safetensors(fixture);
  auto dev = io::load_safetensors(fixture, Device("cuda:0"));
  ASSERT_EQ(dev.size(), host.size());
  OrderedDict<std::string, Tensor> back;
  for (const auto& [name, t] : dev) {
    EXPECT_TRUE(t.is_cuda()) << name;
    expect_identical(t, host[name], name.c_str());
    // Written from the device through a non-contiguous view where there is one.
    back.insert(name, t.dim() == 2 ? t.t().contiguous().t() : t);
  }
  const std::string out =
      testing::TempDir() + "ember_cuda_" + std::to_string(getpid()) + ".safetensors";
  io::save_safetensors(out, back, {{"format", "pt"}});
  EXPECT_EQ(read_bytes(out), read_bytes(fixture));
  unlink(out.c_str());
}

TEST(CheckpointCuda, CheckpointCarriesDeviceRngAndTensors) {
  manual_seed(9);
  (void)rand({4}, kCuda);
  io::Checkpoint c;
  c.put("model.", {{"w", randn({3, 3}, kCuda)}});
  c.put("rng.", io::capture_rng_state());
  ASSERT_TRUE(c.get("rng.").contains("cuda:0"));
  Tensor expected = rand({4}, kCuda);
  const std::string path = testing::TempDir() + "ember_cuda_" + std::to_string(getpid()) + ".ckpt";
  io::save_checkpoint(path, c);
  manual_seed(10);
  io::Checkpoint r = io::load_checkpoint(path, Device("cuda:0"));
  EXPECT_TRUE(r.get("model.")["w"].is_cuda());
  expect_identical(r.get("model.")["w"], c.get("model.")["w"], "w");
  io::restore_rng_state(r.get("rng."));
  expect_identical(rand({4}, kCuda), expected, "cuda stream");
  unlink(path.c_str());
}
