// Reductions, max/min with indices, scans and softmax on the emulated CUDA device, compared with
// the CPU backend: every kernel path (inner warp/block, outer, two-pass split), non-adjacent and
// non-contiguous dims, keepdim, empty reductions, NaN propagation, index ties, long scans and
// softmax rows longer than a block.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backend/cuda/reduce_kernels.h"
#include "ember/ember.h"

using namespace ember;
using cuda_kernels::ReduceLayout;
using cuda_kernels::ReducePath;

namespace {

const Device kDev(kCUDA, 0);
const double kInf = std::numeric_limits<double>::infinity();

Tensor on_device(const Tensor& t) { return t.to(kDev); }

// Values as doubles in row-major order, from any device and dtype.
std::vector<double> values(const Tensor& t) {
  Tensor c = t.cpu().to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// got (a device result) equals want (the CPU's) in shape, dtype and values within rtol; NaN and
// infinities must match exactly.
void expect_matches(const Tensor& got, const Tensor& want, double rtol, const std::string& what) {
  ASSERT_TRUE(got.is_cuda()) << what;
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  const std::vector<double> g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) || std::isinf(w[i])) {
      EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i])
          << what << " element " << i << ": got " << g[i] << ", want " << w[i];
    } else {
      EXPECT_NEAR(g[i], w[i], rtol * (1.0 + std::fabs(w[i]))) << what << " element " << i;
    }
  }
}

// fn on the device copy of x matches fn on x (the CPU).
void expect_same(const Tensor& x, const std::function<Tensor(const Tensor&)>& fn, double rtol,
                 const std::string& what) {
  expect_matches(fn(on_device(x)), fn(x), rtol, what);
}

// The layout and plan the backend builds for reducing x over dims (contiguous x).
cuda_kernels::ReducePlan plan_for(const Shape& shape, const std::vector<int64_t>& dims) {
  ReduceLayout l;
  l.n_out = l.n_red = 1;
  // Contiguous input, output of keepdim shape: merge as the backend does for these shapes.
  std::vector<bool> red(shape.size(), false);
  for (int64_t d : dims) red[static_cast<size_t>(d)] = true;
  int64_t stride = 1;
  std::vector<std::array<int64_t, 3>> kept, reduced;  // size, in stride
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    const int64_t s = shape[static_cast<size_t>(i)];
    if (s != 1) (red[static_cast<size_t>(i)] ? reduced : kept).push_back({s, stride, 0});
    stride *= s;
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    l.ks[l.nk] = (*it)[0];
    l.kin[l.nk++] = (*it)[1];
    l.n_out *= (*it)[0];
  }
  for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
    l.rs[l.nr] = (*it)[0];
    l.rin[l.nr++] = (*it)[1];
    l.n_red *= (*it)[0];
  }
  if (l.nr == 0) {
    l.rs[0] = 1;
    l.rin[0] = 0;
    l.nr = 1;
  }
  return cuda_kernels::plan_reduce(l);
}

Tensor randn_cpu(const Shape& s, DType t = kFloat32) {
  return randn(s, TensorOptions(kFloat64)).to(t);
}

}  // namespace

// The shapes below exercise the kernel paths they claim to.
TEST(CudaReduce, PlansPickEveryPath) {
  auto p = plan_for({64, 300}, {1});
  EXPECT_EQ(p.path, ReducePath::Inner);
  EXPECT_EQ(p.group, 32);  // a warp per row
  EXPECT_EQ(p.chunks, 1);
  p = plan_for({8, 3000}, {1});
  EXPECT_EQ(p.group, cuda_kernels::kReduceThreads);  // a block per row
  p = plan_for({1000, 3}, {1});
  EXPECT_EQ(p.group, 4);  // eight outputs per warp
  p = plan_for({300, 64}, {0});
  EXPECT_EQ(p.path, ReducePath::Outer);
  EXPECT_EQ(p.chunks, 1);
  p = plan_for({100000}, {0});
  EXPECT_EQ(p.path, ReducePath::Inner);
  EXPECT_GT(p.chunks, 1);  // two passes
  EXPECT_GE(p.chunks * p.chunk_len, 100000);
  p = plan_for({4096, 40}, {0});
  EXPECT_EQ(p.path, ReducePath::Outer);
  EXPECT_GT(p.chunks, 1);
}

TEST(CudaReduce, InnerRowsMatchCpu) {
  manual_seed(1);
  for (const Shape& s : {Shape{64, 300}, Shape{8, 3000}, Shape{1000, 3}}) {
    const Tensor x = randn_cpu(s);
    const std::string tag = "shape " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + " ";
    expect_same(
        x, [](const Tensor& t) { return sum(t, {1}); }, 1e-5, tag + "sum");
    expect_same(
        x, [](const Tensor& t) { return mean(t, {1}, true); }, 1e-5, tag + "mean");
    expect_same(
        x, [](const Tensor& t) { return var(t, {1}); }, 1e-5, tag + "var");
    expect_same(
        x, [](const Tensor& t) { return ember::std(t, {1}, 0); }, 1e-5, tag + "std");
    expect_same(
        x, [](const Tensor& t) { return amax(t, {1}); }, 0, tag + "amax");
    expect_same(
        x, [](const Tensor& t) { return amin(t, {1}); }, 0, tag + "amin");
    expect_same(
        x, [](const Tensor& t) { return logsumexp(t, {1}); }, 1e-5, tag + "logsumexp");
    for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf, -kInf}) {
      expect_same(
          x, [p](const Tensor& t) { return norm(t, p, {1}); }, 1e-5,
          tag + "norm " + std::to_string(p));
    }
    expect_same(
        x, [](const Tensor& t) { return std::get<1>(max(t, 1)); }, 0, tag + "argmax");
  }
}

TEST(CudaReduce, OuterColumnsMatchCpu) {
  manual_seed(2);
  const Tensor x = randn_cpu({300, 64});
  expect_same(
      x, [](const Tensor& t) { return sum(t, {0}); }, 1e-5, "sum");
  expect_same(
      x, [](const Tensor& t) { return var(t, {0}, 1, true); }, 1e-5, "var");
  expect_same(
      x, [](const Tensor& t) { return amin(t, {0}); }, 0, "amin");
  expect_same(
      x, [](const Tensor& t) { return prod(t, 0); }, 1e-4, "prod");
  expect_same(
      x, [](const Tensor& t) { return std::get<0>(min(t, 0)); }, 0, "min values");
  expect_same(
      x, [](const Tensor& t) { return std::get<1>(min(t, 0)); }, 0, "min indices");
  expect_same(
      x, [](const Tensor& t) { return logsumexp(t, {0}); }, 1e-5, "logsumexp");
}

// 100k elements into one output, and 4096 rows into 40 columns: both split into chunks whose
// partials a second kernel combines.
TEST(CudaReduce, TwoPassLongReductions) {
  manual_seed(3);
  const Tensor x = randn_cpu({100000});
  expect_same(
      x, [](const Tensor& t) { return sum(t); }, 1e-4, "sum");
  expect_same(
      x, [](const Tensor& t) { return mean(t); }, 1e-4, "mean");
  expect_same(
      x, [](const Tensor& t) { return var(t); }, 1e-5, "var");
  expect_same(
      x, [](const Tensor& t) { return norm(t, 2.0); }, 1e-5, "norm");
  expect_same(
      x, [](const Tensor& t) { return max(t); }, 0, "max");
  expect_same(
      x, [](const Tensor& t) { return argmin(t); }, 0, "argmin");
  expect_same(
      x, [](const Tensor& t) { return logsumexp(t, {0}); }, 1e-5, "logsumexp");
  const Tensor ones_x = ones({100000}, TensorOptions(kInt32));
  expect_same(
      ones_x, [](const Tensor& t) { return sum(t); }, 0, "int sum");
  const Tensor cols = randn_cpu({4096, 40});
  expect_same(
      cols, [](const Tensor& t) { return sum(t, {0}); }, 1e-4, "column sum");
  expect_same(
      cols, [](const Tensor& t) { return std::get<1>(max(t, 0)); }, 0, "column argmax");
  expect_same(
      cols, [](const Tensor& t) { return ember::std(t, {0}); }, 1e-5, "column std");
}

TEST(CudaReduce, NonAdjacentAndNonContiguousDims) {
  manual_seed(4);
  const Tensor x = randn_cpu({6, 7, 8});
  expect_same(
      x,
      [](const Tensor& t) {
        return sum(t, {0, 2});
      },
      1e-5, "sum {0, 2}");
  expect_same(
      x,
      [](const Tensor& t) {
        return var(t, {2, 0}, 1, true);
      },
      1e-5, "var {2, 0}");
  expect_same(
      x,
      [](const Tensor& t) {
        return amax(t, {0, 2});
      },
      0, "amax {0, 2}");
  // Transposed and sliced views.
  expect_same(
      x, [](const Tensor& t) { return sum(t.transpose(0, 2), {1}); }, 1e-5, "transposed");
  expect_same(
      x,
      [](const Tensor& t) {
        return mean(t.slice(2, 0, std::nullopt, 3), {0, 2});
      },
      1e-5, "sliced");
  expect_same(
      x, [](const Tensor& t) { return std::get<1>(max(t.transpose(1, 2), 1)); }, 0,
      "argmax of a transposed view");
}

TEST(CudaReduce, KeepdimShapes) {
  const Tensor x = on_device(randn_cpu({3, 4, 5}));
  EXPECT_EQ(sum(x, {1}, true).sizes(), (Shape{3, 1, 5}));
  EXPECT_EQ(sum(x, {0, 2}, true).sizes(), (Shape{1, 4, 1}));
  EXPECT_EQ(sum(x, {0, 2}, false).sizes(), (Shape{4}));
  auto [v, i] = max(x, 2, true);
  EXPECT_EQ(v.sizes(), (Shape{3, 4, 1}));
  EXPECT_EQ(i.sizes(), (Shape{3, 4, 1}));
  EXPECT_EQ(i.dtype(), kInt64);
}

TEST(CudaReduce, EmptyReductions) {
  const Tensor e = on_device(zeros({3, 0}));
  expect_matches(sum(e, {1}), zeros({3}), 0, "sum of nothing");
  expect_matches(prod(e, 1), ones({3}), 0, "prod of nothing");
  EXPECT_TRUE(std::isnan(values(mean(e, {1}))[0]));
  expect_matches(all(e, 1), ones({3}, TensorOptions(kBool)), 0, "all of nothing");
  expect_matches(sum(on_device(zeros({0}))), zeros({}), 0, "sum of an empty tensor");
  EXPECT_THROW(max(on_device(zeros({0}))), ValueError);
  EXPECT_THROW(amax(e, {1}), IndexError);
  EXPECT_THROW(max(e, 1), IndexError);
  EXPECT_THROW(norm(e, kInf, {1}), ValueError);
}

TEST(CudaReduce, NanPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<float> v(5000, 1.0f);
  v[1234] = static_cast<float>(nan);
  v[4000] = static_cast<float>(nan);
  v[10] = 7.0f;
  const Tensor x = tensor(v, {5000});
  for (const Tensor& t : {x, x.reshape({50, 100})}) {
    const int64_t last = t.dim() - 1;
    expect_same(
        t, [&](const Tensor& a) { return sum(a, {last}); }, 0, "sum");
    expect_same(
        t, [&](const Tensor& a) { return amax(a, {last}); }, 0, "amax");
    expect_same(
        t, [&](const Tensor& a) { return amin(a, {last}); }, 0, "amin");
    expect_same(
        t, [&](const Tensor& a) { return norm(a, kInf, {last}); }, 0, "norm inf");
    expect_same(
        t, [&](const Tensor& a) { return logsumexp(a, {last}); }, 1e-6, "logsumexp");
    expect_same(
        t, [&](const Tensor& a) { return std::get<1>(max(a, last)); }, 0, "argmax");
    expect_same(
        t, [&](const Tensor& a) { return std::get<1>(min(a, last)); }, 0, "argmin");
  }
  EXPECT_EQ(argmax(on_device(x)).item<int64_t>(), 1234);  // the first NaN
  EXPECT_TRUE(std::isnan(max(on_device(x)).item<float>()));
}

TEST(CudaReduce, ArgmaxTiesTakeTheFirstIndex) {
  std::vector<float> v(100000, 0.0f);
  for (int64_t i : {70000, 20, 99999, 5000}) v[static_cast<size_t>(i)] = 3.0f;
  for (int64_t i : {64000, 91, 2}) v[static_cast<size_t>(i)] = -2.0f;
  const Tensor x = on_device(tensor(v, {100000}));
  EXPECT_EQ(argmax(x).item<int64_t>(), 20);  // split into chunks
  EXPECT_EQ(argmin(x).item<int64_t>(), 2);
  const Tensor rows = x.reshape({1000, 100});  // a warp per row: ties inside one row
  const std::vector<double> idx = values(argmax(rows, 1));
  EXPECT_EQ(idx[0], 20);
  EXPECT_EQ(idx[50], 0);  // row 50 is all zeros
  EXPECT_EQ(idx[700], 0);
  const Tensor cols = x.reshape({100, 1000});  // the outer path: row 0 wins ties
  const std::vector<double> cidx = values(argmax(cols, 0));
  EXPECT_EQ(cidx[20], 0);
  EXPECT_EQ(cidx[0], 5);  // rows 5 and 70 tie in column 0
  EXPECT_EQ(cidx[5], 0);
  const Tensor ints = on_device(tensor(std::vector<int64_t>{5, 9, 1, 9, 9, 1}, {6}));
  EXPECT_EQ(argmax(ints).item<int64_t>(), 1);
  EXPECT_EQ(argmin(ints).item<int64_t>(), 2);
}

TEST(CudaReduce, IntegerBoolAndHalfInputs) {
  manual_seed(5);
  const Tensor i32 = (randn_cpu({40, 70}) * 1000).to(kInt32);
  expect_same(
      i32, [](const Tensor& t) { return sum(t, {1}); }, 0, "int32 sum");
  expect_same(
      i32, [](const Tensor& t) { return sum(t, {0}); }, 0, "int32 column sum");
  expect_same(
      i32,
      [](const Tensor& t) {
        return amax(t, {0, 1});
      },
      0, "int32 amax");
  const Tensor small = (randn_cpu({6, 9}) * 2).to(kInt64);
  expect_same(
      small, [](const Tensor& t) { return prod(t, 1); }, 0, "int64 prod");
  const Tensor b = randn_cpu({30, 50}) > 1.0;
  expect_same(
      b, [](const Tensor& t) { return any(t, 1); }, 0, "any");
  expect_same(
      b, [](const Tensor& t) { return all(t); }, 0, "all");
  expect_same(
      b, [](const Tensor& t) { return sum(t, {0}); }, 0, "bool sum");
  const Tensor u8 = b.to(kUInt8);
  expect_same(
      u8, [](const Tensor& t) { return any(t, 0); }, 0, "uint8 any");
  const Tensor h = randn_cpu({20, 700}, kFloat16);
  expect_same(
      h, [](const Tensor& t) { return sum(t, {1}); }, 2e-3, "float16 sum");
  expect_same(
      h, [](const Tensor& t) { return mean(t, {0}); }, 2e-3, "float16 mean");
  const Tensor bf = randn_cpu({20, 700}, kBFloat16);
  expect_same(
      bf, [](const Tensor& t) { return var(t, {1}); }, 1e-2, "bfloat16 var");
  const Tensor d = randn_cpu({20, 700}, kFloat64);
  expect_same(
      d, [](const Tensor& t) { return sum(t, {1}); }, 1e-12, "float64 sum");
  expect_same(
      d, [](const Tensor& t) { return ember::std(t, {0}); }, 1e-12, "float64 std");
}

TEST(CudaScan, LongRowsCarryAcrossTiles) {
  manual_seed(6);
  const Tensor x = randn_cpu({3, 5000});
  expect_same(
      x, [](const Tensor& t) { return cumsum(t, 1); }, 1e-4, "cumsum rows");
  expect_same(
      x, [](const Tensor& t) { return cumsum(t, 0); }, 1e-5, "cumsum columns");
  const Tensor near_one = randn_cpu({4, 700}) * 0.01 + 1.0;
  expect_same(
      near_one, [](const Tensor& t) { return cumprod(t, 1); }, 1e-4, "cumprod rows");
  const Tensor ints = arange(1, 3001, 1, TensorOptions(kInt64)).reshape({3, 1000});
  expect_same(
      ints, [](const Tensor& t) { return cumsum(t, 1); }, 0, "int64 cumsum");
  expect_same(
      ints.to(kInt32), [](const Tensor& t) { return cumsum(t, 0); }, 0, "int32 cumsum");
  const Tensor short_rows = randn_cpu({50, 7, 3});
  expect_same(
      short_rows, [](const Tensor& t) { return cumsum(t, -1); }, 1e-5, "short rows");
  expect_same(
      short_rows, [](const Tensor& t) { return cumprod(t, 1); }, 1e-5, "middle dim");
  expect_same(
      short_rows, [](const Tensor& t) { return cumsum(t.transpose(0, 2), 2); }, 1e-5,
      "transposed input");
}

// Few columns and enough rows: several threads per column, each scanning a chunk of the rows
// from the carry of the chunks above it (partial column tiles, an empty last chunk, outer > 1).
TEST(CudaScan, FewColumnsSplitTheRowsIntoChunks) {
  manual_seed(8);
  const Tensor x = randn_cpu({100, 70});
  expect_same(
      x, [](const Tensor& t) { return cumsum(t, 0); }, 1e-5, "cumsum chunked columns");
  const Tensor near_one = randn_cpu({3, 40, 33}) * 0.01 + 1.0;
  expect_same(
      near_one, [](const Tensor& t) { return cumprod(t, 1); }, 1e-5, "cumprod chunked middle");
  const Tensor ints = arange(1, 3001, 1, TensorOptions(kInt64)).reshape({60, 50});
  expect_same(
      ints, [](const Tensor& t) { return cumsum(t, 0); }, 0, "int64 chunked cumsum");
  const Tensor h = randn_cpu({257, 5}, kFloat16);
  expect_same(
      h, [](const Tensor& t) { return cumsum(t, 0); }, 2e-2, "float16 chunked cumsum");
}

TEST(CudaSoftmax, RowsAndMiddleDims) {
  manual_seed(7);
  const Tensor wide = randn_cpu({3, 3000}) * 4;  // rows longer than a block
  expect_same(
      wide, [](const Tensor& t) { return softmax(t, 1); }, 1e-5, "softmax long rows");
  expect_same(
      wide, [](const Tensor& t) { return log_softmax(t, 1); }, 1e-5, "log_softmax long");
  const Tensor rows = randn_cpu({40, 100}) * 4;  // a warp per row
  expect_same(
      rows, [](const Tensor& t) { return softmax(t, -1); }, 1e-5, "softmax rows");
  const Tensor cube = randn_cpu({4, 50, 33}) * 4;
  expect_same(
      cube, [](const Tensor& t) { return softmax(t, 1); }, 1e-5, "softmax middle dim");
  expect_same(
      cube, [](const Tensor& t) { return log_softmax(t, 0); }, 1e-5, "log_softmax dim 0");
  expect_same(
      cube.to(kFloat16), [](const Tensor& t) { return softmax(t, 1); }, 2e-3, "float16 middle dim");
  expect_same(
      cube.to(kFloat64), [](const Tensor& t) { return log_softmax(t, 2); }, 1e-12, "float64 rows");
  // Special values: NaN rows, +inf, all -inf.
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor special =
      tensor({1.0, std::nan(""), 2.0, 1.0, inf, 2.0, -inf, -inf, -inf, 0.0, -inf, 1.0}, {4, 3});
  // float32: the device's expf and logf are not the host's (a GPU's differ in the last bit, and
  // so do the emulator's), so a few float ulps; NaN and infinities still match exactly.
  expect_same(
      special, [](const Tensor& t) { return softmax(t, 1); }, 1e-6, "special softmax");
  expect_same(
      special, [](const Tensor& t) { return log_softmax(t, 1); }, 1e-6, "special log");
  // A row sums to one.
  const std::vector<double> s = values(sum(softmax(on_device(wide), 1), {1}));
  for (double v : s) EXPECT_NEAR(v, 1.0, 1e-5);
}

TEST(CudaReduce, BadInputsRaise) {
  const Tensor i = on_device(ones({4}, TensorOptions(kInt32)));
  EXPECT_THROW(mean(i), TypeError);
  EXPECT_THROW(var(i), TypeError);
  EXPECT_THROW(softmax(i, 0), TypeError);
  EXPECT_THROW(argmax(on_device(ones({3}, TensorOptions(kBool)))), TypeError);
  EXPECT_THROW(sum(on_device(ones({3})), {2}), IndexError);
}
