// Sorting: sort, argsort, topk against hand-computed values and a naive std::stable_sort reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

using I = std::vector<int64_t>;
using F = std::vector<float>;

// Element-wise equality that treats NaN as equal to NaN.
void expect_same(const F& got, const F& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    }
  }
}

}  // namespace

TEST(Sort, AscendingDescendingWithNaN) {
  Tensor x = tensor({3.0f, NAN, -1.0f, 2.0f, -INFINITY, 2.0f});
  auto [v, i] = sort(x);
  expect_same(fvec(v), F{-INFINITY, -1, 2, 2, 3, NAN});
  EXPECT_EQ(ivec(i), (I{4, 2, 3, 5, 0, 1}));
  EXPECT_EQ(i.dtype(), kInt64);
  auto [vd, id] = x.sort(-1, /*descending=*/true);
  expect_same(fvec(vd), F{NAN, 3, 2, 2, -1, -INFINITY});
  // Equal keys keep input order in both directions (stable).
  EXPECT_EQ(ivec(id), (I{1, 0, 3, 5, 2, 4}));
  auto [vs, is] = sort(x, 0, true, /*stable=*/true);
  EXPECT_EQ(ivec(is), (I{1, 0, 3, 5, 2, 4}));
}

TEST(Sort, AlongDimsAndLayouts) {
  Tensor x = tensor({3, 1, 2, 9, 7, 8}, {2, 3});
  auto [v1, i1] = sort(x, 1);
  EXPECT_EQ(ivec(v1), (I{1, 2, 3, 7, 8, 9}));
  EXPECT_EQ(ivec(i1), (I{1, 2, 0, 1, 2, 0}));
  auto [v0, i0] = sort(x, 0, true);
  EXPECT_EQ(ivec(v0), (I{9, 7, 8, 3, 1, 2}));
  EXPECT_EQ(ivec(i0), (I{1, 1, 1, 0, 0, 0}));
  // Non-contiguous input sorts the logical rows.
  auto [vt, it] = sort(x.t(), -1);  // rows [3, 9], [1, 7], [2, 8]
  EXPECT_EQ(ivec(vt), (I{3, 9, 1, 7, 2, 8}));
  EXPECT_EQ(ivec(it), (I{0, 1, 0, 1, 0, 1}));
  // Every dtype: half and bfloat16 keep their exact values; bool sorts false first.
  for (DType t : {kFloat16, kBFloat16, kFloat64, kInt8, kUInt8, kInt32}) {
    auto [v, i] = sort(tensor({5, 1, 4}).to(t), 0, true);
    EXPECT_EQ(v.dtype(), t);
    EXPECT_EQ(ivec(v), (I{5, 4, 1})) << dtype_name(t);
    EXPECT_EQ(ivec(i), (I{0, 2, 1})) << dtype_name(t);
  }
  auto [vb, ib] = sort(tensor({true, false, true, false}));
  EXPECT_EQ(vb.to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
  EXPECT_EQ(ivec(ib), (I{1, 3, 0, 2}));
  // 0-dim and empty.
  auto [vs, is] = sort(scalar_tensor(2.5));
  EXPECT_EQ(vs.dim(), 0);
  EXPECT_EQ(vs.item<double>(), 2.5);
  EXPECT_EQ(is.item<int64_t>(), 0);
  EXPECT_EQ(std::get<0>(sort(zeros({0, 3}), 1)).sizes(), (Shape{0, 3}));
  EXPECT_THROW(sort(x, 2), IndexError);
}

TEST(Sort, MatchesStableReferenceOnManyRows) {
  // Enough rows to split across threads; few distinct values so ties are common.
  const int64_t rows = 700, cols = 97;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> dist(-5, 5);
  std::vector<float> data(static_cast<size_t>(rows * cols));
  for (float& d : data) d = static_cast<float>(dist(rng));
  Tensor x = tensor(data, {rows, cols});
  auto [v, i] = sort(x, 1, true);
  F gv = fvec(v);
  I gi = ivec(i);
  for (int64_t r = 0; r < rows; ++r) {
    I order(static_cast<size_t>(cols));
    std::iota(order.begin(), order.end(), 0);
    const float* row = data.data() + r * cols;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return row[a] > row[b]; });
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(gi[static_cast<size_t>(r * cols + c)], order[static_cast<size_t>(c)]);
      ASSERT_EQ(gv[static_cast<size_t>(r * cols + c)], row[order[static_cast<size_t>(c)]]);
    }
  }
}

TEST(Argsort, IndicesOnly) {
  Tensor x = tensor({0.5f, -2.0f, 7.0f, 0.0f});
  EXPECT_EQ(ivec(argsort(x)), (I{1, 3, 0, 2}));
  EXPECT_EQ(ivec(x.argsort(0, true)), (I{2, 0, 3, 1}));
  // Sorting by the indices reproduces the sorted values.
  Tensor idx = argsort(x);
  EXPECT_EQ(fvec(x.gather(0, idx)), (F{-2, 0, 0.5f, 7}));
}

TEST(Topk, LargestSmallest) {
  Tensor x = tensor({1.0f, 5.0f, 3.0f, 5.0f, -1.0f, NAN}, {2, 3});
  auto [v, i] = topk(x, 2);
  expect_same(fvec(v), F{5, 3, NAN, 5});
  EXPECT_EQ(ivec(i), (I{1, 2, 2, 0}));
  auto [vs, is] = x.topk(1, 1, /*largest=*/false);
  EXPECT_EQ(vs.sizes(), (Shape{2, 1}));
  EXPECT_EQ(fvec(vs), (F{1, -1}));
  EXPECT_EQ(ivec(is), (I{0, 1}));
  auto [v0, i0] = topk(x, 2, 0);
  EXPECT_EQ(v0.sizes(), (Shape{2, 3}));
  expect_same(fvec(v0), F{5, 5, NAN, 1, -1, 3});
  EXPECT_EQ(ivec(i0), (I{1, 0, 1, 0, 1, 0}));
  // k = 0, k = size, integer dtype, non-contiguous input.
  EXPECT_EQ(std::get<0>(topk(x, 0)).sizes(), (Shape{2, 0}));
  auto [va, ia] = topk(tensor({4, 9, 1, 7}), 4);
  EXPECT_EQ(ivec(va), (I{9, 7, 4, 1}));
  EXPECT_EQ(ivec(ia), (I{1, 3, 0, 2}));
  auto [vt, it] = topk(tensor({3, 1, 2, 9, 7, 8}, {2, 3}).t(), 1);  // rows [3, 9], [1, 7], [2, 8]
  EXPECT_EQ(ivec(vt), (I{9, 7, 8}));
  EXPECT_EQ(ivec(it), (I{1, 1, 1}));
  EXPECT_THROW(topk(x, 4), IndexError);
  EXPECT_THROW(topk(x, -1), IndexError);
  EXPECT_THROW(topk(ones({3}, kBool), 1), TypeError);
}
