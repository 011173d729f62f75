// Tensor printing: exact strings as PyTorch's repr writes them (dtype names without "torch.").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "ember/ember.h"

using namespace ember;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor f32(std::vector<double> v, Shape shape = {}) {
  if (shape.empty()) shape = Shape{static_cast<int64_t>(v.size())};
  return tensor(v, shape, kFloat32);
}

}  // namespace

TEST(Print, OneDimByDtype) {
  EXPECT_EQ(to_string(f32({1, 2, 3})), "tensor([1., 2., 3.])");
  EXPECT_EQ(to_string(tensor({1, 2})), "tensor([1, 2])");
  EXPECT_EQ(to_string(tensor({-1, 10})), "tensor([-1, 10])");
  EXPECT_EQ(to_string(tensor({true, false})), "tensor([ True, False])");
  EXPECT_EQ(to_string(tensor({true, true})), "tensor([True, True])");
  EXPECT_EQ(to_string(f32({1.5, 2.25})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(to_string(f32({-1.5, 2})), "tensor([-1.5000,  2.0000])");
  EXPECT_EQ(to_string(f32({1.23456789, 2})), "tensor([1.2346, 2.0000])");
  EXPECT_EQ(to_string(f32({1, 1000})), "tensor([   1., 1000.])");
  EXPECT_EQ(to_string(f32({0, 0, 0})), "tensor([0., 0., 0.])");
  EXPECT_EQ(to_string(f32({-0.0, 1})), "tensor([-0., 1.])");
}

TEST(Print, NonDefaultDtypesGetASuffix) {
  EXPECT_EQ(to_string(f32({1, 2}).to(kFloat16)), "tensor([1., 2.], dtype=float16)");
  EXPECT_EQ(to_string(f32({1, 2}).to(kFloat64)), "tensor([1., 2.], dtype=float64)");
  EXPECT_EQ(to_string(tensor({1, 2}).to(kInt32)), "tensor([1, 2], dtype=int32)");
  EXPECT_EQ(to_string(tensor({1, 200}).to(kUInt8)), "tensor([  1, 200], dtype=uint8)");
  EXPECT_EQ(to_string(tensor({-7, 2}).to(kInt8)), "tensor([-7,  2], dtype=int8)");
  // Values print as stored: 0.1 is 0.10009765625 in bfloat16 and 0.0999755859375 in float16.
  EXPECT_EQ(to_string(f32({0.1}).to(kBFloat16)), "tensor([0.1001], dtype=bfloat16)");
  EXPECT_EQ(to_string(f32({0.1}).to(kFloat16)), "tensor([0.1000], dtype=float16)");
}

TEST(Print, DefaultDtypeFollowsSetDefaultDtype) {
  set_default_dtype(kFloat64);
  EXPECT_EQ(to_string(tensor({1.5, 2.0}, {2}, kFloat64)), "tensor([1.5000, 2.0000])");
  EXPECT_EQ(to_string(f32({1.5, 2})), "tensor([1.5000, 2.0000], dtype=float32)");
  set_default_dtype(kFloat32);
  EXPECT_EQ(to_string(f32({1.5, 2})), "tensor([1.5000, 2.0000])");
}

TEST(Print, ZeroDim) {
  EXPECT_EQ(to_string(scalar_tensor(3.5)), "tensor(3.5000)");
  EXPECT_EQ(to_string(scalar_tensor(3.0)), "tensor(3.)");
  EXPECT_EQ(to_string(scalar_tensor(7, kInt64)), "tensor(7)");
  EXPECT_EQ(to_string(scalar_tensor(true, kBool)), "tensor(True)");
  EXPECT_EQ(to_string(scalar_tensor(kNaN)), "tensor(nan)");
  EXPECT_EQ(to_string(scalar_tensor(-kInf)), "tensor(-inf)");
  EXPECT_EQ(to_string(scalar_tensor(1e-5)), "tensor(1.0000e-05)");
  EXPECT_EQ(to_string(scalar_tensor(0.5, kFloat16)), "tensor(0.5000, dtype=float16)");
}

TEST(Print, ScientificNotation) {
  // Ratio of the largest to the smallest nonzero magnitude above 1000.
  EXPECT_EQ(to_string(f32({1, 1e4})), "tensor([1.0000e+00, 1.0000e+04])");
  EXPECT_EQ(to_string(f32({0.1, 100.5})), "tensor([1.0000e-01, 1.0050e+02])");
  // Above 1e8, even alone.
  EXPECT_EQ(to_string(f32({1e9, 2e9})), "tensor([1.0000e+09, 2.0000e+09])");
  // Below 1e-4 (non-integer values only); zeros do not count but print in the same format.
  EXPECT_EQ(to_string(f32({0, 1e-5})), "tensor([0.0000e+00, 1.0000e-05])");
  EXPECT_EQ(to_string(f32({-1e-5, 2e-5})), "tensor([-1.0000e-05,  2.0000e-05])");
  EXPECT_EQ(to_string(tensor({1e100, -1.0}, {2}, kFloat64)),
            "tensor([1.0000e+100, -1.0000e+00], dtype=float64)");
}

TEST(Print, NanAndInf) {
  EXPECT_EQ(to_string(f32({1, kNaN, kInf, -kInf})), "tensor([1., nan, inf, -inf])");
  EXPECT_EQ(to_string(f32({1.5, kNaN})), "tensor([1.5000,    nan])");
  EXPECT_EQ(to_string(f32({kNaN})), "tensor([nan])");
  EXPECT_EQ(to_string(f32({-kNaN, kInf})), "tensor([nan, inf])");
  EXPECT_EQ(to_string(f32({1e-5, kInf})), "tensor([1.0000e-05,        inf])");
}

TEST(Print, Matrices) {
  EXPECT_EQ(to_string(f32({1, 2, 3, 4}, {2, 2})),
            "tensor([[1., 2.],\n"
            "        [3., 4.]])");
  EXPECT_EQ(to_string(f32({1.5, -2, 3, 40}, {2, 2})),
            "tensor([[ 1.5000, -2.0000],\n"
            "        [ 3.0000, 40.0000]])");
  EXPECT_EQ(to_string(arange(8).view({2, 2, 2})),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]])");
  EXPECT_EQ(to_string(arange(4).view({2, 1, 1, 2})),
            "tensor([[[[0, 1]]],\n"
            "\n"
            "\n"
            "        [[[2, 3]]]])");
  EXPECT_EQ(to_string(f32({1, 2, 3, 4}, {2, 2}).to(kFloat64)),
            "tensor([[1., 2.],\n"
            "        [3., 4.]], dtype=float64)");
}

TEST(Print, ViewsPrintTheirLogicalLayout) {
  EXPECT_EQ(to_string(arange(6).view({2, 3}).t()),
            "tensor([[0, 3],\n"
            "        [1, 4],\n"
            "        [2, 5]])");
  EXPECT_EQ(to_string(tensor({1, 2}).expand({2, 2})),
            "tensor([[1, 2],\n"
            "        [1, 2]])");
  EXPECT_EQ(to_string(arange(10).slice(0, 1, 9, 3)), "tensor([1, 4, 7])");
}

TEST(Print, LongRowsWrapAtEightyColumns) {
  EXPECT_EQ(to_string(arange(30)),
            "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "        18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29])");
  EXPECT_EQ(to_string(linspace(0, 1, 20)),
            "tensor([0.0000, 0.0526, 0.1053, 0.1579, 0.2105, 0.2632, 0.3158, 0.3684, 0.4211,\n"
            "        0.4737, 0.5263, 0.5789, 0.6316, 0.6842, 0.7368, 0.7895, 0.8421, 0.8947,\n"
            "        0.9474, 1.0000])");
  // Rows of a matrix wrap under their own first element.
  EXPECT_EQ(to_string(arange(38).view({2, 19})),
            "tensor([[ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
            "         18],\n"
            "        [19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36,\n"
            "         37]])");
}

TEST(Print, SuffixMovesToItsOwnLineWhenTheLastLineIsFull) {
  const std::string row = "0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000";
  EXPECT_EQ(to_string(full({18}, 0.5, kFloat16)),
            "tensor([" + row + ",\n        " + row + "],\n       dtype=float16)");
  EXPECT_EQ(to_string(full({10}, 0.5, kFloat16)),
            "tensor([" + row + ",\n        0.5000], dtype=float16)");
}

TEST(Print, SummarisesAboveAThousandElements) {
  EXPECT_EQ(to_string(arange(1000)).find("..."), std::string::npos);
  EXPECT_EQ(to_string(arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  EXPECT_EQ(to_string(arange(2000).view({40, 50})),
            "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
            "        [  50,   51,   52,  ...,   97,   98,   99],\n"
            "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
            "        ...,\n"
            "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
            "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
            "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])");
  // Dims of at most six items stay whole.
  EXPECT_EQ(to_string(arange(2004).view({334, 6})),
            "tensor([[   0,    1,    2,    3,    4,    5],\n"
            "        [   6,    7,    8,    9,   10,   11],\n"
            "        [  12,   13,   14,   15,   16,   17],\n"
            "        ...,\n"
            "        [1986, 1987, 1988, 1989, 1990, 1991],\n"
            "        [1992, 1993, 1994, 1995, 1996, 1997],\n"
            "        [1998, 1999, 2000, 2001, 2002, 2003]])");
  // The width comes from the shown items only: the hidden 12345 does not widen the column.
  Tensor z = zeros({2000});
  z.narrow(0, 1000, 1).fill_(12345);
  EXPECT_EQ(to_string(z), "tensor([0., 0., 0.,  ..., 0., 0., 0.])");
}

TEST(Print, SummarisedThreeDim) {
  EXPECT_EQ(to_string(zeros({7, 2, 100}, kInt32)),
            "tensor([[[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]],\n"
            "\n"
            "        [[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]],\n"
            "\n"
            "        [[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]],\n"
            "\n"
            "        ...,\n"
            "\n"
            "        [[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]],\n"
            "\n"
            "        [[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]],\n"
            "\n"
            "        [[0, 0, 0,  ..., 0, 0, 0],\n"
            "         [0, 0, 0,  ..., 0, 0, 0]]], dtype=int32)");
}

TEST(Print, EmptyTensors) {
  EXPECT_EQ(to_string(zeros({0})), "tensor([])");
  EXPECT_EQ(to_string(zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(to_string(zeros({2, 0, 3})), "tensor([], size=(2, 0, 3))");
  // No element shows the dtype, so int64 and bool are named too.
  EXPECT_EQ(to_string(zeros({0}, kInt64)), "tensor([], dtype=int64)");
  EXPECT_EQ(to_string(zeros({2, 0}, kBool)), "tensor([], size=(2, 0), dtype=bool)");
  EXPECT_EQ(to_string(zeros({0}, kFloat16)), "tensor([], dtype=float16)");
}

TEST(Print, StreamMatchesToString) {
  Tensor t = f32({1, 2, 3, 4}, {2, 2});
  std::ostringstream os;
  os << t;
  EXPECT_EQ(os.str(), to_string(t));
  EXPECT_EQ(to_string(Tensor()), "[ Tensor (undefined) ]");
}
