// Joining and indexing: cat, stack, index_select, gather, scatter, index, index_put_,
// masked_select, nonzero, embedding, one_hot, tril/triu, against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

using I = std::vector<int64_t>;
using F = std::vector<float>;

Tensor ar(int64_t n, DType t = kInt64) { return arange(n).to(t); }

}  // namespace

// ---- cat / stack --------------------------------------------------------------------------------

TEST(Cat, ValuesAlongDims) {
  Tensor a = ar(6).view({2, 3}), b = ar(3).view({1, 3}).add(10);
  Tensor c = cat({a, b}, 0);
  EXPECT_EQ(c.sizes(), (Shape{3, 3}));
  EXPECT_EQ(ivec(c), (I{0, 1, 2, 3, 4, 5, 10, 11, 12}));
  Tensor d = cat({a, a.slice(1, 0, 1)}, -1);
  EXPECT_EQ(d.sizes(), (Shape{2, 4}));
  EXPECT_EQ(ivec(d), (I{0, 1, 2, 0, 3, 4, 5, 3}));
  // Non-contiguous input (a transposed view).
  Tensor e = cat({a.t(), a.t()}, 1);
  EXPECT_EQ(e.sizes(), (Shape{3, 4}));
  EXPECT_EQ(ivec(e), (I{0, 3, 0, 3, 1, 4, 1, 4, 2, 5, 2, 5}));
}

TEST(Cat, PromotesAndSkipsLegacyEmpty) {
  Tensor a = tensor({1, 2});  // int64
  Tensor b = tensor({0.5f});  // float32
  Tensor c = cat({a, b});
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(fvec(c), (F{1, 2, 0.5f}));
  EXPECT_EQ(cat({tensor({true}), ar(2, kInt32)}).dtype(), kInt32);
  // A (0,) float64 tensor is skipped for shapes but still promotes.
  Tensor m = ar(4).view({2, 2});
  Tensor r = cat({m, empty({0}, kFloat64), m}, 1);
  EXPECT_EQ(r.dtype(), kFloat64);
  EXPECT_EQ(r.sizes(), (Shape{2, 4}));
  EXPECT_EQ(ivec(r), (I{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(cat({empty({0}), empty({0})}).sizes(), (Shape{0}));
  // Empty along the cat dim is fine.
  EXPECT_EQ(cat({empty({0, 3}), ones({2, 3})}).sizes(), (Shape{2, 3}));
}

TEST(Cat, Errors) {
  Tensor a = zeros({2, 3}), b = zeros({2, 4});
  expect_error<ValueError>(
      [&] {
        cat({a, a, b}, 0);
      },
      "[cat] Sizes of tensors must match except in dimension 0. Expected "
      "size 3 but got size 4 for tensor number 2 in the list");
  expect_error<ValueError>([&] { cat({a, zeros({2, 3, 1})}); }, "same number of dimensions");
  expect_error<ValueError>([&] { cat({a, scalar_tensor(1.0)}); }, "zero-dimensional");
  expect_error<ValueError>([&] { cat({}); }, "[cat]");
  expect_error<IndexError>([&] { cat({a}, 2); }, "Dimension out of range");
}

TEST(Stack, ValuesAndErrors) {
  Tensor a = ar(3), b = ar(3).add(3);
  Tensor s0 = stack({a, b});
  EXPECT_EQ(s0.sizes(), (Shape{2, 3}));
  EXPECT_EQ(ivec(s0), (I{0, 1, 2, 3, 4, 5}));
  Tensor s1 = stack({a, b}, -1);
  EXPECT_EQ(s1.sizes(), (Shape{3, 2}));
  EXPECT_EQ(ivec(s1), (I{0, 3, 1, 4, 2, 5}));
  Tensor s2 = stack({scalar_tensor(1.5), scalar_tensor(2.5)});
  EXPECT_EQ(s2.sizes(), (Shape{2}));
  expect_error<ValueError>(
      [&] {
        stack({a, ar(4)});
      },
      "stack expects each tensor to be equal size, but got [3] at entry 0 "
      "and [4] at entry 1");
  expect_error<IndexError>([&] { stack({a, b}, 3); }, "Dimension out of range");
}

// ---- index_select / gather ----------------------------------------------------------------------

TEST(IndexSelect, Values) {
  Tensor x = ar(12).view({3, 4});
  Tensor r0 = index_select(x, 0, tensor({2, 0, 2}));
  EXPECT_EQ(r0.sizes(), (Shape{3, 4}));
  EXPECT_EQ(ivec(r0), (I{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  Tensor r1 = x.index_select(-1, tensor({3, 1}, {}, kInt32));
  EXPECT_EQ(ivec(r1), (I{3, 1, 7, 5, 11, 9}));
  // Non-contiguous input and index.
  Tensor idx = tensor({1, 9, 0, 9, 2}).slice(0, 0, 5, 2);  // [1, 0, 2]
  Tensor r2 = index_select(x.t(), 0, idx);                 // rows of x.t() = columns of x
  EXPECT_EQ(ivec(r2), (I{1, 5, 9, 0, 4, 8, 2, 6, 10}));
  // Other dtypes and empty/0-dim cases.
  Tensor h = x.to(kFloat16);
  EXPECT_EQ(fvec(index_select(h, 1, tensor({0}))), (F{0, 4, 8}));
  Tensor bl = tensor({true, false, true});
  EXPECT_EQ(index_select(bl, 0, tensor({1, 2})).to_vector<bool>(),
            (std::vector<bool>{false, true}));
  EXPECT_EQ(index_select(x, 0, empty({0}, kInt64)).sizes(), (Shape{0, 4}));
  Tensor s = index_select(scalar_tensor(7.0), 0, tensor({0}));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 7.0);
  EXPECT_EQ(ivec(index_select(x, 0, scalar_tensor(1, kInt64))), (I{4, 5, 6, 7}));
}

TEST(IndexSelect, Errors) {
  Tensor x = zeros({3, 4});
  expect_error<IndexError>(
      [&] {
        index_select(x, 0, tensor({0, 5}));
      },
      "[index_select] index 5 is out of bounds for dimension 0 with size 3");
  expect_error<IndexError>([&] { index_select(x, 1, tensor({-1})); },
                           "[index_select] index -1 is out of bounds for dimension 1 with size 4");
  expect_error<TypeError>([&] { index_select(x, 0, tensor({0.0f})); }, "[index_select] expected");
  expect_error<ValueError>([&] { index_select(x, 0, zeros({1, 1}, kInt64)); }, "[index_select]");
  expect_error<IndexError>([&] { index_select(x, 2, tensor({0})); }, "Dimension out of range");
}

TEST(Gather, Values) {
  Tensor x = ar(12).view({3, 4});
  Tensor i1 = tensor({3, 0, 1, 1, 2, 2}, {3, 2});
  Tensor g1 = gather(x, 1, i1);
  EXPECT_EQ(g1.sizes(), (Shape{3, 2}));
  EXPECT_EQ(ivec(g1), (I{3, 0, 5, 5, 10, 10}));
  Tensor i0 = tensor({2, 0, 1}, {1, 3});
  EXPECT_EQ(ivec(x.gather(0, i0)), (I{8, 1, 6}));
  // Index smaller than the input off dim, non-contiguous input, float dtype.
  Tensor xt = x.t().to(kFloat64);  // (4, 3)
  Tensor g2 = gather(xt, 0, tensor({3, 2}, {1, 2}));
  EXPECT_EQ(g2.to_vector<double>(), (std::vector<double>{3, 6}));
  EXPECT_EQ(gather(x, 1, empty({3, 0}, kInt64)).sizes(), (Shape{3, 0}));
  EXPECT_EQ(gather(scalar_tensor(4), 0, scalar_tensor(0, kInt64)).item<int64_t>(), 4);
}

TEST(Gather, Errors) {
  Tensor x = zeros({3, 4});
  expect_error<IndexError>(
      [&] {
        gather(x, 1, tensor({0, 7}, {1, 2}));
      },
      "[gather] index 7 is out of bounds for dimension 1 with size 4");
  expect_error<TypeError>(
      [&] {
        gather(x, 1, zeros({1, 2}, kInt32));
      },
      "[gather] expected an int64 index tensor, got int32");
  expect_error<ValueError>(
      [&] {
        gather(x, 1, zeros({4, 1}, kInt64));
      },
      "size does not match at dimension 0");
  expect_error<ValueError>([&] { gather(x, 1, zeros({2}, kInt64)); }, "same number of dimensions");
}

// ---- scatter ------------------------------------------------------------------------------------

TEST(Scatter, SrcAndValue) {
  Tensor x = zeros({3, 4});
  Tensor idx = tensor({0, 1, 2, 0, 2, 1, 0, 1}, {2, 4});
  Tensor src = ar(8, kFloat32).view({2, 4}).add(1);
  Tensor r = scatter(x, 0, idx, src);
  EXPECT_EQ(fvec(r), (F{1, 0, 7, 4, 0, 6, 0, 8, 5, 0, 3, 0}));  // (1, 1) written twice: last wins
  EXPECT_EQ(fvec(x), F(12, 0.0f));                              // out of place
  // src larger than index: only the leading corner is read.
  Tensor big = ar(15, kFloat32).view({3, 5});
  Tensor r2 = scatter(zeros({2, 3}), 1, tensor({2, 0}, {2, 1}), big);
  EXPECT_EQ(fvec(r2), (F{0, 0, 0, 5, 0, 0}));
  Tensor r3 = scatter(zeros({2, 3}, kInt32), 1, tensor({1, 2}, {2, 1}), 7);
  EXPECT_EQ(r3.dtype(), kInt32);
  EXPECT_EQ(ivec(r3), (I{0, 7, 0, 0, 0, 7}));
  // In place on a non-contiguous view writes through to the base.
  Tensor base = zeros({4, 3});
  Tensor v = base.t();  // (3, 4)
  v.scatter_(1, tensor({3, 0, 1}, {3, 1}), 2.5);
  EXPECT_EQ(fvec(base), (F{0, 2.5f, 0, 0, 0, 2.5f, 0, 0, 0, 2.5f, 0, 0}));
  Tensor y = zeros({3});
  y.scatter_(0, tensor({2}), tensor({9.0f}));
  EXPECT_EQ(fvec(y), (F{0, 0, 9}));
}

TEST(Scatter, AddAccumulatesDuplicates) {
  Tensor x = ones({2, 3});
  Tensor idx = tensor({0, 0, 2, 1, 1, 1}, {2, 3});
  Tensor src = tensor({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  Tensor r = scatter_add(x, 1, idx, src);
  EXPECT_EQ(fvec(r), (F{4, 1, 4, 1, 16, 1}));
  // Along dim 0 with repeats in the same column.
  Tensor r0 =
      zeros({2, 2}, kInt64).scatter_add_(0, tensor({1, 1, 1, 0}, {2, 2}), ar(4).view({2, 2}));
  EXPECT_EQ(ivec(r0), (I{0, 3, 2, 1}));
  // 16-bit floats accumulate in float32 and round on store; bool accumulates as "or".
  Tensor h =
      scatter_add(zeros({1}, kBFloat16), 0, tensor({0, 0}), tensor({1.0f, 2.0f}).to(kBFloat16));
  EXPECT_EQ(fvec(h), (F{3}));
  Tensor b = scatter_add(tensor({false, false}), 0, tensor({1, 1}), tensor({true, false}));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true}));
  // Large enough to split across threads: every output bin counts its hits.
  const int64_t n = 200000;
  Tensor hits = arange(n).remainder(7);
  Tensor counts = zeros({7}, kInt64).scatter_add_(0, hits, ones({n}, kInt64));
  I expect(7);
  for (int64_t i = 0; i < n; ++i) ++expect[static_cast<size_t>(i % 7)];
  EXPECT_EQ(ivec(counts), expect);
  // 2-D, split across columns, with repeated rows in every column.
  const int64_t k = 50, cols = 4096;
  Tensor rows = arange(k * cols).remainder(5).view({k, cols});
  Tensor bins = zeros({5, cols}, kInt64).scatter_add_(0, rows, ones({k, cols}, kInt64));
  I got = ivec(bins);
  for (int64_t r = 0; r < 5; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int64_t want = 0;
      for (int64_t i = 0; i < k; ++i) want += (i * cols + c) % 5 == r;
      ASSERT_EQ(got[static_cast<size_t>(r * cols + c)], want) << r << ", " << c;
    }
  }
}

TEST(Scatter, Errors) {
  Tensor x = zeros({3, 4});
  expect_error<IndexError>(
      [&] {
        scatter(x, 0, tensor({3}, {1, 1}), ones({1, 1}));
      },
      "[scatter] index 3 is out of bounds for dimension 0 with size 3");
  expect_error<IndexError>(
      [&] {
        scatter_add(x, 1, tensor({-1}, {1, 1}), ones({1, 1}));
      },
      "[scatter_add] index -1 is out of bounds for dimension 1 with size 4");
  expect_error<TypeError>(
      [&] {
        scatter(x, 0, tensor({0}, {1, 1}), ones({1, 1}, kFloat64));
      },
      "same dtype");
  expect_error<TypeError>([&] { scatter(x, 0, zeros({1, 1}, kInt32), 1.0); }, "int64 index");
  expect_error<ValueError>(
      [&] {
        scatter(x, 0, zeros({1, 2}, kInt64), ones({1, 1}));
      },
      "no larger than src");
  expect_error<ValueError>(
      [&] {
        scatter(x, 0, zeros({1, 5}, kInt64), 1.0);
      },
      "size does not match at dimension 1");
}

// ---- advanced indexing --------------------------------------------------------------------------

TEST(Index, IntegerIndices) {
  Tensor x = ar(12).view({3, 4});
  Tensor r = index(x, {tensor({2, -3, 2})});
  EXPECT_EQ(r.sizes(), (Shape{3, 4}));
  EXPECT_EQ(ivec(r), (I{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  // Two indices broadcast together: (2, 1) with (3,) -> (2, 3).
  Tensor r2 = x.index({tensor({0, 2}, {2, 1}), tensor({1, 3, -1}, {}, kInt32)});
  EXPECT_EQ(r2.sizes(), (Shape{2, 3}));
  EXPECT_EQ(ivec(r2), (I{1, 3, 3, 9, 11, 11}));
  // 0-dim index removes the dim.
  EXPECT_EQ(ivec(index(x, {scalar_tensor(1, kInt64)})), (I{4, 5, 6, 7}));
  // Non-contiguous source.
  EXPECT_EQ(ivec(index(x.t(), {tensor({3, 0})})), (I{3, 7, 11, 0, 4, 8}));
}

TEST(Index, SlicesKeepPlaceUnlessSeparated) {
  Tensor x = ar(24).view({2, 3, 4});
  // x[:, [2, 0]] -> (2, 2, 4)
  Tensor a = index(x, {Tensor(), tensor({2, 0})});
  EXPECT_EQ(a.sizes(), (Shape{2, 2, 4}));
  EXPECT_EQ(ivec(a.select(0, 1).select(0, 0)), (I{20, 21, 22, 23}));
  // x[:, :, [1]] -> (2, 3, 1)
  Tensor b = index(x, {Tensor(), Tensor(), tensor({1})});
  EXPECT_EQ(b.sizes(), (Shape{2, 3, 1}));
  EXPECT_EQ(ivec(b), (I{1, 5, 9, 13, 17, 21}));
  // x[[1, 0], :, [3, 2]]: separated indices put the index dims first -> (2, 3)
  Tensor c = index(x, {tensor({1, 0}), Tensor(), tensor({3, 2})});
  EXPECT_EQ(c.sizes(), (Shape{2, 3}));
  EXPECT_EQ(ivec(c), (I{15, 19, 23, 2, 6, 10}));
}

TEST(Index, BoolMasks) {
  Tensor x = ar(6).view({2, 3});
  Tensor m = tensor({true, false, true, false, true, true}, {2, 3});
  EXPECT_EQ(ivec(index(x, {m})), (I{0, 2, 4, 5}));
  Tensor rows = index(x, {tensor({false, true})});
  EXPECT_EQ(rows.sizes(), (Shape{1, 3}));
  EXPECT_EQ(ivec(rows), (I{3, 4, 5}));
  Tensor cols = index(x, {Tensor(), tensor({true, false, true})});
  EXPECT_EQ(ivec(cols), (I{0, 2, 3, 5}));
  EXPECT_EQ(index(x, {zeros({2, 3}, kBool)}).sizes(), (Shape{0}));
  // 0-dim masks add a unit dim, kept or emptied.
  EXPECT_EQ(index(x, {scalar_tensor(true)}).sizes(), (Shape{1, 2, 3}));
  EXPECT_EQ(index(x, {scalar_tensor(false)}).sizes(), (Shape{0, 2, 3}));
}

TEST(Index, Errors) {
  Tensor x = zeros({3, 4});
  expect_error<IndexError>([&] { index(x, {tensor({3})}); },
                           "[index] index 3 is out of bounds for dimension 0 with size 3");
  expect_error<IndexError>(
      [&] {
        index(x, {Tensor(), tensor({-5})});
      },
      "[index] index -5 is out of bounds for dimension 1 with size 4");
  expect_error<IndexError>(
      [&] {
        index(x, {tensor({0}), tensor({0}), tensor({0})});
      },
      "too many indices for tensor of dimension 2 (got 3)");
  expect_error<IndexError>([&] { index(x, {zeros({3, 3}, kBool)}); }, "The shape of the mask");
  expect_error<IndexError>(
      [&] {
        index(x, {tensor({0, 1}), tensor({0, 1, 2})});
      },
      "shape mismatch");
  expect_error<TypeError>([&] { index(x, {tensor({0.0f})}); }, "tensors used as indices");
}

TEST(IndexPut, AssignAndAccumulate) {
  Tensor x = zeros({3, 2});
  x.index_put_({tensor({2, 0})}, tensor({1.0f, 2.0f}));  // rows filled by broadcasting
  EXPECT_EQ(fvec(x), (F{1, 2, 0, 0, 1, 2}));
  Tensor y = zeros({4});
  index_put_(y, {tensor({1, 1, 3, -4})}, tensor({1.0f, 2.0f, 3.0f, 4.0f}), true);
  EXPECT_EQ(fvec(y), (F{4, 3, 0, 3}));
  // Mask assignment with a 0-dim value.
  Tensor z = ar(6, kFloat32).view({2, 3});
  z.index_put_({z.gt(2.5)}, scalar_tensor(-1.0f));
  EXPECT_EQ(fvec(z), (F{0, 1, 2, -1, -1, -1}));
  // Out of place leaves the input alone; slices before the index.
  Tensor w = zeros({2, 3}, kInt64);
  Tensor v = index_put(w, {Tensor(), tensor({2})}, tensor({5, 6}, {2, 1}));
  EXPECT_EQ(ivec(v), (I{0, 0, 5, 0, 0, 6}));
  EXPECT_EQ(ivec(w), I(6, 0));
  // Accumulate with duplicates across many positions (parallel over trailing dims).
  Tensor acc = zeros({3, 50000});
  Tensor rows = tensor({0, 2, 0, 0});
  acc.index_put_({rows}, ones({4, 50000}), true);
  EXPECT_EQ(acc.select(0, 0).to_vector<float>(), F(50000, 3.0f));
  EXPECT_EQ(acc.select(0, 1).to_vector<float>(), F(50000, 0.0f));
  EXPECT_EQ(acc.select(0, 2).to_vector<float>(), F(50000, 1.0f));
  // Many duplicates into one element.
  Tensor one = zeros({1}, kInt64);
  one.index_put_({zeros({100000}, kInt64)}, ones({100000}, kInt64), true);
  EXPECT_EQ(one.item<int64_t>(), 100000);
}

TEST(IndexPut, Errors) {
  Tensor x = zeros({3, 2});
  expect_error<TypeError>([&] { x.index_put_({tensor({0})}, ones({2}, kFloat64)); },
                          "dtypes to match");
  expect_error<ValueError>([&] { x.index_put_({tensor({0, 1})}, ones({3})); }, "shape mismatch");
  expect_error<IndexError>([&] { x.index_put_({tensor({3})}, ones({2})); },
                           "[index_put_] index 3 is out of bounds for dimension 0 with size 3");
}

// ---- masked_select, nonzero ---------------------------------------------------------------------

TEST(MaskedSelect, Broadcasts) {
  Tensor x = ar(6).view({2, 3});
  EXPECT_EQ(ivec(masked_select(x, tensor({true, false, true}))), (I{0, 2, 3, 5}));
  EXPECT_EQ(ivec(x.masked_select(tensor({false, true}, {2, 1}))), (I{3, 4, 5}));
  EXPECT_EQ(ivec(masked_select(scalar_tensor(4), scalar_tensor(true))), (I{4}));
  expect_error<TypeError>([&] { masked_select(x, ones({3}, kInt64)); }, "[masked_select]");
  expect_error<ValueError>([&] { masked_select(x, ones({2}, kBool)); }, "[masked_select]");
}

TEST(Nonzero, Coordinates) {
  Tensor x = tensor({0.0f, 1.5f, 0.0f, NAN, -2.0f, 0.0f}, {2, 3});
  Tensor nz = nonzero(x);
  EXPECT_EQ(nz.sizes(), (Shape{3, 2}));
  EXPECT_EQ(ivec(nz), (I{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(nonzero(x.t()).sizes(), (Shape{3, 2}));
  EXPECT_EQ(ivec(nonzero(x.t())), (I{0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(nonzero(scalar_tensor(3)).sizes(), (Shape{1, 0}));
  EXPECT_EQ(nonzero(zeros({0, 4})).sizes(), (Shape{0, 2}));
  // Large: chunks must come back in row-major order.
  const int64_t n = 150001;
  Tensor big = arange(n).remainder(5).eq(0);
  Tensor c = big.nonzero();
  I got = ivec(c);
  ASSERT_EQ(got.size(), static_cast<size_t>((n + 4) / 5));
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<int64_t>(i) * 5);
}

// ---- embedding, one_hot -------------------------------------------------------------------------

TEST(Embedding, RowsForAnyIndexShape) {
  Tensor w = ar(8, kFloat32).view({4, 2});
  Tensor e = embedding(w, tensor({3, 0, 1, 3}, {2, 2}));
  EXPECT_EQ(e.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(fvec(e), (F{6, 7, 0, 1, 2, 3, 6, 7}));
  EXPECT_EQ(embedding(w, scalar_tensor(2, kInt64)).sizes(), (Shape{2}));
  expect_error<IndexError>([&] { embedding(w, tensor({4})); },
                           "[embedding] index 4 is out of bounds for dimension 0 with size 4");
  expect_error<ValueError>([&] { embedding(ar(4, kFloat32), tensor({0})); }, "2-D");
  expect_error<TypeError>([&] { embedding(w, tensor({0.0f})); }, "[embedding]");
}

TEST(OneHot, InfersAndChecks) {
  Tensor r = one_hot(tensor({2, 0, 1}));
  EXPECT_EQ(r.dtype(), kInt64);
  EXPECT_EQ(r.sizes(), (Shape{3, 3}));
  EXPECT_EQ(ivec(r), (I{0, 0, 1, 1, 0, 0, 0, 1, 0}));
  Tensor r2 = one_hot(tensor({1, 0}, {2, 1}), 4);
  EXPECT_EQ(r2.sizes(), (Shape{2, 1, 4}));
  EXPECT_EQ(ivec(r2), (I{0, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(one_hot(empty({0}, kInt64), 3).sizes(), (Shape{0, 3}));
  expect_error<ValueError>([&] { one_hot(empty({0}, kInt64)); }, "Can not infer");
  expect_error<ValueError>([&] { one_hot(tensor({-1})); }, "non-negative");
  expect_error<ValueError>([&] { one_hot(tensor({3}), 3); }, "smaller than num_classes");
  expect_error<TypeError>([&] { one_hot(tensor({1}, {}, kInt32)); }, "int64");
}

// ---- tril / triu --------------------------------------------------------------------------------

TEST(TrilTriu, DiagonalsAndBatches) {
  Tensor x = ar(12).add(1).view({3, 4});
  EXPECT_EQ(ivec(tril(x)), (I{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(ivec(x.tril(1)), (I{1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}));
  EXPECT_EQ(ivec(tril(x, -1)), (I{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(ivec(triu(x)), (I{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  EXPECT_EQ(ivec(x.triu(2)), (I{0, 0, 3, 4, 0, 0, 0, 8, 0, 0, 0, 0}));
  EXPECT_EQ(ivec(triu(x, -1)), (I{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  EXPECT_EQ(ivec(tril(x, INT64_MAX)), ivec(x));
  EXPECT_EQ(ivec(triu(x, INT64_MIN)), ivec(x));
  EXPECT_EQ(ivec(triu(x, 100)), I(12, 0));
  // Batched over leading dims, non-contiguous, float and bool.
  // [[1, 3], [2, 4]] and [[5, 7], [6, 8]]
  Tensor b = ar(8, kFloat32).add(1).view({2, 2, 2}).transpose(1, 2);
  EXPECT_EQ(fvec(triu(b)), (F{1, 3, 0, 4, 5, 7, 0, 8}));
  EXPECT_EQ(tril(ones({2, 2}, kBool)).to_vector<bool>(),
            (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(tril(zeros({0, 3})).sizes(), (Shape{0, 3}));
  expect_error<ValueError>([&] { tril(ones({3})); }, "[tril] input tensor must have at least 2");
}
