// Matrix products (mm, bmm, matmul, addmm, linear, dot, outer) against a naive float64 loop,
// over dtypes, transposed and broadcast layouts, empty shapes and PyTorch's error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "ember/ember.h"

using namespace ember;

namespace {

// Standard normal values, or small integers every dtype holds exactly ([0, 4] for uint8, so the
// products of the tests stay in range).
Tensor make(const Shape& shape, DType dtype, uint32_t seed, bool integers = false) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> small(dtype == kUInt8 ? 0 : -4, 4);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  bool ints = integers || !is_floating_point(dtype);
  for (double& x : v) x = ints ? small(rng) : normal(rng);
  return tensor(v, shape).to(dtype);
}

std::vector<double> values(const Tensor& t) {
  return t.to(kFloat64).contiguous().to_vector<double>();
}

// Naive (B, n, k) @ (B, k, m) in float64 over the operands' values (batch dims already equal).
std::vector<double> ref_bmm(const Tensor& a, const Tensor& b) {
  const int64_t B = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  std::vector<double> A = values(a), Bv = values(b), C(static_cast<size_t>(B * n * m), 0.0);
  for (int64_t z = 0; z < B; ++z)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < m; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += A[(z * n + i) * k + p] * Bv[(z * k + p) * m + j];
        C[(z * n + i) * m + j] = s;
      }
  return C;
}

std::vector<double> ref_mm(const Tensor& a, const Tensor& b) {
  return ref_bmm(a.unsqueeze(0), b.unsqueeze(0));
}

double rtol_of(DType t) {
  switch (t) {
    case kFloat16:
      return 2e-3;
    case kBFloat16:
      return 1e-2;
    case kFloat32:
      return 1e-5;
    case kFloat64:
      return 1e-12;
    default:
      return 0;  // integers are exact
  }
}

void expect_close(const Tensor& got, const std::vector<double>& want, int64_t k) {
  std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), want.size());
  const double rtol = rtol_of(got.dtype());
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = rtol * (std::abs(want[i]) + std::sqrt(static_cast<double>(k)));
    ASSERT_NEAR(g[i], want[i], tol) << "element " << i << " dtype " << got.dtype();
  }
}

template <class E, class Fn>
void expect_error(Fn&& fn, const std::string& message) {
  try {
    fn();
    FAIL() << "expected an error: " << message;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

const std::vector<DType> kNumeric = {kUInt8,   kInt8,     kInt32,   kInt64,
                                     kFloat16, kBFloat16, kFloat32, kFloat64};

}  // namespace

// ---- mm -----------------------------------------------------------------------------------------

TEST(Mm, EveryDtypeMatchesReference) {
  for (DType t : kNumeric) {
    Tensor a = make({5, 7}, t, 1), b = make({7, 3}, t, 2);
    Tensor c = mm(a, b);
    EXPECT_EQ(c.dtype(), t);
    EXPECT_EQ(c.sizes(), (Shape{5, 3}));
    expect_close(c, ref_mm(a, b), 7);
    expect_close(a.mm(b), ref_mm(a, b), 7);
  }
}

TEST(Mm, TransposedStridedAndBroadcastLayouts) {
  for (DType t : {kFloat32, kFloat64, kFloat16, kInt32}) {
    Tensor a = make({9, 6}, t, 3), b = make({4, 9}, t, 4);
    Tensor at = a.t();  // (6, 9) column-major
    Tensor bt = b.t();  // (9, 4) column-major
    expect_close(mm(at, bt), ref_mm(at, bt), 9);
    Tensor as = make({6, 18}, t, 5).slice(1, 0, std::nullopt, 2);  // column stride 2
    expect_close(mm(as, bt), ref_mm(as, bt), 9);
    Tensor row = make({1, 9}, t, 6).expand({6, 9});  // stride-0 rows
    expect_close(mm(row, bt), ref_mm(row, bt), 9);
    Tensor col = make({9, 1}, t, 7).expand({9, 4});  // stride-0 columns
    expect_close(mm(at, col), ref_mm(at, col), 9);
  }
}

TEST(Mm, LinearStyleTransposedWeight) {
  // x @ w.t() goes to BLAS through the transpose flag rather than a copy.
  Tensor x = make({33, 65}, kFloat32, 8), w = make({17, 65}, kFloat32, 9);
  expect_close(mm(x, w.t()), ref_mm(x, w.t()), 65);
  expect_close(mm(w, x.t()), ref_mm(w, x.t()), 65);
}

TEST(Mm, IntegerOverflowWraps) {
  Tensor a = tensor(std::vector<int8_t>{100, 100}, {1, 2});
  Tensor b = tensor(std::vector<int8_t>{2, 1}, {2, 1});
  EXPECT_EQ(mm(a, b).to_vector<int8_t>(), std::vector<int8_t>{static_cast<int8_t>(300 - 256)});
  Tensor big = tensor(std::vector<int64_t>{int64_t{1} << 62}, {1, 1});
  EXPECT_EQ(mm(big, tensor(std::vector<int64_t>{4}, {1, 1})).to_vector<int64_t>(),
            std::vector<int64_t>{0});
}

TEST(Mm, EmptyShapes) {
  Tensor c = mm(zeros({0, 3}), zeros({3, 4}));
  EXPECT_EQ(c.sizes(), (Shape{0, 4}));
  set_cpu_alloc_poison(true);
  for (DType t : kNumeric) {
    Tensor z = mm(zeros({2, 0}, t), zeros({0, 3}, t));  // k == 0: zeros, not garbage
    EXPECT_EQ(z.sizes(), (Shape{2, 3}));
    EXPECT_EQ(values(z), std::vector<double>(6, 0.0)) << t;
  }
  set_cpu_alloc_poison(false);
  EXPECT_EQ(mm(zeros({3, 4}), zeros({4, 0})).sizes(), (Shape{3, 0}));
}

TEST(Mm, NaNPropagates) {
  Tensor a = tensor({1.0f, NAN, 0.0f, 1.0f}, {2, 2});
  Tensor c = mm(a, tensor({1.0f, 0.0f, 0.0f, 1.0f}, {2, 2}));
  std::vector<float> v = c.to_vector<float>();  // NaN * 0 is NaN: the whole first row
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 0.0f);
  EXPECT_EQ(v[3], 1.0f);
}

TEST(Mm, Errors) {
  expect_error<ValueError>(
      [] {
        mm(zeros({2, 3}), zeros({4, 5}));
      },
      "[mm] mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error<TypeError>(
      [] {
        mm(zeros({2, 3}), zeros({3, 5}, kFloat64));
      },
      "[mm] expected m1 and m2 to have the same dtype, but got: float != double");
  expect_error<NotImplementedError>(
      [] {
        mm(zeros({2, 3}, kBool), zeros({3, 5}, kBool));
      },
      "[mm] not implemented for dtype bool");
  expect_error<ValueError>(
      [] {
        mm(zeros({3}), zeros({3, 5}));
      },
      "[mm] self must be a matrix, got 1-D tensor of shape [3]");
  expect_error<ValueError>(
      [] {
        mm(zeros({2, 3}), zeros({2, 3, 5}));
      },
      "[mm] mat2 must be a matrix, got 3-D tensor of shape [2, 3, 5]");
  EXPECT_THROW(mm(Tensor(), zeros({2, 2})), ValueError);
}

TEST(Mm, SameResultOnOneAndManyThreads) {
  // Large enough for OpenBLAS to thread; the result must not depend on the split.
  Tensor a = make({160, 200}, kFloat64, 10), b = make({200, 150}, kFloat64, 11);
  const int before = get_num_threads();
  set_num_threads(1);
  Tensor one = mm(a, b);
  set_num_threads(std::max(2, before));
  Tensor many = mm(a, b);
  set_num_threads(before);
  expect_close(one, ref_mm(a, b), 200);
  expect_close(many, ref_mm(a, b), 200);
}

TEST(Mm, CalledFromInsideParallelFor) {
  // Nested calls keep OpenBLAS single-threaded and run inline; results must not change.
  Tensor a = make({20, 30}, kFloat32, 80), b = make({30, 10}, kFloat32, 81);
  std::vector<Tensor> outs(8);
  parallel_for(8, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) {
      outs[i] = i % 2 ? mm(a, b) : bmm(a.unsqueeze(0), b.unsqueeze(0));
    }
  });
  for (const Tensor& o : outs) expect_close(o.view({20, 10}), ref_mm(a, b), 30);
}

// ---- bmm ----------------------------------------------------------------------------------------

TEST(Bmm, EveryDtypeAndLayout) {
  for (DType t : kNumeric) {
    Tensor a = make({4, 3, 5}, t, 12), b = make({4, 5, 2}, t, 13);
    Tensor c = bmm(a, b);
    EXPECT_EQ(c.sizes(), (Shape{4, 3, 2}));
    expect_close(c, ref_bmm(a, b), 5);
    expect_close(a.bmm(b), ref_bmm(a, b), 5);
    // Per-batch transposed operands and a weight shared through a stride-0 batch dim.
    Tensor at = make({4, 5, 3}, t, 14).transpose(1, 2);
    Tensor shared = make({1, 5, 2}, t, 15).expand({4, 5, 2});
    expect_close(bmm(at, shared), ref_bmm(at, shared), 5);
    Tensor bt = make({2, 5}, t, 16).t().unsqueeze(0).expand({4, 5, 2});
    expect_close(bmm(a, bt), ref_bmm(a, bt), 5);
  }
}

TEST(Bmm, ManySmallMatricesRunInParallel) {
  Tensor a = make({300, 4, 6}, kFloat32, 17), b = make({300, 6, 5}, kFloat32, 18);
  expect_close(bmm(a, b), ref_bmm(a, b), 6);
  Tensor h = a.to(kBFloat16), hb = b.to(kBFloat16);
  expect_close(bmm(h, hb), ref_bmm(h, hb), 6);
}

TEST(Bmm, Errors) {
  expect_error<ValueError>(
      [] {
        bmm(zeros({2, 3}), zeros({2, 3, 4}));
      },
      "[bmm] batch1 must be a 3D tensor, got shape [2, 3]");
  expect_error<ValueError>(
      [] {
        bmm(zeros({2, 3, 4}), zeros({3, 4}));
      },
      "[bmm] batch2 must be a 3D tensor, got shape [3, 4]");
  expect_error<ValueError>(
      [] {
        bmm(zeros({2, 3, 4}), zeros({3, 4, 5}));
      },
      "[bmm] Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: "
      "[3, 4] (shapes [2, 3, 4] and [3, 4, 5])");
  expect_error<TypeError>(
      [] {
        bmm(zeros({2, 3, 4}, kFloat16), zeros({2, 4, 5}, kBFloat16));
      },
      "[bmm] expected m1 and m2 to have the same dtype, but got: c10::Half != c10::BFloat16");
  EXPECT_EQ(bmm(zeros({0, 3, 4}), zeros({0, 4, 5})).sizes(), (Shape{0, 3, 5}));
}

// ---- matmul -------------------------------------------------------------------------------------

TEST(Matmul, OneAndTwoDims) {
  Tensor v = make({4}, kFloat64, 20), w = make({4}, kFloat64, 21);
  Tensor m = make({3, 4}, kFloat64, 22), n = make({4, 5}, kFloat64, 23);
  Tensor d = matmul(v, w);
  EXPECT_EQ(d.dim(), 0);
  expect_close(d, ref_mm(v.unsqueeze(0), w.unsqueeze(1)), 4);
  Tensor mv = matmul(m, v);
  EXPECT_EQ(mv.sizes(), (Shape{3}));
  expect_close(mv, ref_mm(m, v.unsqueeze(1)), 4);
  Tensor vm = matmul(v, n);
  EXPECT_EQ(vm.sizes(), (Shape{5}));
  expect_close(vm, ref_mm(v.unsqueeze(0), n), 4);
  expect_close(matmul(m, n), ref_mm(m, n), 4);
  expect_close(m.matmul(n), ref_mm(m, n), 4);
}

TEST(Matmul, BroadcastBatchDims) {
  for (DType t : {kFloat32, kFloat64, kInt64, kFloat16}) {
    Tensor a = make({2, 1, 3, 4}, t, 24), b = make({5, 4, 6}, t, 25);
    Tensor c = matmul(a, b);
    EXPECT_EQ(c.sizes(), (Shape{2, 5, 3, 6}));
    Tensor ae = a.expand({2, 5, 3, 4}).reshape({10, 3, 4});
    Tensor be = b.unsqueeze(0).expand({2, 5, 4, 6}).reshape({10, 4, 6});
    expect_close(c, ref_bmm(ae, be), 4);
  }
}

TEST(Matmul, FoldsAndPromotesVectorsAgainstBatches) {
  Tensor a = make({2, 3, 4}, kFloat32, 26), m = make({4, 5}, kFloat32, 27);
  Tensor v = make({4}, kFloat32, 28), b = make({2, 4, 5}, kFloat32, 29);
  Tensor am = matmul(a, m);  // folded to one (6, 4) @ (4, 5)
  EXPECT_EQ(am.sizes(), (Shape{2, 3, 5}));
  expect_close(am, ref_mm(a.reshape({6, 4}), m), 4);
  Tensor av = matmul(a, v);
  EXPECT_EQ(av.sizes(), (Shape{2, 3}));
  expect_close(av, ref_mm(a.reshape({6, 4}), v.unsqueeze(1)), 4);
  Tensor vb = matmul(v, b);
  EXPECT_EQ(vb.sizes(), (Shape{2, 5}));
  expect_close(vb, ref_bmm(v.view({1, 1, 4}).expand({2, 1, 4}), b), 4);
  Tensor mb = matmul(make({3, 4}, kFloat32, 30), b);
  EXPECT_EQ(mb.sizes(), (Shape{2, 3, 5}));
  // A transposed batch folds through a copy (reshape) and still gives the right values.
  Tensor at = make({3, 2, 4}, kFloat32, 31).transpose(0, 1);
  expect_close(matmul(at, m), ref_mm(at.contiguous().reshape({6, 4}), m), 4);
}

TEST(Matmul, Errors) {
  expect_error<ValueError>(
      [] {
        matmul(zeros({}), zeros({2, 2}));
      },
      "[matmul] both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  expect_error<ValueError>(
      [] { matmul(zeros({3}), zeros({4})); },
      "[matmul] inconsistent tensor size, expected tensor [3] and src [4] to have the same "
      "number of elements, but got 3 and 4 elements respectively");
  expect_error<ValueError>(
      [] {
        matmul(zeros({3, 4}), zeros({5}));
      },
      "[matmul] size mismatch, got input (3), mat (3x4), vec (5)");
  expect_error<ValueError>(
      [] {
        matmul(zeros({3}), zeros({4, 5}));
      },
      "[matmul] mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)");
  expect_error<ValueError>(
      [] {
        matmul(zeros({2, 3, 4}), zeros({5, 6}));
      },
      "[matmul] mat1 and mat2 shapes cannot be multiplied (6x4 and 5x6)");
  expect_error<ValueError>(
      [] {
        matmul(zeros({2, 3, 4}), zeros({3, 4, 6}));
      },
      "[matmul] The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
      "dimension 0 (shapes [2, 3, 4] and [3, 4, 6])");
  expect_error<TypeError>(
      [] {
        matmul(zeros({2, 3}, kInt64), zeros({3, 5}, kInt32));
      },
      "[matmul] expected m1 and m2 to have the same dtype, but got: long int != int");
  expect_error<NotImplementedError>([] { matmul(zeros({3}, kBool), zeros({3}, kBool)); },
                                    "[matmul] not implemented for dtype bool");
}

// ---- addmm --------------------------------------------------------------------------------------

TEST(Addmm, BetaAlphaAndBroadcastInput) {
  Tensor a = make({3, 4}, kFloat64, 40), b = make({4, 5}, kFloat64, 41);
  Tensor bias = make({5}, kFloat64, 42);
  Tensor c = addmm(bias, a, b, 0.5, 2.0);
  std::vector<double> want = ref_mm(a, b), bv = values(bias);
  for (size_t i = 0; i < want.size(); ++i) want[i] = 2.0 * want[i] + 0.5 * bv[i % 5];
  expect_close(c, want, 4);
  Tensor full_in = make({3, 5}, kFloat64, 43);
  std::vector<double> want2 = ref_mm(a, b), fv = values(full_in);
  for (size_t i = 0; i < want2.size(); ++i) want2[i] += fv[i];
  expect_close(addmm(full_in, a, b), want2, 4);
  std::vector<double> want3 = ref_mm(a, b);
  for (double& x : want3) x += 1.5;
  expect_close(addmm(scalar_tensor(1.5, kFloat64), a, b), want3, 4);
}

TEST(Addmm, BetaZeroIgnoresNaNInput) {
  set_cpu_alloc_poison(true);
  Tensor a = make({2, 3}, kFloat32, 44), b = make({3, 2}, kFloat32, 45);
  Tensor c = addmm(full({2, 2}, NAN, kFloat32), a, b, 0);
  expect_close(c, ref_mm(a, b), 3);
  Tensor z = addmm(full({2, 2}, NAN, kFloat32), zeros({2, 0}), zeros({0, 2}), 0);
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(4, 0.0f));
  set_cpu_alloc_poison(false);
}

TEST(Addmm, KZeroScalesInput) {
  Tensor c = addmm(full({2, 2}, 3, kInt64), zeros({2, 0}, kInt64), zeros({0, 2}, kInt64), 2, 5);
  EXPECT_EQ(c.to_vector<int64_t>(), std::vector<int64_t>(4, 6));
}

TEST(Addmm, Integers) {
  Tensor a = make({3, 4}, kInt32, 46), b = make({4, 2}, kInt32, 47), in = make({3, 2}, kInt32, 48);
  std::vector<double> want = ref_mm(a, b), iv = values(in);
  for (size_t i = 0; i < want.size(); ++i) want[i] = 3 * want[i] - 2 * iv[i];
  expect_close(addmm(in, a, b, -2, 3), want, 4);
  expect_error<TypeError>(
      [&] { addmm(in, a, b, 0.5); },
      "[addmm] For integral input tensors, argument beta must not be a floating point number "
      "(dtype int32)");
}

TEST(Addmm, Errors) {
  expect_error<ValueError>(
      [] {
        addmm(zeros({2, 5}), zeros({2, 3}), zeros({4, 5}));
      },
      "[addmm] mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error<ValueError>(
      [] {
        addmm(zeros({2, 5}), zeros({3}), zeros({3, 5}));
      },
      "[addmm] mat1 must be a matrix, got 1-D tensor of shape [3]");
  expect_error<ValueError>(
      [] {
        addmm(zeros({3}), zeros({2, 3}), zeros({3, 4}));
      },
      "[addmm] The expanded size of the tensor (4) must match the existing size (3) at "
      "non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
  expect_error<TypeError>(
      [] {
        addmm(zeros({2, 4}, kFloat64), zeros({2, 3}), zeros({3, 4}));
      },
      "[addmm] self and mat2 must have the same dtype, but got double and float");
}

// ---- linear -------------------------------------------------------------------------------------

TEST(Linear, BatchedInputWithAndWithoutBias) {
  for (DType t : {kFloat32, kFloat64, kBFloat16, kInt64}) {
    Tensor x = make({2, 3, 6}, t, 50), w = make({4, 6}, t, 51), bias = make({4}, t, 52);
    std::vector<double> want = ref_mm(x.reshape({6, 6}), w.t()), bv = values(bias);
    Tensor y0 = linear(x, w);
    EXPECT_EQ(y0.sizes(), (Shape{2, 3, 4}));
    expect_close(y0, want, 6);
    for (size_t i = 0; i < want.size(); ++i) want[i] += bv[i % 4];
    expect_close(linear(x, w, bias), want, 6);
  }
  Tensor x1 = make({6}, kFloat32, 53), w = make({4, 6}, kFloat32, 54);
  Tensor y1 = linear(x1, w);
  EXPECT_EQ(y1.sizes(), (Shape{4}));
  expect_close(y1, ref_mm(x1.unsqueeze(0), w.t()), 6);
  EXPECT_EQ(linear(zeros({0, 6}), w).sizes(), (Shape{0, 4}));
}

TEST(Linear, Errors) {
  expect_error<ValueError>(
      [] {
        linear(zeros({2, 3}), zeros({5, 4}));
      },
      "[linear] mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  expect_error<TypeError>(
      [] {
        linear(zeros({2, 3}), zeros({5, 3}), zeros({5}, kFloat64));
      },
      "[linear] bias must have the input's dtype, but got double and float");
  expect_error<ValueError>(
      [] {
        linear(zeros({2, 3}), zeros({5, 3}), zeros({4}));
      },
      "[linear] The expanded size of the tensor (5) must match the existing size (4) at "
      "non-singleton dimension 1.  Target sizes: [2, 5].  Tensor sizes: [4]");
}

// ---- dot and outer ------------------------------------------------------------------------------

TEST(Dot, ValuesDtypesAndStrides) {
  for (DType t : kNumeric) {
    Tensor a = make({7}, t, 60), b = make({14}, t, 61).slice(0, 0, std::nullopt, 2);
    Tensor d = dot(a, b);
    EXPECT_EQ(d.dim(), 0);
    EXPECT_EQ(d.dtype(), t);
    expect_close(d, ref_mm(a.unsqueeze(0), b.unsqueeze(1)), 7);
  }
  EXPECT_EQ(dot(zeros({0}), zeros({0})).item<float>(), 0.0f);
  expect_error<ValueError>(
      [] {
        dot(zeros({2, 2}), zeros({4}));
      },
      "[dot] 1D tensors expected, but got 2D and 1D tensors");
  expect_error<TypeError>(
      [] { dot(zeros({2}), zeros({2}, kFloat64)); },
      "[dot] expected both vectors to have same dtype, but found Float and Double");
  expect_error<NotImplementedError>([] { dot(zeros({2}, kBool), zeros({2}, kBool)); },
                                    "[dot] not implemented for dtype bool");
}

TEST(Outer, ValuesAndPromotion) {
  Tensor a = tensor({1, 2, 3}), b = tensor({0.5, -1.0});
  Tensor o = outer(a, b);
  EXPECT_EQ(o.sizes(), (Shape{3, 2}));
  EXPECT_EQ(o.dtype(), kFloat32);
  EXPECT_EQ(o.to_vector<float>(), (std::vector<float>{0.5f, -1, 1, -2, 1.5f, -3}));
  Tensor ob = outer(tensor({true, false}), tensor({true, true}));
  EXPECT_EQ(ob.dtype(), kBool);
  EXPECT_EQ(ob.to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  expect_error<ValueError>(
      [] {
        outer(zeros({2, 2}), zeros({2}));
      },
      "[outer] Expected 1-D argument self, but got 2-D");
}

// ---- the backend directly: output layouts the op layer never produces ---------------------------

TEST(Gemm, StridedAndTransposedOutputs) {
  for (DType t : {kFloat32, kFloat64, kFloat16, kInt32}) {
    Tensor a = make({2, 3, 4}, t, 70), b = make({2, 4, 5}, t, 71);
    std::vector<double> prod = ref_bmm(a, b);
    // Column-major output (computed as C^T = B^T A^T) and a strided one (through a buffer).
    Tensor col = make({2, 5, 3}, t, 72, true).transpose(1, 2);
    Tensor strided = make({2, 3, 10}, t, 73, true).slice(2, 0, std::nullopt, 2);
    for (Tensor out : {col, strided}) {
      std::vector<double> old = values(out), want = prod;
      for (size_t i = 0; i < want.size(); ++i) want[i] = 2 * want[i] + 3 * old[i];
      cpu_backend().gemm(out, a, b, 2.0, 3.0);
      expect_close(out, want, 4);
    }
  }
}
