// CUDA graphs on the emulated device: a captured training step (dropout, SGD with momentum)
// replays bit for bit like eager steps; the private pool's memory, shared pools, random ops that
// advance per replay, and every operation a capture refuses, by name.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

const Device kGpu("cuda:0");
namespace F = nn::functional;

// ---- a whole training step ---------------------------------------------------------------------

struct Batch {
  Tensor x, y;
};

std::vector<Batch> make_batches(int n, const Shape& x_shape) {
  Generator g(Device(kCPU), 99);
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) out.push_back({randn(x_shape, g), randint(0, 4, {x_shape[0]}, g)});
  return out;
}

nn::Sequential make_mlp() {
  manual_seed(1);
  nn::Sequential net(nn::Linear(8, 16), nn::ReLU(), nn::Dropout(0.25), nn::Linear(16, 4));
  net->to(kGpu);
  return net;
}

nn::Sequential make_cnn() {
  manual_seed(2);
  nn::Sequential net(nn::Conv2d(1, 3, 3), nn::ReLU(), nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                     nn::Flatten(), nn::Dropout(0.2), nn::Linear(27, 4));
  net->to(kGpu);
  return net;
}

struct Trace {
  std::vector<float> losses;
  std::vector<std::vector<float>> params, momenta;
};

void snapshot(Trace& t, nn::Sequential& net, optim::SGD& opt) {
  t.params.clear();
  t.momenta.clear();
  for (const Tensor& p : net->parameters()) {
    t.params.push_back(fvec(p));
    t.momenta.push_back(fvec(opt.state(p)["momentum_buffer"]));
  }
}

constexpr int kSteps = 20, kWarmup = 3;

Trace train_eager(const std::vector<Batch>& data, nn::Sequential (*make)()) {
  nn::Sequential net = make();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  manual_seed(7);
  Trace t;
  for (int k = 0; k < kSteps; ++k) {
    opt.zero_grad();
    Tensor loss = F::cross_entropy(net->forward(data[k].x.to(kGpu)), data[k].y.to(kGpu));
    loss.backward();
    opt.step();
    t.losses.push_back(loss.item<float>());
  }
  snapshot(t, net, opt);
  return t;
}

// Warm-up steps run eagerly (they create the momentum buffers); one step is captured and the rest
// are replays reading static input tensors refilled before each replay.
Trace train_graphed(const std::vector<Batch>& data, nn::Sequential (*make)()) {
  nn::Sequential net = make();
  optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  manual_seed(7);
  Trace t;
  Tensor static_x = empty(data[0].x.sizes(), TensorOptions().device(kGpu));
  Tensor static_y = empty(data[0].y.sizes(), TensorOptions(kInt64).device(kGpu));
  auto step = [&] {
    Tensor loss = F::cross_entropy(net->forward(static_x), static_y);
    loss.backward();
    opt.step();
    return loss;
  };
  for (int k = 0; k < kWarmup; ++k) {
    static_x.copy_(data[k].x);
    static_y.copy_(data[k].y);
    opt.zero_grad();
    t.losses.push_back(step().item<float>());
  }
  cuda::CUDAGraph g;
  opt.zero_grad();  // the captured backward allocates the gradients in the graph's pool
  Tensor static_loss;
  {
    cuda::graph capture(g);
    static_loss = step();
  }
  EXPECT_TRUE(g.has_graph());
  for (int k = kWarmup; k < kSteps; ++k) {
    static_x.copy_(data[k].x);
    static_y.copy_(data[k].y);
    g.replay();
    t.losses.push_back(static_loss.item<float>());
  }
  snapshot(t, net, opt);
  return t;
}

void expect_replay_matches_eager(const Shape& x_shape, nn::Sequential (*make)()) {
  const auto data = make_batches(kSteps, x_shape);
  const Trace eager = train_eager(data, make);
  const Trace graphed = train_graphed(data, make);
  ASSERT_EQ(eager.losses.size(), graphed.losses.size());
  for (int k = 0; k < kSteps; ++k) EXPECT_EQ(eager.losses[k], graphed.losses[k]) << "step " << k;
  EXPECT_NE(eager.losses.front(), eager.losses.back());
  ASSERT_EQ(eager.params.size(), graphed.params.size());
  for (size_t i = 0; i < eager.params.size(); ++i) {
    EXPECT_EQ(eager.params[i], graphed.params[i]) << "parameter " << i;
    EXPECT_EQ(eager.momenta[i], graphed.momenta[i]) << "momentum buffer " << i;
  }
}

TEST(CudaGraphs, MlpTrainingStepReplaysLikeEagerBitForBit) {
  expect_replay_matches_eager({4, 8}, make_mlp);
}

TEST(CudaGraphs, CnnTrainingStepReplaysLikeEagerBitForBit) {
  expect_replay_matches_eager({2, 1, 8, 8}, make_cnn);
}

// ---- random ops --------------------------------------------------------------------------------

TEST(CudaGraphs, RandomOpsDrawFreshNumbersOnEachReplay) {
  manual_seed(3);
  std::vector<std::vector<float>> eager;
  for (int k = 0; k < 3; ++k) {
    Tensor u = rand({40}, TensorOptions().device(kGpu));
    Tensor d = F::dropout(ones({40}, TensorOptions().device(kGpu)), 0.5);
    eager.push_back(fvec(u + d));
  }
  manual_seed(3);
  cuda::CUDAGraph g;
  Tensor out;
  {
    cuda::graph capture(g);
    Tensor u = rand({40}, TensorOptions().device(kGpu));
    Tensor d = F::dropout(ones({40}, TensorOptions().device(kGpu)), 0.5);
    out = u + d;
  }
  // The capture drew nothing: the generator is where it was.
  EXPECT_EQ(default_generator(kGpu).get_state().offset, 0u);
  for (int k = 0; k < 3; ++k) {
    g.replay();
    EXPECT_EQ(fvec(out), eager[k]) << "replay " << k;
  }
  EXPECT_NE(eager[0], eager[1]);
  EXPECT_EQ(default_generator(kGpu).get_state().offset, 6u);
  // A generator of its own cannot feed a graph: its offsets do not advance on replay.
  Generator mine(kGpu, 5);
  cuda::CUDAGraph h;
  expect_error(
      [&] {
        cuda::graph capture(h);
        rand({8}, mine, TensorOptions().device(kGpu));
      },
      "[random] a random op inside a CUDA graph capture must draw from the default CUDA generator");
  EXPECT_FALSE(h.has_graph());
}

// ---- memory ------------------------------------------------------------------------------------

TEST(CudaGraphs, PoolMemoryLivesWithTheGraphAndReturnsOnReset) {
  cuda::empty_cache();
  const size_t allocated0 = cuda::memory_allocated(), reserved0 = cuda::memory_reserved();
  Tensor x = full({256}, 2.0, TensorOptions().device(kGpu));
  cuda::CUDAGraph g;
  Tensor y;
  {
    cuda::graph capture(g);
    Tensor t = x * 3.0;  // a temporary: freed inside the capture, its block stays in the pool
    y = t + 1.0;
  }
  EXPECT_NE(g.pool(), 0u);
  const size_t graph_reserved = cuda::memory_reserved();
  EXPECT_GT(graph_reserved, reserved0 + x.nbytes());
  EXPECT_EQ(cuda::memory_allocated(), allocated0 + 2 * 1024);  // x and y, 1 KiB blocks
  g.replay();
  EXPECT_EQ(fvec(y), std::vector<float>(256, 7.0f));
  // Eager code never receives the pool's memory while the graph lives, even once y is dropped.
  void* ys = y.data_ptr();
  y = Tensor();
  std::vector<Tensor> eager;
  for (int i = 0; i < 4; ++i) {
    eager.push_back(empty({256}, TensorOptions().device(kGpu)));
    EXPECT_NE(eager.back().data_ptr(), ys);
  }
  eager.clear();
  cuda::empty_cache();  // the graph's pool is not a cache: it survives
  EXPECT_GE(cuda::memory_reserved(), graph_reserved - x.nbytes());
  g.replay();  // still valid: writes the (now unreferenced) pool block
  g.reset();
  EXPECT_FALSE(g.has_graph());
  EXPECT_EQ(g.pool(), 0u);
  x = Tensor();
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_allocated(), allocated0);
  EXPECT_EQ(cuda::memory_reserved(), reserved0);
}

TEST(CudaGraphs, GraphsShareAPool) {
  cuda::empty_cache();
  const size_t reserved0 = cuda::memory_reserved();
  const cuda::MempoolId pool = cuda::graph_pool_handle();
  Tensor x = full({64}, 1.0, TensorOptions().device(kGpu));
  cuda::CUDAGraph g1, g2;
  Tensor a, b;
  {
    cuda::graph capture(g1, pool);
    a = x + 1.0;
  }
  const size_t reserved1 = cuda::memory_reserved();
  {
    cuda::graph capture(g2, pool);
    b = a * 10.0;
  }
  EXPECT_EQ(g1.pool(), pool);
  EXPECT_EQ(g2.pool(), pool);
  EXPECT_EQ(cuda::memory_reserved(), reserved1);  // g2 fitted into the segment g1 started
  x.fill_(4.0);
  g1.replay();
  g2.replay();
  EXPECT_EQ(fvec(b), std::vector<float>(64, 50.0f));
  g1.reset();  // g2 still holds the pool
  x.fill_(0.0);
  g2.replay();
  EXPECT_EQ(fvec(b), std::vector<float>(64, 50.0f));  // a was left at 5
  g2.reset();
  a = b = x = Tensor();
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_reserved(), reserved0);
}

// ---- what a capture refuses
// ----------------------------------------------------------------------

// Each call inside a capture raises a named ember error; the capture is abandoned cleanly (the
// stream leaves capture mode, the pool is released) and the next capture works.
TEST(CudaGraphs, IllegalOperationsAreNamed) {
  Tensor x = ones({8}, TensorOptions().device(kGpu));
  Tensor host = ones({8});
  struct Case {
    const char* name;
    std::function<void()> call;
    const char* text;
  };
  const std::vector<Case> cases = {
      {"item", [&] { (x.sum()).item<float>(); }, "[item] cannot run while CUDA stream"},
      {"to_vector", [&] { x.to_vector<float>(); }, "[to_vector] cannot run while CUDA stream"},
      {"to cpu", [&] { x.to(Device(kCPU)); }, "[to] cannot run while CUDA stream"},
      {"cpu()", [&] { x.cpu(); }, "read them after replay()"},
      {"pageable upload", [&] { x.copy_(host); }, "[copy_] cannot run while CUDA stream"},
      {"pageable to()", [&] { host.to(kGpu); }, "fill the graph's static input tensors"},
      {"synchronize", [&] { cuda::synchronize(); }, "[synchronize] cannot run while CUDA stream"},
      {"stream sync", [&] { cuda::current_stream().synchronize(); }, "[Stream.synchronize]"},
      {"empty_cache", [&] { cuda::empty_cache(); }, "[empty_cache] cannot run while CUDA stream"},
  };
  cuda::empty_cache();
  const size_t reserved0 = cuda::memory_reserved();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    cuda::CUDAGraph g;
    expect_error(
        [&] {
          cuda::graph capture(g);
          Tensor before = x * 2.0;  // allocates in the pool
          c.call();
        },
        c.text);
    EXPECT_FALSE(g.has_graph());
    EXPECT_FALSE(cuda::is_current_stream_capturing());
    EXPECT_EQ(cuda::current_stream(), cuda::default_stream());
    EXPECT_EQ(cuda::memory_reserved(), reserved0);  // the pool is gone
  }
  // Nothing is poisoned: a capture right after works.
  cuda::CUDAGraph g;
  Tensor y;
  {
    cuda::graph capture(g);
    EXPECT_TRUE(cuda::is_current_stream_capturing());
    y = x * 5.0;
  }
  EXPECT_FALSE(cuda::is_current_stream_capturing());
  g.replay();
  EXPECT_EQ(fvec(y), std::vector<float>(8, 5.0f));
}

TEST(CudaGraphs, MisuseIsNamed) {
  Tensor x = ones({8}, TensorOptions().device(kGpu));
  cuda::CUDAGraph g;
  expect_error([&] { g.replay(); }, "[CUDAGraph.replay] the graph holds no capture");
  // The legacy default stream cannot be captured.
  expect_error([&] { g.capture_begin(); },
               "[CUDAGraph.capture_begin] cannot capture on the default stream");
  {
    cuda::StreamGuard side(cuda::get_stream_from_pool());
    g.capture_begin();
    expect_error([&] { g.replay(); }, "[CUDAGraph.replay] called before capture_end()");
    cuda::CUDAGraph inner;
    expect_error([&] { inner.capture_begin(); }, "captures cannot nest on one stream");
    expect_error([&] { g.capture_begin(); }, "this graph is already capturing");
    Tensor y = x + 1.0;
    g.capture_end();
    expect_error([&] { g.capture_begin(); }, "call reset() before capturing again");
  }
  g.replay();
  g.reset();
  // Relaxed mode permits CUDA's unsafe calls but still not a host sync on the capturing stream.
  cuda::CUDAGraph r;
  expect_error(
      [&] {
        cuda::graph capture(r, {}, nullptr, cuda::CaptureErrorMode::Relaxed);
        x.sum().item<float>();
      },
      "[item] cannot run while CUDA stream");
}

TEST(CudaGraphs, OptimizersWithHostStepCountsRefuseCapture) {
  Tensor w = ones({4}, TensorOptions().device(kGpu)).requires_grad_();
  optim::Adam adam(std::vector<Tensor>{w}, optim::AdamOptions(0.01));
  w.mutable_grad() = ones({4}, TensorOptions().device(kGpu));
  adam.step();  // warm-up: the state exists
  cuda::CUDAGraph g;
  expect_error(
      [&] {
        cuda::graph capture(g);
        adam.step();
      },
      "[Adam.step] cannot be captured in a CUDA graph yet");
  EXPECT_FALSE(g.has_graph());
}

// A global-mode capture forbids host syncs on every thread; a thread-local one only on its own.
TEST(CudaGraphs, CaptureErrorModesReachOtherThreads) {
  Tensor x = ones({8}, TensorOptions().device(kGpu));
  for (auto mode : {cuda::CaptureErrorMode::Global, cuda::CaptureErrorMode::ThreadLocal}) {
    cuda::CUDAGraph g;
    std::string other;
    {
      cuda::graph capture(g, {}, nullptr, mode);
      Tensor y = x + 1.0;
      std::thread t([&] { other = error_of([&] { cuda::synchronize(); }); });
      t.join();
    }
    if (mode == cuda::CaptureErrorMode::Global) {
      EXPECT_NE(other.find("[synchronize] cannot run while CUDA stream"), std::string::npos)
          << other;
    } else {
      EXPECT_EQ(other, "");
    }
    EXPECT_TRUE(g.has_graph());
  }
}

}  // namespace
