// Indexing and sorting kernels on an emulated CUDA device, against the CPU backend: device-side
// index checks, negative indices, atomic accumulation under heavy collisions, multi-tile sorts,
// stability, NaN placement, topk edge cases, topk by radix selection and nonzero. CTest runs this
// file under the forward, reverse and random thread orders; every comparison is with the CPU
// result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

const Device kGpu("cuda:0");

Tensor gpu(const Tensor& t) { return t.to(kGpu); }

std::vector<double> values(const Tensor& t) {
  return t.cpu().to(kFloat64).contiguous().to_vector<double>();
}
std::vector<int64_t> ints(const Tensor& t) { return t.cpu().contiguous().to_vector<int64_t>(); }

// Exact equality, NaN equal to NaN.
void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_TRUE(got.is_cuda()) << what;
  std::vector<double> g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " at " << i;
    } else {
      ASSERT_EQ(g[i], w[i]) << what << " at " << i;
    }
  }
}

// |got - want| <= atol + rtol * |want|: sums whose order differs (atomics) round differently.
void expect_close(const Tensor& got, const Tensor& want, double atol, double rtol,
                  const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  std::vector<double> g = values(got), w = values(want);
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], atol + rtol * std::abs(w[i])) << what << " at " << i;
  }
}

Tensor random_floats(const Shape& shape, std::mt19937& rng, float lo = -4, float hi = 4) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) x = d(rng);
  return tensor(v, shape);
}

// Integers in [lo, hi) as int64 (many repeats when the range is small).
Tensor random_ints(const Shape& shape, int64_t lo, int64_t hi, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> d(lo, hi - 1);
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  for (int64_t& x : v) x = d(rng);
  return tensor(v, shape);
}

}  // namespace

// ---- device-side bounds check -------------------------------------------------------------------

TEST(CudaIndex, OutOfRangeIndexRaisesAndDeviceStaysUsable) {
  Tensor x = gpu(arange(15, TensorOptions().dtype(kFloat32)).view({5, 3}));
  Tensor bad = gpu(tensor(std::vector<int64_t>{0, 7, 2}));
  EXPECT_EQ(error_of<IndexError>([&] { index_select(x, 0, bad); }),
            "[index_select] index 7 is out of bounds for dimension 0 with size 5");
  EXPECT_EQ(error_of<IndexError>([&] { embedding(x, bad); }),
            "[embedding] index 7 is out of bounds for dimension 0 with size 5");
  Tensor g = gpu(tensor(std::vector<int64_t>{0, 1, 3, 2, 1, 0}, {2, 3}));
  EXPECT_EQ(error_of<IndexError>([&] { gather(x, 1, g); }),
            "[gather] index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_EQ(error_of<IndexError>([&] {
              scatter_add(x, 1, g, gpu(ones({2, 3})));
            }),
            "[scatter_add] index 3 is out of bounds for dimension 1 with size 3");
  // Advanced indexing names the indexed dim; negative values wrap only down to -size.
  Tensor neg = gpu(tensor(std::vector<int64_t>{-1, -4}));
  EXPECT_EQ(error_of<IndexError>([&] {
              x.index({Tensor(), neg});
            }),
            "[index] index -4 is out of bounds for dimension 1 with size 3");
  Tensor y = x.clone();
  EXPECT_EQ(error_of<IndexError>([&] { y.index_put_({bad}, gpu(ones({3})), true); }),
            "[index_put_] index 7 is out of bounds for dimension 0 with size 5");
  // The out-of-range row is skipped, never written elsewhere; rows 0 and 2 are accumulated.
  std::vector<double> yv = values(y);
  for (size_t k = 0; k < yv.size(); ++k) {
    const bool updated = k / 3 == 0 || k / 3 == 2;
    EXPECT_EQ(yv[k], static_cast<double>(k) + (updated ? 1 : 0)) << k;
  }

  // The device and the process stay usable.
  Tensor ok = gpu(tensor(std::vector<int64_t>{4, 0}));
  expect_same(index_select(x, 0, ok), index_select(x.cpu(), 0, ok.cpu()), "after error");
  expect_same(gather(x, 1, gpu(zeros({2, 3}, TensorOptions().dtype(kInt64)))),
              gather(x.cpu(), 1, zeros({2, 3}, TensorOptions().dtype(kInt64))), "gather after");
}

TEST(CudaIndex, NegativeIndices) {
  std::mt19937 rng(3);
  Tensor xc = random_floats({4, 5, 3}, rng);
  Tensor x = gpu(xc);
  Tensor i0 = random_ints({2, 3}, -4, 4, rng), i2 = random_ints({3}, -3, 3, rng);
  expect_same(x.index({gpu(i0), Tensor(), gpu(i2)}), xc.index({i0, Tensor(), i2}), "index");
  // int32 indices are used as they are on the device.
  Tensor i2s = i2.to(kInt32);
  expect_same(x.index({gpu(i0), Tensor(), gpu(i2s)}), xc.index({i0, Tensor(), i2s}), "int32");
  Tensor sel = random_ints({6}, 0, 4, rng).to(kInt32);
  expect_same(index_select(x, 0, gpu(sel)), index_select(xc, 0, sel), "index_select int32");
  Tensor bad32 = tensor(std::vector<int32_t>{1, -5}).to(kInt32);
  EXPECT_EQ(error_of<IndexError>([&] {
              x.index({Tensor(), Tensor(), gpu(bad32)});
            }),
            "[index] index -5 is out of bounds for dimension 2 with size 3");
  // CPU index tensors may index a CUDA tensor.
  expect_same(x.index({i0}), xc.index({i0}), "cpu indices");
  Tensor rows = random_ints({9}, -4, 4, rng);
  Tensor v = random_floats({9, 5, 3}, rng);
  Tensor a = x.clone(), b = xc.clone();
  a.index_put_({gpu(rows)}, gpu(v), true);
  b.index_put_({rows}, v, true);
  expect_close(a, b, 1e-5, 1e-6, "index_put_ accumulate");
  // index_select does not wrap: a negative index is out of range, on both backends.
  Tensor neg = tensor(std::vector<int64_t>{-1});
  EXPECT_EQ(error_of<IndexError>([&] { index_select(x, 0, gpu(neg)); }),
            error_of<IndexError>([&] { index_select(xc, 0, neg); }));
}

// ---- atomic accumulation ------------------------------------------------------------------------

TEST(CudaIndex, ScatterAddManyCollisions) {
  std::mt19937 rng(5);
  // 64 x 300 sources into 4 columns: ~75 atomic adds per target.
  Tensor idx = random_ints({64, 300}, 0, 4, rng);
  for (DType dt : {kFloat32, kFloat64, kInt64, kInt32, kInt8, kUInt8, kFloat16, kBFloat16, kBool}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Tensor self = random_ints({64, 4}, 0, 3, rng).to(dt);
    Tensor src = (dt == kFloat32 || dt == kFloat64) ? random_floats({64, 300}, rng).to(dt)
                                                    : random_ints({64, 300}, 0, 3, rng).to(dt);
    Tensor want = scatter_add(self, 1, idx, src);
    Tensor got = scatter_add(gpu(self), 1, gpu(idx), gpu(src));
    if (dt == kFloat32 || dt == kFloat64) {
      expect_close(got, want, 1e-4, 1e-5, "float");  // ~75 terms of magnitude <= 4
    } else {
      expect_same(got, want, "exact");  // integers, and small integers in 16-bit floats
    }
  }
}

TEST(CudaIndex, IndexPutAccumulateRepeatedRows) {
  std::mt19937 rng(7);
  Tensor rows = random_ints({500}, -3, 3, rng);  // 500 updates of 3 rows
  for (DType dt : {kFloat32, kInt64, kInt32}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Tensor x = random_ints({3, 7}, 0, 5, rng).to(dt);
    Tensor v = random_ints({500, 7}, -5, 5, rng).to(dt);
    expect_same(index_put(gpu(x), {gpu(rows)}, gpu(v), true), index_put(x, {rows}, v, true),
                "accumulate");
  }
}

// ---- sort ---------------------------------------------------------------------------------------

TEST(CudaSort, RowsLongerThanOneTile) {
  std::mt19937 rng(11);
  // Three tiles and a partial one per row: a block sort per tile, then two merge passes. Few
  // distinct keys, so ties are everywhere and the indices check stability.
  const int64_t n = 2 * 2048 + 777;
  Tensor xc = random_ints({3, n}, -50, 50, rng).to(kFloat32);
  Tensor x = gpu(xc);
  for (bool desc : {false, true}) {
    auto [v, i] = sort(x, 1, desc, true);
    auto [vc, ic] = sort(xc, 1, desc, true);
    expect_same(v, vc, desc ? "values desc" : "values asc");
    expect_same(i, ic, desc ? "indices desc" : "indices asc");
  }
  // Along dim 0 of a non-contiguous layout, with int64 keys.
  Tensor t = random_ints({n, 2}, -1000000, 1000000, rng);
  auto [v0, i0] = sort(gpu(t), 0, false, false);
  auto [vc0, ic0] = sort(t, 0, false, false);
  expect_same(v0, vc0, "dim 0 values");
  expect_same(i0, ic0, "dim 0 indices");
}

TEST(CudaSort, StableWithManyEqualKeys) {
  std::mt19937 rng(13);
  for (int64_t n : {1, 2, 33, 1000}) {
    Tensor xc = random_ints({5, n}, 0, 3, rng).to(kFloat16);
    for (bool desc : {false, true}) {
      auto [v, i] = sort(gpu(xc), -1, desc, true);
      auto [vc, ic] = sort(xc, -1, desc, true);
      expect_same(v, vc, "values n=" + std::to_string(n));
      expect_same(i, ic, "indices n=" + std::to_string(n));
    }
  }
  Tensor b = random_ints({4, 300}, 0, 2, rng).to(kBool);
  expect_same(argsort(gpu(b), 1, false, true), argsort(b, 1, false, true), "bool");
}

TEST(CudaSort, NaNPlacement) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> row = {3, nan, -inf, 1, nan, inf, -2, 1, nan, 0};
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    Tensor xc = tensor(row, {1, 10}).to(dt);
    for (bool desc : {false, true}) {
      auto [v, i] = sort(gpu(xc), 1, desc, true);
      auto [vc, ic] = sort(xc, 1, desc, true);
      expect_same(v, vc, "values");
      expect_same(i, ic, "indices");
      std::vector<double> got = values(v);
      // Ascending: NaN last; descending: NaN first; in input order (1, 4, 8) either way.
      const size_t first_nan = desc ? 0 : 7;
      for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(std::isnan(got[first_nan + k]));
      std::vector<int64_t> gi = ints(i);
      EXPECT_EQ(gi[first_nan], 1);
      EXPECT_EQ(gi[first_nan + 2], 8);
    }
  }
  // NaN in a multi-tile row.
  std::mt19937 rng(17);
  Tensor big = random_floats({1, 5000}, rng);
  big.index_put_(
      {tensor(std::vector<int64_t>{0, 0, 0}), tensor(std::vector<int64_t>{7, 2500, 4999})},
      full({3}, nan));
  auto [v, i] = sort(gpu(big), 1, false, true);
  auto [vc, ic] = sort(big, 1, false, true);
  expect_same(v, vc, "long values");
  expect_same(i, ic, "long indices");
}

TEST(CudaSort, TopkEdgeK) {
  std::mt19937 rng(19);
  Tensor xc = random_ints({6, 40}, -10, 10, rng).to(kFloat32);
  Tensor x = gpu(xc);
  for (int64_t k : {int64_t(1), int64_t(40)}) {
    for (bool largest : {true, false}) {
      auto [v, i] = topk(x, k, 1, largest);
      auto [vc, ic] = topk(xc, k, 1, largest);
      expect_same(v, vc, "values k=" + std::to_string(k));
      expect_same(i, ic, "indices k=" + std::to_string(k));
    }
  }
  // Along dim 0 and on rows longer than one tile.
  expect_same(std::get<1>(topk(x, 6, 0, false)), std::get<1>(topk(xc, 6, 0, false)), "dim 0");
  Tensor lc = random_floats({2, 5000}, rng);
  auto [v, i] = topk(gpu(lc), 5, 1);
  auto [vc, ic] = topk(lc, 5, 1);
  expect_same(v, vc, "long values");
  expect_same(i, ic, "long indices");
}

// ---- topk by radix selection --------------------------------------------------------------------

// Rows of at least 1024 elements with k up to half of them take the radix selection; shorter rows
// and larger k sort the whole row. Every case compares values and indices with the CPU exactly.

// Few distinct values (ties everywhere), exact in every dtype; for floating dtypes also NaNs,
// infinities and zeros of both signs (which tie: -0 == +0).
Tensor tie_heavy(const Shape& shape, DType dt, std::mt19937& rng, int nan_percent = 3) {
  const bool fp = dt == kFloat32 || dt == kFloat64 || dt == kFloat16 || dt == kBFloat16;
  std::uniform_int_distribution<int> value(-40, 40), pick(0, 99);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) {
    const int p = pick(rng);
    if (fp && p < nan_percent) {
      x = std::numeric_limits<float>::quiet_NaN();
    } else if (fp && p < nan_percent + 3) {
      x = p % 2 ? -0.0f : 0.0f;
    } else if (fp && p == 99) {
      x = value(rng) < 0 ? -std::numeric_limits<float>::infinity()
                         : std::numeric_limits<float>::infinity();
    } else {
      x = fp ? static_cast<float>(value(rng)) / 4 : static_cast<float>(value(rng) + 40);
    }
  }
  Tensor t = tensor(v, shape);
  return dt == kInt8 ? (t - 40).to(dt) : t.to(dt);
}

void expect_topk_matches(const Tensor& xc, int64_t k, int64_t dim, bool largest,
                         const std::string& what) {
  auto [v, i] = topk(gpu(xc), k, dim, largest);
  auto [vc, ic] = topk(xc, k, dim, largest);
  const std::string w = what + " k=" + std::to_string(k) + (largest ? " largest" : " smallest");
  expect_same(v, vc, w + " values");
  expect_same(i, ic, w + " indices");
}

TEST(CudaTopk, RadixSelectEveryDtype) {
  std::mt19937 rng(29);
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kInt8, kUInt8}) {
    Tensor xc = tie_heavy({3, 2500}, dt, rng);
    for (int64_t k : {int64_t(1), int64_t(37), int64_t(1250)}) {
      for (bool largest : {true, false}) {
        expect_topk_matches(xc, k, 1, largest, std::string(dtype_name(dt)));
      }
    }
  }
}

TEST(CudaTopk, TiesNaNsAndWholeRow) {
  std::mt19937 rng(31);
  // Most of the row NaN: the largest are NaNs in index order, the smallest are numbers.
  Tensor nans = tie_heavy({2, 3000}, kFloat32, rng, 60);
  for (bool largest : {true, false}) expect_topk_matches(nans, 1400, 1, largest, "mostly NaN");
  // One value throughout: every pick is a tie, so the first k indices.
  Tensor same = full({2, 3000}, 1.5);
  for (bool largest : {true, false}) expect_topk_matches(same, 10, 1, largest, "all equal");
  // Two values: the k-th sits inside a long run of ties.
  Tensor two = random_ints({2, 3000}, 0, 2, rng).to(kBFloat16);
  for (bool largest : {true, false}) expect_topk_matches(two, 1500, 1, largest, "two values");
  // k = n and k just above half of the row sort the whole row.
  Tensor xc = tie_heavy({2, 1500}, kFloat64, rng);
  for (int64_t k : {int64_t(1500), int64_t(751), int64_t(750)}) {
    expect_topk_matches(xc, k, 1, true, "float64");
  }
  // More selected than one sort tile holds: the k selected are merged in global memory.
  expect_topk_matches(tie_heavy({1, 4500}, kFloat32, rng), 2100, 1, false, "k > tile");
}

TEST(CudaTopk, RowsAlongOtherDims) {
  std::mt19937 rng(37);
  Tensor cols = tie_heavy({2100, 3}, kFloat16, rng);
  for (bool largest : {true, false}) expect_topk_matches(cols, 100, 0, largest, "dim 0");
  // A non-contiguous input, rows along the middle dim.
  Tensor mid = tie_heavy({2, 3, 1200}, kInt32, rng).transpose(1, 2);
  for (bool largest : {true, false}) expect_topk_matches(mid, 600, 1, largest, "dim 1");
  expect_topk_matches(tie_heavy({2, 1300, 2}, kFloat32, rng), 5, -2, true, "dim -2");
}

// ---- nonzero ------------------------------------------------------------------------------------

TEST(CudaIndex, NonzeroAllFalseAllTrueAndLarge) {
  Tensor none = gpu(zeros({3, 4, 5}, TensorOptions().dtype(kBool)));
  Tensor nz = nonzero(none);
  EXPECT_EQ(nz.sizes(), Shape({0, 3}));
  EXPECT_TRUE(nz.is_cuda());
  Tensor all = ones({3, 4, 5}, TensorOptions().dtype(kBool));
  expect_same(nonzero(gpu(all)), nonzero(all), "all true");
  // Many chunks: counts, the scan and the writes cross block boundaries.
  std::mt19937 rng(23);
  Tensor big = random_ints({7, 50, 37}, 0, 3, rng).to(kFloat32);
  expect_same(nonzero(gpu(big)), nonzero(big), "large");
  // A non-contiguous input, NaN counting as non-zero, and a 0-dim tensor.
  Tensor f = tensor(std::vector<float>{0, std::nanf(""), 0, -0.0f, 2, 0}, {2, 3}).t();
  expect_same(nonzero(gpu(f)), nonzero(f), "strided");
  EXPECT_EQ(nonzero(gpu(full({}, 5.0))).sizes(), Shape({1, 0}));
  // masked_select goes through nonzero and index.
  Tensor m = random_ints({7, 50, 37}, 0, 2, rng).to(kBool);
  expect_same(masked_select(gpu(big), gpu(m)), masked_select(big, m), "masked_select");
}
