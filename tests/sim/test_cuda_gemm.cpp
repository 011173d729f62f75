// CUDA matmul on an emulated device, through the emulated cuBLASLt: transposed and padded operands
// go in as op flags and leading dimensions (no copy), batches broadcast or fold, addmm's beta,
// k = 0, the 16-bit floats, integers, outputs in any layout, the float32 precision switch, and
// linear's bias fused as cuBLASLt's bias epilogue (with the cases that keep a separate add).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "backend/backend.h"
#include "ember/ember.h"
#include "simt/cublaslt_shim.h"

using namespace ember;

namespace {

const TensorOptions kGpu = TensorOptions().device(Device("cuda:0"));

// Values with a few significant bits, so float32 products are exact and comparisons can be strict.
Tensor values(const Shape& s, DType dt = kFloat32, double scale = 0.25) {
  const int64_t n = s.numel();
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = static_cast<double>((i * 7) % 11 - 5) * scale;
  return tensor(v, s).to(dt);
}

void expect_equal(const Tensor& got, const Tensor& want, double tol = 0.0) {
  ASSERT_EQ(got.sizes(), want.sizes());
  const std::vector<double> g = got.cpu().to(kFloat64).contiguous().to_vector<double>();
  const std::vector<double> w = want.cpu().to(kFloat64).contiguous().to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], tol) << "element " << i;
}

int64_t allocations() { return cuda::memory_stats().at("allocation.all.allocated"); }

TEST(CudaGemm, TransposedAndPaddedOperandsGoInAsFlagsWithoutCopies) {
  // a (4, 6) is the transpose of rows 1..6 of a (9, 4) buffer: column-major with a leading
  // dimension of 4 and a start 16 bytes in; b (6, 3) is every row of a (6, 5) buffer's first 3
  // columns: row-major with leading dimension 5. Neither is contiguous.
  const Tensor abuf = values({9, 4}), bbuf = values({6, 5}, kFloat32, 0.5);
  const Tensor a_cpu = abuf.slice(0, 1, 7).t(), b_cpu = bbuf.slice(1, 0, 3);
  const Tensor a = abuf.to(kGpu.device()).slice(0, 1, 7).t();
  const Tensor b = bbuf.to(kGpu.device()).slice(1, 0, 3);
  ASSERT_FALSE(a.is_contiguous());
  ASSERT_FALSE(b.is_contiguous());
  const uint64_t matmuls = simt::cublaslt_matmul_count();
  const int64_t before = allocations();
  Tensor out = mm(a, b);
  // The output is the only allocation: no operand was packed.
  EXPECT_EQ(allocations() - before, 1);
  cuda::synchronize();  // the emulated matmul is stream work (held back under SIMT_DEFER_STREAMS)
  EXPECT_EQ(simt::cublaslt_matmul_count() - matmuls, 1u);
  expect_equal(out, mm(a_cpu, b_cpu));
  // The same through the transposes of both (a^T's rows are contiguous, b^T's columns).
  expect_equal(mm(b.t(), a.t()), mm(b_cpu.t(), a_cpu.t()));
}

TEST(CudaGemm, OperandsWithoutABlasLayoutArePacked) {
  const Tensor buf = values({8, 10});
  const Tensor a_cpu = buf.slice(0, 0, std::nullopt, 2).slice(1, 0, std::nullopt, 2);  // (4, 5)
  const Tensor a = buf.to(kGpu.device()).slice(0, 0, std::nullopt, 2).slice(1, 0, std::nullopt, 2);
  const Tensor b = values({5, 3});
  expect_equal(mm(a, b.to(kGpu.device())), mm(a_cpu, b));
}

TEST(CudaGemm, BatchesBroadcastAndFold) {
  const Tensor a = values({2, 1, 3, 4}), b = values({5, 4, 6}, kFloat32, 0.5);
  expect_equal(matmul(a.to(kGpu.device()), b.to(kGpu.device())), matmul(a, b));
  // (2, 3, 6) @ (6, 5): one (6, 6) @ (6, 5) product, not a batch of two.
  const Tensor x = values({2, 3, 6}), w = values({6, 5}, kFloat32, 0.5);
  const uint64_t matmuls = simt::cublaslt_matmul_count();
  expect_equal(matmul(x.to(kGpu.device()), w.to(kGpu.device())), matmul(x, w));
  EXPECT_EQ(simt::cublaslt_matmul_count() - matmuls, 1u);
  // bmm with a batch stride that is not the matrix size (every other matrix of a (6, 4, 5)).
  const Tensor big = values({6, 4, 5}), c = values({3, 5, 2});
  const Tensor sel = big.to(kGpu.device()).slice(0, 0, std::nullopt, 2);
  expect_equal(bmm(sel, c.to(kGpu.device())), bmm(big.slice(0, 0, std::nullopt, 2), c));
}

TEST(CudaGemm, AddmmScalesTheInputAndBetaZeroIgnoresIt) {
  const Tensor input = values({3, 4}, kFloat32, 1.0), a = values({3, 5}), b = values({5, 4});
  const Tensor g_in = input.to(kGpu.device()), ga = a.to(kGpu.device()), gb = b.to(kGpu.device());
  expect_equal(addmm(g_in, ga, gb, 0.5, 2.0), addmm(input, a, b, 0.5, 2.0));
  expect_equal(addmm(g_in.t().contiguous().t(), ga, gb, -1.0, 1.0), addmm(input, a, b, -1.0, 1.0));
  // beta = 0: NaN in the input must not reach the result.
  Tensor nan_in = full({3, 4}, std::numeric_limits<double>::quiet_NaN(), kGpu);
  expect_equal(addmm(nan_in, ga, gb, 0.0, 1.0), mm(a, b));
}

TEST(CudaGemm, EmptyInnerDimensionGivesBetaTimesInput) {
  const Tensor a = empty({3, 0}, kGpu), b = empty({0, 4}, kGpu);
  expect_equal(mm(a, b), zeros({3, 4}));
  const Tensor input = values({3, 4}, kFloat32, 1.0);
  expect_equal(addmm(input.to(kGpu.device()), a, b, 0.5, 2.0), input * 0.5);
  expect_equal(matmul(empty({2, 3, 0}, kGpu), empty({2, 0, 5}, kGpu)), zeros({2, 3, 5}));
}

TEST(CudaGemm, OutputsInAnyLayout) {
  // The backend contract allows any output strides: column-major (written by cuBLASLt as is) and
  // a strided view that needs a staging buffer.
  const Tensor a = values({1, 3, 5}), b = values({1, 5, 4}, kFloat32, 0.5);
  const Tensor want = bmm(a, b);
  const Tensor ga = a.to(kGpu.device()), gb = b.to(kGpu.device());
  Tensor col = empty({1, 4, 3}, kGpu).transpose(1, 2);
  backend(kCUDA).gemm(col, ga, gb, 1.0, 0.0);
  expect_equal(col, want);
  Tensor wide = zeros({1, 3, 8}, kGpu);
  Tensor strided = wide.slice(2, 0, std::nullopt, 2);
  backend(kCUDA).gemm(strided, ga, gb, 1.0, 0.0);
  expect_equal(strided, want);
  expect_equal(wide.slice(2, 1, std::nullopt, 2), zeros({1, 3, 4}));  // untouched
}

TEST(CudaGemm, HalfTypesAccumulateInFloat) {
  // 2048 + 1 + 1: float accumulation gives 2050, a half accumulator would stay at 2048.
  for (DType dt : {kFloat16, kBFloat16}) {
    const Tensor a = tensor(std::vector<float>{2048, 1, 1}, Shape{1, 3}).to(dt);
    const Tensor b = ones({3, 1}, TensorOptions().dtype(dt));
    const double want = dt == kFloat16 ? 2050.0 : 2048.0;  // bf16 rounds 2050 to 2048
    EXPECT_EQ(mm(a.to(kGpu.device()), b.to(kGpu.device())).to(kFloat64).item<double>(), want);
  }
}

TEST(CudaGemm, IntegersWrapLikeTheCpu) {
  for (DType dt : {kUInt8, kInt8, kInt32, kInt64}) {
    const Tensor a = values({5, 19}, kFloat64, 37.0).to(dt),
                 b = values({19, 21}, kFloat64, 29.0).to(dt);
    expect_equal(mm(a.to(kGpu.device()), b.to(kGpu.device())), mm(a, b));
    expect_equal(
        addmm(b.slice(0, 0, 5).to(kGpu.device()), a.to(kGpu.device()), b.to(kGpu.device()), 2, -3),
        addmm(b.slice(0, 0, 5), a, b, 2, -3));
  }
  EXPECT_THROW(mm(ones({2, 2}, TensorOptions().dtype(kBool).device(kGpu.device())),
                  ones({2, 2}, TensorOptions().dtype(kBool).device(kGpu.device()))),
               NotImplementedError);
}

// Bias-epilogue matmuls the emulated cuBLASLt ran during fn (the device synchronised after it).
template <class Fn>
uint64_t bias_epilogues(Fn fn) {
  const uint64_t before = simt::cublaslt_bias_epilogue_count();
  fn();
  cuda::synchronize();
  return simt::cublaslt_bias_epilogue_count() - before;
}

TEST(CudaGemm, LinearBiasIsFusedAsTheEpilogueInFloatTypes) {
  // x (2, 3, 5) @ W (4, 5)^T + bias (4): 6 rows against 4 features, so a bias applied over the
  // rows would be read past its end, and a missing bias shows in the values.
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    const Tensor x = values({2, 3, 5}, dt), w = values({4, 5}, dt, 0.5);
    const Tensor bias = tensor(std::vector<double>{1, -2, 3, 40}, Shape{4}).to(dt);
    const Tensor gx = x.to(kGpu.device()), gw = w.to(kGpu.device()), gb = bias.to(kGpu.device());
    Tensor out;
    const int64_t before = allocations();
    EXPECT_EQ(bias_epilogues([&] { out = linear(gx, gw, gb); }), 1u) << dtype_name(dt);
    EXPECT_EQ(allocations() - before, 1);  // the output only: no bias broadcast, no add
    expect_equal(out, linear(x, w, bias), dt == kFloat32 ? 1e-5 : 0.0);
    // addmm with beta = 1 and a broadcast row is the same epilogue, alpha scaling the product.
    const Tensor a = values({3, 5}, dt), b = values({5, 4}, dt, 0.5);
    const Tensor ga = a.to(kGpu.device()), gbm = b.to(kGpu.device());
    EXPECT_EQ(bias_epilogues([&] { out = addmm(gb.unsqueeze(0), ga, gbm, 1, -2); }), 1u);
    expect_equal(out, addmm(bias.unsqueeze(0), a, b, 1, -2), dt == kFloat32 ? 1e-5 : 0.0);
  }
}

TEST(CudaGemm, BiasesTheEpilogueDoesNotCoverTakeTheSeparateAdd) {
  const Tensor x = values({3, 5}), w = values({4, 5}, kFloat32, 0.5);
  const Tensor gx = x.to(kGpu.device()), gw = w.to(kGpu.device());
  const Tensor wide = values({8}, kFloat32, 2.0);
  const Tensor gwide = wide.to(kGpu.device());
  Tensor out;
  // A strided bias, one that starts mid-vector, a full (rows, features) one, float64, integers,
  // and addmm with beta != 1.
  EXPECT_EQ(bias_epilogues([&] { out = linear(gx, gw, gwide.slice(0, 0, 8, 2)); }), 0u);
  expect_equal(out, linear(x, w, wide.slice(0, 0, 8, 2)), 1e-5);
  EXPECT_EQ(bias_epilogues([&] { out = linear(gx, gw, gwide.slice(0, 1, 5)); }), 0u);
  expect_equal(out, linear(x, w, wide.slice(0, 1, 5)), 1e-5);
  const Tensor full_bias = values({3, 4}, kFloat32, 3.0);
  EXPECT_EQ(bias_epilogues([&] { out = linear(gx, gw, full_bias.to(kGpu.device())); }), 0u);
  expect_equal(out, linear(x, w, full_bias), 1e-5);
  for (DType dt : {kFloat64, kInt32}) {
    const Tensor xd = x.mul(4).to(dt), wd = w.mul(4).to(dt), bd = wide.slice(0, 0, 4).to(dt);
    EXPECT_EQ(bias_epilogues([&] {
                out = linear(xd.to(kGpu.device()), wd.to(kGpu.device()), bd.to(kGpu.device()));
              }),
              0u);
    expect_equal(out, linear(xd, wd, bd));
  }
  const Tensor row = wide.slice(0, 0, 4);
  EXPECT_EQ(bias_epilogues([&] { out = addmm(row.to(kGpu.device()), gx, gw.t(), 0.5, 1); }), 0u);
  expect_equal(out, addmm(row, x, w.t(), 0.5, 1), 1e-5);
}

TEST(CudaGemm, Float32PrecisionSwitch) {
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
  try {
    set_float32_matmul_precision("fast");
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[set_float32_matmul_precision]"), std::string::npos);
  }
  EXPECT_EQ(get_float32_matmul_precision(), "highest");
  // 1 + 2^-12 needs 13 significand bits: exact in float32, 1 in TF32.
  const float x = 1.0f + 1.0f / 4096.0f;
  const Tensor a = full({1, 1}, x, kGpu), b = ones({1, 1}, kGpu);
  EXPECT_EQ(mm(a, b).item<float>(), x);
  for (const char* p : {"high", "medium"}) {
    set_float32_matmul_precision(p);
    EXPECT_EQ(get_float32_matmul_precision(), p);
    EXPECT_EQ(mm(a, b).item<float>(), 1.0f);
    EXPECT_EQ(mm(a.cpu(), b.cpu()).item<float>(), x);  // the CPU always computes in float32
    EXPECT_EQ(mm(a.to(kFloat64), b.to(kFloat64)).item<double>(), static_cast<double>(x));
  }
  set_float32_matmul_precision("highest");
  EXPECT_EQ(mm(a, b).item<float>(), x);
}

}  // namespace
