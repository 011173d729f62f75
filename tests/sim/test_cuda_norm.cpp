// Normalisation, dropout and embedding on an emulated device: the dropout mask equals the CPU's for
// the same seed, running statistics update on the device, gradients match the CPU, and embedding
// indices out of range raise from the device check.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = ember::nn::functional;

namespace {

const Device kCpu("cpu"), kGpu("cuda:0");

}  // namespace

TEST(CudaNorm, DropoutMaskMatchesTheCpuForTheSameSeed) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    // 7 * 9 elements end mid Philox block; a transposed input exercises the contiguous copy.
    // 129 * 65 elements span several of the CPU generator's chunks and SIMD steps.
    for (Shape s : {Shape{9, 7}, Shape{129, 65}}) {
      const Tensor x = randn(s).to(dt).t();
      manual_seed(11);
      const Tensor a = F::dropout(x, 0.4, true);
      manual_seed(11);
      const Tensor b = F::dropout(x.to(kGpu), 0.4, true);
      EXPECT_EQ(b.device(), kGpu);
      EXPECT_EQ(bytes_of(a), bytes_of(b)) << dtype_name(dt);
      EXPECT_GT((a == 0).sum().item<int64_t>(), 0);
    }
  }
}

TEST(CudaNorm, BatchNormTrainsAndEvaluatesOnTheDevice) {
  manual_seed(12);
  nn::BatchNorm2d cpu_bn(3), gpu_bn(3);
  gpu_bn->to(kGpu);
  for (int i = 0; i < 3; ++i) {
    const Tensor x = randn({2, 3, 4, 5}) * 3.0 + 1.0;
    const Tensor xg = x.to(kGpu).requires_grad_(true);
    const Tensor xc = x.clone().requires_grad_(true);
    const Tensor yc = cpu_bn(xc), yg = gpu_bn(xg);
    expect_close(yg, yc, 1e-5);
    const Tensor w = randn({2, 3, 4, 5});
    (yc * w).sum().backward();
    (yg * w.to(kGpu)).sum().backward();
    expect_close(xg.grad(), xc.grad(), 1e-4);
  }
  expect_close(gpu_bn->running_mean, cpu_bn->running_mean, 1e-5);
  expect_close(gpu_bn->running_var, cpu_bn->running_var, 1e-5);
  expect_close(gpu_bn->weight.grad(), cpu_bn->weight.grad(), 1e-4);
  expect_close(gpu_bn->bias.grad(), cpu_bn->bias.grad(), 1e-4);
  EXPECT_EQ(gpu_bn->num_batches_tracked.item<int64_t>(), 3);
  cpu_bn->eval();
  gpu_bn->eval();
  const Tensor x = randn({2, 3, 4, 5});
  expect_close(gpu_bn(x.to(kGpu)), cpu_bn(x), 1e-5);
}

TEST(CudaNorm, BatchNorm1dColumnsAndHalfRunningStats) {
  manual_seed(13);
  // (N, C) with C over one tile of channels: the column kernel.
  const Tensor x = randn({40, 37}, TensorOptions(kFloat16));
  Tensor rm = zeros({37}, TensorOptions(kFloat16)), rv = ones({37}, TensorOptions(kFloat16));
  Tensor rmg = rm.to(kGpu), rvg = rv.to(kGpu);
  const Tensor y = F::batch_norm(x, rm, rv, {}, {}, true, 0.1, 1e-5);
  const Tensor yg = F::batch_norm(x.to(kGpu), rmg, rvg, {}, {}, true, 0.1, 1e-5);
  expect_close(yg, y, 2e-3);
  expect_close(rmg, rm, 1e-3);
  expect_close(rvg, rv, 1e-3);
}

TEST(CudaNorm, LayerGroupRmsNormGradientsMatchTheCpu) {
  manual_seed(14);
  for (int64_t n : {24, 300}) {  // a warp per row, a block per row
    const Tensor x = randn({3, n});
    const Tensor w = randn({n}), b = randn({n}), gy = randn({3, n});
    auto run = [&](Device d) {
      Tensor xd = x.to(d).clone().requires_grad_(true), wd = w.to(d).clone().requires_grad_(true);
      Tensor bd = b.to(d).clone().requires_grad_(true);
      Tensor y = F::layer_norm(xd, {n}, wd, bd) + F::rms_norm(xd, {n}, wd, 1e-6);
      (y * gy.to(d)).sum().backward();
      return std::vector<Tensor>{y, xd.grad(), wd.grad(), bd.grad()};
    };
    const auto c = run(kCpu), g = run(kGpu);
    for (size_t i = 0; i < c.size(); ++i) expect_close(g[i], c[i], 1e-4);
  }
  const Tensor x = randn({2, 8, 3, 3});
  const Tensor w = randn({8});
  Tensor xc = x.clone().requires_grad_(true), xg = x.to(kGpu).requires_grad_(true);
  F::group_norm(xc, 4, w).pow(2).sum().backward();
  F::group_norm(xg, 4, w.to(kGpu)).pow(2).sum().backward();
  expect_close(xg.grad(), xc.grad(), 1e-4);
}

TEST(CudaNorm, EmbeddingOnTheDevice) {
  manual_seed(15);
  nn::Embedding emb(nn::EmbeddingOptions(5, 3).padding_idx(0));
  emb->to(kGpu);
  const Tensor idx = tensor(std::vector<int64_t>{0, 4, 4, 1}, Shape{2, 2}).to(kGpu);
  emb(idx).sum().backward();
  const Tensor expected =
      tensor(std::vector<float>{0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 2, 2, 2}, Shape{5, 3});
  expect_close(emb->weight.grad(), expected, 0);
  EXPECT_THROW(emb(tensor(std::vector<int64_t>{5}, Shape{1}).to(kGpu)), IndexError);
}
