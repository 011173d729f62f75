// Reductions, scans and softmax: values against naive references, result dtypes and shapes,
// PyTorch's edge cases (empty, 0-dim, NaN, inf) and error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "ember/ember.h"

using namespace ember;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

Tensor rand_tensor(const Shape& shape, DType dtype = kFloat32, uint32_t seed = 1, double lo = -2.0,
                   double hi = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (double& x : v) x = u(rng);
  return tensor(v, shape).to(dtype);
}

Tensor rand_ints(const Shape& shape, int lo, int hi, DType dtype = kInt64, uint32_t seed = 2) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(lo, hi);
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  for (int64_t& x : v) x = u(rng);
  return tensor(v, shape).to(dtype);
}

// The elements each output folds, in row-major order; dims empty = all, keepdim layout.
std::vector<std::vector<double>> groups(const Tensor& x, std::vector<int64_t> dims) {
  const Shape s = x.sizes();
  const int64_t nd = x.dim();
  std::vector<bool> red(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) red[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
  int64_t n_out = 1;
  for (int64_t i = 0; i < nd; ++i) n_out *= red[static_cast<size_t>(i)] ? 1 : s[i];
  std::vector<std::vector<double>> g(static_cast<size_t>(n_out));
  const std::vector<double> v = vals(x);
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  for (size_t lin = 0; lin < v.size(); ++lin) {
    int64_t o = 0;
    for (int64_t i = 0; i < nd; ++i) {
      if (!red[static_cast<size_t>(i)]) o = o * s[i] + idx[static_cast<size_t>(i)];
    }
    g[static_cast<size_t>(o)].push_back(v[lin]);
    for (int64_t i = nd - 1; i >= 0; --i) {
      if (++idx[static_cast<size_t>(i)] < s[i]) break;
      idx[static_cast<size_t>(i)] = 0;
    }
  }
  return g;
}

std::vector<double> ref_reduce(const Tensor& x, const std::vector<int64_t>& dims,
                               const std::function<double(const std::vector<double>&)>& f) {
  std::vector<double> out;
  for (const auto& g : groups(x, dims)) out.push_back(f(g));
  return out;
}

double ref_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
double ref_mean(const std::vector<double>& v) { return ref_sum(v) / static_cast<double>(v.size()); }
double ref_var(const std::vector<double>& v, int64_t correction) {
  const double m = ref_mean(v);
  double q = 0;
  for (double x : v) q += (x - m) * (x - m);
  return q / std::max<double>(0.0, static_cast<double>(v.size()) - static_cast<double>(correction));
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                  double atol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
    } else {
      EXPECT_NEAR(got[i], want[i], atol + rtol * std::fabs(want[i])) << "at " << i;
    }
  }
}

template <class E, class Fn>
void expect_error(Fn&& fn, const std::string& prefix) {
  try {
    fn();
    ADD_FAILURE() << "expected an error starting with " << prefix;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

}  // namespace

// ---- sum / mean / prod --------------------------------------------------------------------------

TEST(Sum, ValuesDimsKeepdim) {
  Tensor x = arange(24).view({2, 3, 4}).to(kFloat32);
  EXPECT_EQ(sum(x).item<double>(), 276.0);
  EXPECT_EQ(sum(x).dim(), 0);
  Tensor s1 = sum(x, {1});
  EXPECT_EQ(s1.sizes(), (Shape{2, 4}));
  expect_close(vals(s1), ref_reduce(x, {1}, ref_sum), 0);
  Tensor s02 = x.sum({0, -1}, true);
  EXPECT_EQ(s02.sizes(), (Shape{1, 3, 1}));
  expect_close(vals(s02), ref_reduce(x, {0, 2}, ref_sum), 0);
  EXPECT_EQ(sum(x, {-1, -2}).sizes(), (Shape{2}));
  expect_close(vals(sum(x, {2, 1})), ref_reduce(x, {1, 2}, ref_sum), 0);
}

TEST(Sum, Dtypes) {
  Tensor b = tensor({true, false, true, true});
  EXPECT_EQ(sum(b).dtype(), kInt64);
  EXPECT_EQ(sum(b).item<int64_t>(), 3);
  Tensor i8 = tensor(std::vector<int8_t>{100, 100, 100});
  EXPECT_EQ(sum(i8).dtype(), kInt64);
  EXPECT_EQ(sum(i8).item<int64_t>(), 300);  // no int8 overflow
  EXPECT_EQ(sum(i8, {}, false, kInt8).dtype(), kInt8);
  EXPECT_EQ(sum(i8, {}, false, kInt8).item<int64_t>(), 44);                  // wraps like PyTorch
  EXPECT_EQ(sum(tensor({1.5, 2.5}), {}, false, kInt64).item<int64_t>(), 3);  // casts first
  Tensor h = tensor({1.0, 2.0, 3.0}).to(kFloat16);
  EXPECT_EQ(sum(h).dtype(), kFloat16);
  EXPECT_EQ(sum(h).item<double>(), 6.0);
  EXPECT_EQ(sum(h, {}, false, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(sum(tensor({1, 2, 3}), {}, false, kFloat32).dtype(), kFloat32);
  EXPECT_EQ(sum(tensor({true, true}), {}, false, kBool).item<bool>(), true);
  // float16 accumulates in float32 or wider: 4096 ones do not stall at 2048.
  EXPECT_EQ(sum(ones({4096}, kFloat16)).item<double>(), 4096.0);
  EXPECT_EQ(sum(ones({4096}, kBFloat16)).item<double>(), 4096.0);
}

TEST(Sum, EmptyAndZeroDim) {
  Tensor e = empty({0, 3});
  EXPECT_EQ(sum(e).item<double>(), 0.0);
  Tensor s0 = sum(e, {0});
  EXPECT_EQ(s0.sizes(), (Shape{3}));
  EXPECT_EQ(vals(s0), (std::vector<double>{0, 0, 0}));
  EXPECT_EQ(sum(e, {1}).sizes(), (Shape{0}));
  EXPECT_EQ(sum(empty({0}, kInt32)).dtype(), kInt64);
  Tensor z = scalar_tensor(5.0);
  EXPECT_EQ(sum(z).item<double>(), 5.0);
  EXPECT_EQ(sum(z, {0}).dim(), 0);
  EXPECT_EQ(sum(z, {-1}, true).dim(), 0);
  EXPECT_EQ(prod(empty({0})).item<double>(), 1.0);
  EXPECT_TRUE(std::isnan(mean(empty({0})).item<double>()));
  EXPECT_TRUE(std::isnan(vals(mean(empty({0, 2}), {0}))[1]));
}

TEST(Sum, Errors) {
  Tensor x = zeros({2, 3});
  expect_error<ValueError>([&] { sum(x, {0, -2}); }, "[sum] ");
  expect_error<IndexError>([&] { sum(x, {2}); }, "[sum] ");
  expect_error<IndexError>([&] { sum(x, {-3}); }, "[sum] ");
  expect_error<ValueError>([&] { sum(Tensor()); }, "[sum] ");
  expect_error<TypeError>([&] { mean(tensor({1, 2})); }, "[mean] ");
  expect_error<TypeError>([&] { mean(tensor({true})); }, "[mean] ");
}

TEST(Sum, NonContiguousAndBroadcast) {
  Tensor base = rand_tensor({6, 8, 5}, kFloat32, 3);
  Tensor t = base.permute({2, 0, 1});  // (5, 6, 8), no unit stride innermost
  for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1}, {2}, {0, 2}, {1, 2}, {}}) {
    expect_close(vals(sum(t, dims)), ref_reduce(t, dims, ref_sum), 1e-5);
    expect_close(vals(amax(t, dims)),
                 ref_reduce(t, dims,
                            [](const std::vector<double>& v) {
                              return *std::max_element(v.begin(), v.end());
                            }),
                 0);
  }
  Tensor sl = base.slice(1, 1, 8, 3);  // step 3
  expect_close(vals(sum(sl, {1})), ref_reduce(sl, {1}, ref_sum), 1e-5);
  Tensor ex = rand_tensor({4, 1}, kFloat32, 4).expand({4, 7});  // stride 0
  expect_close(vals(sum(ex, {1})), ref_reduce(ex, {1}, ref_sum), 1e-5);
  expect_close(vals(sum(ex, {0})), ref_reduce(ex, {0}, ref_sum), 1e-5);
  expect_close(vals(sum(ex)), ref_reduce(ex, {}, ref_sum), 1e-5);
}

TEST(Sum, LargeInnerOuterAndSplit) {
  // Inner (rows), outer (columns) and split (few outputs, long reduction) layouts.
  Tensor x = rand_tensor({300, 700}, kFloat32, 5);
  expect_close(vals(sum(x, {1})), ref_reduce(x, {1}, ref_sum), 1e-5, 1e-4);
  expect_close(vals(sum(x, {0})), ref_reduce(x, {0}, ref_sum), 1e-5, 1e-4);
  expect_close(vals(sum(x)), ref_reduce(x, {}, ref_sum), 1e-6, 1e-3);
  Tensor tall = rand_tensor({70000, 3}, kFloat32, 6);
  expect_close(vals(sum(tall, {0})), ref_reduce(tall, {0}, ref_sum), 1e-6, 1e-3);
  expect_close(vals(mean(tall, {0})), ref_reduce(tall, {0}, ref_mean), 1e-6, 1e-6);
  Tensor wide = rand_tensor({2, 150000}, kFloat32, 7);
  expect_close(vals(sum(wide, {1})), ref_reduce(wide, {1}, ref_sum), 1e-6, 1e-3);
  // float32 sums are accurate: 2^24 + many ones does not lose the ones.
  Tensor big = ones({1 << 20});
  EXPECT_EQ(sum(big).item<double>(), static_cast<double>(1 << 20));
  Tensor ints = rand_ints({50000, 4}, -100, 100, kInt32);
  expect_close(vals(sum(ints, {0})), ref_reduce(ints, {0}, ref_sum), 0, 0);
  expect_close(vals(sum(ints)), ref_reduce(ints, {}, ref_sum), 0, 0);
}

TEST(Prod, Values) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_EQ(prod(x).item<double>(), 720.0);
  EXPECT_EQ(vals(prod(x, 0)), (std::vector<double>{4, 10, 18}));
  EXPECT_EQ(vals(x.prod(-1, true)), (std::vector<double>{6, 120}));
  EXPECT_EQ(x.prod(-1, true).sizes(), (Shape{2, 1}));
  EXPECT_EQ(prod(tensor({2, 3}, {}, kInt32)).dtype(), kInt64);
  EXPECT_EQ(prod(tensor({true, true})).dtype(), kInt64);
  EXPECT_EQ(prod(tensor({true, false})).item<int64_t>(), 0);
  EXPECT_EQ(prod(tensor({2.0, 3.0}).to(kBFloat16)).dtype(), kBFloat16);
}

TEST(Mean, ValuesAndHalf) {
  Tensor x = rand_tensor({5, 7, 3}, kFloat64, 8);
  expect_close(vals(mean(x, {0, 2})), ref_reduce(x, {0, 2}, ref_mean), 1e-12);
  Tensor h = x.to(kFloat16);
  EXPECT_EQ(mean(h).dtype(), kFloat16);
  expect_close(vals(mean(h, {1})), ref_reduce(h, {1}, ref_mean), 2e-3, 2e-3);
}

// ---- max / min ----------------------------------------------------------------------------------

TEST(Extremes, Full) {
  Tensor x = tensor({3.0, -1.0, 7.0, 2.0}, {2, 2});
  EXPECT_EQ(max(x).item<double>(), 7.0);
  EXPECT_EQ(x.min().item<double>(), -1.0);
  EXPECT_EQ(max(x).dtype(), kFloat32);
  EXPECT_EQ(max(x).dim(), 0);
  EXPECT_TRUE(std::isnan(max(tensor({1.0, kNaN, 3.0})).item<double>()));
  EXPECT_TRUE(std::isnan(min(tensor({1.0, kNaN, 3.0})).item<double>()));
  EXPECT_EQ(max(tensor({-kInf, -kInf})).item<double>(), -kInf);
  EXPECT_EQ(max(tensor({true, false})).item<bool>(), true);
  EXPECT_EQ(min(tensor({true, false})).item<bool>(), false);
  EXPECT_EQ(max(tensor(std::vector<uint8_t>{3, 250, 7})).item<int64_t>(), 250);
  EXPECT_EQ(min(tensor(std::vector<int64_t>{INT64_MIN, 0})).item<int64_t>(), INT64_MIN);
  EXPECT_EQ(max(scalar_tensor(4.0)).item<double>(), 4.0);
  expect_error<ValueError>([] { max(empty({0, 3})); }, "[max] ");
  expect_error<ValueError>([] { min(empty({0})); }, "[min] ");
}

TEST(Extremes, DimWithIndices) {
  Tensor x = tensor({1.0, 5.0, 5.0, 2.0, 0.0, -3.0, 0.0, 9.0}, {2, 4});
  auto [v, i] = max(x, 1);
  EXPECT_EQ(vals(v), (std::vector<double>{5, 9}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));  // first of the tied 5s
  EXPECT_EQ(i.dtype(), kInt64);
  auto [vm, im] = x.min(-1, true);
  EXPECT_EQ(vm.sizes(), (Shape{2, 1}));
  EXPECT_EQ(vals(vm), (std::vector<double>{1, -3}));
  EXPECT_EQ(im.to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  auto [v0, i0] = min(x, 0);  // along the outer dim
  EXPECT_EQ(vals(v0), (std::vector<double>{0, -3, 0, 2}));
  EXPECT_EQ(i0.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 0}));
  // NaN is the extreme for both, and the first NaN's index is reported.
  Tensor n = tensor({1.0, kNaN, 3.0, kNaN});
  auto [nv, ni] = max(n, 0);
  EXPECT_TRUE(std::isnan(nv.item<double>()));
  EXPECT_EQ(ni.item<int64_t>(), 1);
  EXPECT_EQ(std::get<1>(min(n, 0)).item<int64_t>(), 1);
  Tensor nt = tensor({1.0, 2.0, kNaN, 4.0, 5.0, 0.0}, {3, 2});
  auto [ntv, nti] = max(nt, 0);
  EXPECT_TRUE(std::isnan(vals(ntv)[0]));
  EXPECT_EQ(nti.to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  // 0-dim input, empty input with a non-empty reduced dim, and errors.
  auto [zv, zi] = max(scalar_tensor(2.5), 0);
  EXPECT_EQ(zv.dim(), 0);
  EXPECT_EQ(zi.item<int64_t>(), 0);
  auto [ev, ei] = max(empty({0, 3}), 1);
  EXPECT_EQ(ev.sizes(), (Shape{0}));
  expect_error<IndexError>([] { max(empty({0, 3}), 0); }, "[max] ");
  expect_error<IndexError>([&] { min(x, 2); }, "[min] ");
  // bool and integer inputs.
  auto [bv, bi] = max(tensor({false, true, true}), 0);
  EXPECT_EQ(bv.item<bool>(), true);
  EXPECT_EQ(bi.item<int64_t>(), 1);
}

TEST(Extremes, IndicesMatchNaiveOnLayouts) {
  Tensor x = rand_ints({9, 13, 6}, -5, 5, kInt64, 11).to(kFloat32);  // many ties
  for (Tensor t : {x, x.permute({1, 2, 0}), x.slice(1, 0, 13, 2)}) {
    for (int64_t d = 0; d < 3; ++d) {
      auto [v, i] = max(t, d);
      auto g = groups(t, {d});
      std::vector<double> wv;
      std::vector<int64_t> wi;
      for (const auto& grp : g) {
        auto it = std::max_element(grp.begin(), grp.end());
        wv.push_back(*it);
        wi.push_back(it - grp.begin());
      }
      EXPECT_EQ(vals(v), wv);
      EXPECT_EQ(i.to_vector<int64_t>(), wi);
    }
  }
  // Long reductions with few outputs take the split path.
  Tensor big = rand_tensor({200000}, kFloat32, 12);
  std::vector<double> bv = vals(big);
  auto it = std::min_element(bv.begin(), bv.end());
  EXPECT_EQ(argmin(big).item<int64_t>(), it - bv.begin());
  Tensor big2 = rand_tensor({100000, 3}, kFloat32, 13);
  auto [v2, i2] = max(big2, 0);
  auto g2 = groups(big2, {0});
  for (int j = 0; j < 3; ++j) {
    auto m = std::max_element(g2[j].begin(), g2[j].end());
    EXPECT_EQ(i2.to_vector<int64_t>()[j], m - g2[j].begin());
  }
}

TEST(Extremes, AmaxAmin) {
  Tensor x = rand_tensor({4, 5, 6}, kFloat32, 14);
  auto mx = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  auto mn = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  expect_close(vals(amax(x, {0, 2})), ref_reduce(x, {0, 2}, mx), 0);
  expect_close(vals(x.amin({1}, true)), ref_reduce(x, {1}, mn), 0);
  EXPECT_EQ(x.amin({1}, true).sizes(), (Shape{4, 1, 6}));
  expect_close(vals(amax(x)), ref_reduce(x, {}, mx), 0);
  EXPECT_EQ(amax(x.to(kInt32)).dtype(), kInt32);
  EXPECT_EQ(amax(empty({0, 3}), {1}).sizes(), (Shape{0}));
  expect_error<IndexError>([] { amax(empty({0, 3})); }, "[amax] ");
  expect_error<IndexError>([] { amin(empty({2, 0}), {1}); }, "[amin] ");
  expect_error<ValueError>([&] { amax(x, {1, 1}); }, "[amax] ");
  EXPECT_TRUE(std::isnan(amin(tensor({1.0, kNaN})).item<double>()));
}

TEST(Extremes, Argmax) {
  Tensor x = tensor({1.0, 8.0, 3.0, 8.0, -2.0, 0.0}, {2, 3});
  EXPECT_EQ(argmax(x).item<int64_t>(), 1);  // flattened, first of ties
  EXPECT_EQ(argmin(x).item<int64_t>(), 4);
  EXPECT_EQ(argmax(x).dim(), 0);
  EXPECT_EQ(argmax(x, std::nullopt, true).sizes(), (Shape{1, 1}));
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(x.argmin(1, true).sizes(), (Shape{2, 1}));
  EXPECT_EQ(x.argmin(1, true).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  // Row-major order of the transposed view: [1, 8, 8, -2, 3, 0].
  EXPECT_EQ(argmax(x.t()).item<int64_t>(), 1);
  EXPECT_EQ(argmin(x.t()).item<int64_t>(), 3);
  EXPECT_EQ(argmax(scalar_tensor(1.0)).item<int64_t>(), 0);
  EXPECT_EQ(argmax(tensor({1, 9, 9}, {}, kUInt8)).item<int64_t>(), 1);
  expect_error<ValueError>([] { argmax(empty({0})); }, "[argmax] ");
  expect_error<IndexError>([] { argmin(empty({2, 0}), 1); }, "[argmin] ");
  expect_error<TypeError>([] { argmax(tensor({true})); }, "[argmax] ");
}

// ---- var / std / norms / logsumexp --------------------------------------------------------------

TEST(Var, Values) {
  Tensor x = rand_tensor({6, 9, 4}, kFloat64, 15);
  for (int64_t c : {0, 1, 2}) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {1}, {0, 2}}) {
      auto f = [c](const std::vector<double>& v) { return ref_var(v, c); };
      expect_close(vals(var(x, dims, c)), ref_reduce(x, dims, f), 1e-12);
      expect_close(
          vals(x.std(dims, c)),
          ref_reduce(x, dims, [&](const std::vector<double>& v) { return std::sqrt(f(v)); }),
          1e-12);
    }
  }
  auto [v, m] = var_mean(x, {1}, 1, true);
  EXPECT_EQ(v.sizes(), (Shape{6, 1, 4}));
  expect_close(vals(m), ref_reduce(x, {1}, ref_mean), 1e-12);
  expect_close(vals(v),
               ref_reduce(x, {1}, [](const std::vector<double>& g) { return ref_var(g, 1); }),
               1e-12);
  // Outer-dim layout and the transposed view.
  Tensor y = rand_tensor({3000, 5}, kFloat32, 16);
  expect_close(vals(var(y, {0})),
               ref_reduce(y, {0}, [](const std::vector<double>& g) { return ref_var(g, 1); }),
               1e-5);
  expect_close(vals(var(y.t(), {1})), vals(var(y, {0})), 1e-6);
}

TEST(Var, SplitReductionsMergeExactly) {
  // Long reductions with few outputs are split into chunks merged with Chan's formula.
  Tensor tall = rand_tensor({70000, 3}, kFloat64, 21, 5, 9);
  auto v1 = [](const std::vector<double>& g) { return ref_var(g, 1); };
  expect_close(vals(var(tall, {0})), ref_reduce(tall, {0}, v1), 1e-10);
  expect_close(vals(var(tall.t(), {1})), ref_reduce(tall, {0}, v1), 1e-10);
  expect_close(vals(var(tall)), ref_reduce(tall, {}, v1), 1e-10);
}

TEST(Reduce, ThreadCountDoesNotChangeResults) {
  Tensor x = rand_tensor({3, 200000}, kFloat32, 22);
  Tensor c = rand_tensor({90000, 5}, kFloat32, 23);
  const int saved = get_num_threads();
  set_num_threads(1);
  std::vector<double> a = vals(sum(x, {1})), b = vals(var(c, {0})), d = vals(logsumexp(x, {1}));
  std::vector<double> e = vals(sum(c, {0}));
  set_num_threads(4);
  EXPECT_EQ(vals(sum(c, {0})), e);
  EXPECT_EQ(vals(sum(x, {1})), a);
  EXPECT_EQ(vals(var(c, {0})), b);
  EXPECT_EQ(vals(logsumexp(x, {1})), d);
  set_num_threads(saved);
}

// float column sums (a bias gradient's shape) add each column's rows in order in double: exactly
// the sequential double sum rounded once, for an odd column count and for rows with a stride.
TEST(Sum, FloatColumnsAddRowsInOrderInDouble) {
  const Tensor base = rand_tensor({300, 50}, kFloat32, 24);
  for (const Tensor& x : {base.slice(1, 0, 37), base.slice(1, 0, 37).contiguous()}) {
    const std::vector<float> xv = x.contiguous().to_vector<float>();
    const std::vector<float> got = sum(x, {0}).to_vector<float>();
    ASSERT_EQ(got.size(), 37u);
    for (size_t j = 0; j < 37; ++j) {
      double acc = 0.0;
      for (size_t r = 0; r < 300; ++r) acc += static_cast<double>(xv[r * 37 + j]);
      EXPECT_EQ(got[j], static_cast<float>(acc)) << j;
    }
  }
}

TEST(Var, EdgeCasesAndAccuracy) {
  EXPECT_TRUE(std::isnan(var(tensor({3.0})).item<double>()));  // 0 / 0
  EXPECT_EQ(var(tensor({3.0}), {}, 0).item<double>(), 0.0);
  EXPECT_EQ(var(tensor({1.0, 3.0}), {}, 2).item<double>(), kInf);  // m2 / 0
  EXPECT_TRUE(std::isnan(var(empty({0})).item<double>()));
  EXPECT_EQ(var(scalar_tensor(2.0), {}, 0).item<double>(), 0.0);
  // A large offset does not wreck the variance (one-pass sum of squares would).
  std::vector<float> v;
  for (int i = 0; i < 10000; ++i) v.push_back(1e4f + static_cast<float>(i % 10));
  Tensor t = tensor(v);
  std::vector<double> dv(v.begin(), v.end());
  EXPECT_NEAR(var(t).item<double>(), ref_var(dv, 1), 1e-4);
  EXPECT_EQ(var(t.to(kFloat16)).dtype(), kFloat16);
  expect_error<TypeError>([] { var(tensor({1, 2})); }, "[var] ");
  expect_error<TypeError>([] { ember::std(tensor({1, 2})); }, "[std] ");
}

TEST(Norm, Orders) {
  Tensor x = tensor({3.0, -4.0, 0.0, 1.0, -2.0, 2.0}, {2, 3});
  EXPECT_NEAR(norm(x).item<double>(), std::sqrt(34.0), 1e-6);
  EXPECT_EQ(norm(x, 1).item<double>(), 12.0);
  EXPECT_EQ(norm(x, kInf).item<double>(), 4.0);
  EXPECT_EQ(norm(x, -kInf).item<double>(), 0.0);
  EXPECT_EQ(norm(x, 0).item<double>(), 5.0);
  EXPECT_NEAR(norm(x, 3).item<double>(), std::cbrt(27.0 + 64 + 1 + 8 + 8), 1e-5);
  EXPECT_NEAR(norm(x, 0.5).item<double>(),
              std::pow(std::sqrt(3.0) + 2 + 1 + 2 * std::sqrt(2.0), 2.0), 1e-4);
  Tensor r = x.norm(2, {1}, true);
  EXPECT_EQ(r.sizes(), (Shape{2, 1}));
  expect_close(vals(r), {5.0, 3.0}, 1e-6);
  // (sum |x|^-1)^-1 per column; a zero makes the sum inf and the norm 0.
  expect_close(vals(norm(x, -1, {0})), {0.75, 4.0 / 3.0, 0.0}, 1e-6);
  EXPECT_EQ(norm(x.to(kFloat16)).dtype(), kFloat16);
  EXPECT_TRUE(std::isnan(norm(tensor({1.0, kNaN}), kInf).item<double>()));
  EXPECT_EQ(norm(tensor({1e30f, 1e30f})).item<double>(),
            static_cast<double>(static_cast<float>(std::sqrt(2.0) * 1e30)));
  EXPECT_EQ(norm(empty({0})).item<double>(), 0.0);
  EXPECT_EQ(norm(empty({0}), 0).item<double>(), 0.0);
  expect_error<ValueError>([] { norm(empty({0}), kInf); }, "[norm] ");
  expect_error<ValueError>([] { norm(empty({2, 0}), -1, {1}); }, "[norm] ");
  EXPECT_EQ(norm(empty({2, 0}), kInf, {0}).sizes(), (Shape{0}));
  expect_error<TypeError>([] { norm(tensor({1, 2})); }, "[norm] ");
}

TEST(LogSumExp, StableAndInfinite) {
  Tensor x = rand_tensor({4, 6}, kFloat64, 17, -5, 5);
  auto lse = [](const std::vector<double>& v) {
    double s = 0;
    for (double a : v) s += std::exp(a);
    return std::log(s);
  };
  expect_close(vals(logsumexp(x, {1})), ref_reduce(x, {1}, lse), 1e-12);
  expect_close(vals(x.logsumexp({0}, true)), ref_reduce(x, {0}, lse), 1e-12);
  expect_close(vals(logsumexp(x, {})), ref_reduce(x, {}, lse), 1e-12);
  EXPECT_NEAR(logsumexp(tensor({1000.0, 1000.0}), {0}).item<double>(), 1000 + std::log(2.0), 1e-3);
  EXPECT_NEAR(logsumexp(tensor({-1000.0, -1000.0}), {0}).item<double>(), -1000 + std::log(2.0),
              1e-3);
  EXPECT_EQ(logsumexp(tensor({-kInf, -kInf}), {0}).item<double>(), -kInf);
  EXPECT_EQ(logsumexp(tensor({-kInf, 2.0, kInf, kInf}), {0}).item<double>(), kInf);
  EXPECT_TRUE(std::isnan(logsumexp(tensor({kInf, kNaN, 1.0}), {0}).item<double>()));
  EXPECT_TRUE(std::isnan(logsumexp(tensor({-kInf, kNaN}), {0}).item<double>()));
  EXPECT_EQ(logsumexp(empty({0}), {0}).item<double>(), -kInf);
  Tensor i = tensor({1, 2, 3});
  EXPECT_EQ(logsumexp(i, {0}).dtype(), kFloat32);
  EXPECT_NEAR(logsumexp(i, {0}).item<double>(), std::log(std::exp(1) + std::exp(2) + std::exp(3)),
              1e-5);
  // Long rows (split path) keep the online rescaling right.
  Tensor big = rand_tensor({300000}, kFloat32, 18, -30, 30);
  EXPECT_NEAR(logsumexp(big, {0}).item<double>(), ref_reduce(big, {}, lse)[0], 1e-4);
}

// ---- any / all ----------------------------------------------------------------------------------

TEST(Logical, AnyAll) {
  Tensor x = tensor({0.0, 0.0, 1.0, 0.0, kNaN, 0.0}, {2, 3});
  EXPECT_EQ(any(x).dtype(), kBool);
  EXPECT_TRUE(any(x).item<bool>());
  EXPECT_FALSE(all(x).item<bool>());
  EXPECT_EQ(any(x, 0).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(x.all(1, true).sizes(), (Shape{2, 1}));
  EXPECT_TRUE(all(tensor({kNaN, 1.0})).item<bool>());  // NaN is truthy
  EXPECT_TRUE(all(empty({0})).item<bool>());
  EXPECT_FALSE(any(empty({0})).item<bool>());
  EXPECT_EQ(any(empty({0, 2}), 0).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(any(tensor({0, 3}, {}, kUInt8)).dtype(), kUInt8);
  EXPECT_EQ(all(tensor({1, 3}, {}, kInt32)).dtype(), kBool);
  EXPECT_TRUE(all(tensor({1, 3}, {}, kInt32)).item<bool>());
  EXPECT_FALSE(all(tensor({true, false})).item<bool>());
  EXPECT_TRUE(any(scalar_tensor(2.0)).item<bool>());
  Tensor big = zeros({100000}, kBool);
  EXPECT_FALSE(any(big).item<bool>());
  big.select(0, 77777).fill_(true);
  EXPECT_TRUE(any(big).item<bool>());
  EXPECT_FALSE(all(big).item<bool>());
}

// ---- scans --------------------------------------------------------------------------------------

TEST(Scan, CumsumCumprod) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3});
  EXPECT_EQ(vals(cumsum(x, 1)), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(vals(cumsum(x, 0)), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(vals(x.cumprod(-1)), (std::vector<double>{1, 2, 6, 4, 20, 120}));
  EXPECT_EQ(vals(cumprod(x, 0)), (std::vector<double>{1, 2, 3, 4, 10, 18}));
  EXPECT_EQ(vals(cumsum(x.t(), 1)), (std::vector<double>{1, 5, 2, 7, 3, 9}));
  Tensor i = tensor({1, 2, 3}, {}, kInt32);
  EXPECT_EQ(cumsum(i, 0).dtype(), kInt64);
  EXPECT_EQ(cumsum(tensor({true, true}), 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(cumsum(i, 0, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(cumprod(i, 0, kInt32).dtype(), kInt32);
  EXPECT_EQ(cumsum(x.to(kFloat16), 1).dtype(), kFloat16);
  EXPECT_EQ(cumsum(scalar_tensor(3.0), 0).item<double>(), 3.0);
  EXPECT_EQ(cumsum(scalar_tensor(3.0), -1).dim(), 0);
  EXPECT_EQ(cumsum(empty({0, 3}), 0).sizes(), (Shape{0, 3}));
  expect_error<IndexError>([&] { cumsum(x, 2); }, "[cumsum] ");
  Tensor n = cumsum(tensor({1.0, kNaN, 1.0}), 0);
  EXPECT_TRUE(std::isnan(vals(n)[2]));
  // Long rows: float16 accumulates wide, so 4096 ones reach 4096.
  EXPECT_EQ(vals(cumsum(ones({4096}, kFloat16), 0))[4095], 4096.0);
  Tensor r = rand_tensor({50, 40, 30}, kFloat64, 19);
  std::vector<double> rv = vals(r), cv = vals(cumsum(r, 1));
  for (int a = 0; a < 50; a += 7) {
    for (int c = 0; c < 30; c += 5) {
      double s = 0;
      for (int b = 0; b < 40; ++b) {
        s += rv[(a * 40 + b) * 30 + c];
        EXPECT_NEAR(cv[(a * 40 + b) * 30 + c], s, 1e-12);
      }
    }
  }
}

// ---- softmax ------------------------------------------------------------------------------------

namespace {
std::vector<double> ref_softmax(const Tensor& x, int64_t dim, bool log) {
  // Softmax along dim via groups (dim moved last keeps row-major order per group).
  Tensor moved = x.movedim(dim, -1).contiguous();
  std::vector<double> out;
  for (const auto& g : groups(moved, {-1})) {
    double m = -kInf;
    for (double v : g) m = std::max(m, v);
    double s = 0;
    for (double v : g) s += std::exp(v - m);
    for (double v : g) out.push_back(log ? v - m - std::log(s) : std::exp(v - m) / s);
  }
  // Back to x's layout.
  Shape ms = moved.sizes();
  Tensor back = tensor(out, ms).movedim(-1, dim).contiguous();
  return vals(back);
}
}  // namespace

TEST(Softmax, ValuesAlongEachDim) {
  Tensor x = rand_tensor({5, 7, 300}, kFloat32, 20, -20, 20);
  for (int64_t d = 0; d < 3; ++d) {
    expect_close(vals(softmax(x, d)), ref_softmax(x, d, false), 2e-6, 1e-7);
    expect_close(vals(log_softmax(x, d)), ref_softmax(x, d, true), 2e-6, 2e-5);
  }
  Tensor t = x.permute({2, 0, 1});
  expect_close(vals(t.softmax(0)), ref_softmax(t, 0, false), 2e-6, 1e-7);
  Tensor xd = x.to(kFloat64);
  expect_close(vals(softmax(xd, -1)), ref_softmax(xd, 2, false), 1e-13, 1e-16);
  expect_close(vals(xd.log_softmax(1)), ref_softmax(xd, 1, true), 1e-13, 1e-13);
  Tensor h = x.to(kBFloat16);
  EXPECT_EQ(softmax(h, 1).dtype(), kBFloat16);
  expect_close(vals(softmax(h, 2)), ref_softmax(h, 2, false), 1e-2, 1e-4);
  expect_close(vals(log_softmax(x.to(kFloat16), 0)), ref_softmax(x.to(kFloat16), 0, true), 1e-3,
               2e-2);
}

TEST(Softmax, EdgeCases) {
  Tensor big = tensor({1000.0, 1000.0, -1000.0});
  expect_close(vals(softmax(big, 0)), {0.5, 0.5, 0.0}, 1e-6);
  expect_close(vals(log_softmax(big, 0)), {-std::log(2.0), -std::log(2.0), -2000 - std::log(2.0)},
               1e-5);
  expect_close(vals(softmax(tensor({-kInf, 0.0, -kInf}), 0)), {0, 1, 0}, 0);
  std::vector<double> allinf = vals(softmax(tensor({-kInf, -kInf}), 0));
  EXPECT_TRUE(std::isnan(allinf[0]) && std::isnan(allinf[1]));
  std::vector<double> withnan = vals(softmax(tensor({1.0, kNaN, 2.0}), 0));
  EXPECT_TRUE(std::isnan(withnan[0]) && std::isnan(withnan[2]));
  EXPECT_EQ(softmax(scalar_tensor(3.0), 0).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(scalar_tensor(3.0), -1).item<double>(), 0.0);
  EXPECT_EQ(softmax(empty({0, 4}), 1).sizes(), (Shape{0, 4}));
  EXPECT_EQ(softmax(empty({3, 0}), 1).sizes(), (Shape{3, 0}));
  Tensor i = tensor({1, 2, 3});
  expect_error<TypeError>([&] { softmax(i, 0); }, "[softmax] ");
  expect_error<TypeError>([&] { log_softmax(i, 0); }, "[log_softmax] ");
  EXPECT_EQ(softmax(i, 0, kFloat64).dtype(), kFloat64);
  expect_close(vals(softmax(i, 0, kFloat64)), ref_softmax(i.to(kFloat64), 0, false), 1e-14);
  EXPECT_EQ(softmax(tensor({1.0, 2.0}).to(kFloat16), 0, kFloat32).dtype(), kFloat32);
  expect_error<IndexError>([&] { softmax(i.to(kFloat32), 1); }, "[softmax] ");
  // Long rows: the sum stays accurate.
  Tensor row = zeros({1, 100000});
  std::vector<double> p = vals(softmax(row, 1));
  EXPECT_NEAR(p[0], 1e-5, 1e-11);
}

TEST(Softmax, ExpAccuracy) {
  // softmax([v, 0])[0] = exp(v) / (exp(v) + 1) exercises the vectorised float exp from the
  // subnormal range up to 0.5.
  std::vector<float> pairs;
  std::vector<double> xs;
  for (float v = -110.0f; v < 0.5f; v += 0.0137f) {
    xs.push_back(v);
    pairs.push_back(v);
    pairs.push_back(0.0f);
  }
  std::vector<double> got = vals(softmax(tensor(pairs, {static_cast<int64_t>(xs.size()), 2}), 1));
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::exp(xs[i]) / (std::exp(xs[i]) + 1.0);
    EXPECT_NEAR(got[2 * i], want, 4e-7 * want + 1e-44) << "x = " << xs[i];
  }
}
