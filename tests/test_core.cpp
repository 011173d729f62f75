// Core semantics: dtypes and promotion, devices, shapes, views, factories, errors, threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "ember/ember.h"

using namespace ember;

// ---- dtypes ------------------------------------------------------------------------------------

TEST(DType, SizesNamesAndCategories) {
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kInt64), 8u);
  EXPECT_EQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_TRUE(is_floating_point(kFloat16));
  EXPECT_FALSE(is_integral(kBool));
  EXPECT_TRUE(is_integral(kBool, true));
  EXPECT_EQ(default_dtype(), kFloat32);
  EXPECT_THROW(set_default_dtype(kInt32), TypeError);
}

TEST(DType, PromotionLattice) {
  EXPECT_EQ(promote_types(kBool, kInt8), kInt8);
  EXPECT_EQ(promote_types(kUInt8, kInt8), kInt32);  // int16 in PyTorch; ember has none
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kBFloat16, kBFloat16), kBFloat16);
  EXPECT_EQ(promote_types(kFloat32, kFloat64), kFloat64);
  for (int a = 0; a < kNumDTypes; ++a) {
    for (int b = 0; b < kNumDTypes; ++b) {
      EXPECT_EQ(promote_types(DType(a), DType(b)), promote_types(DType(b), DType(a)));
    }
  }
}

TEST(DType, ResultTypeFollowsPyTorch) {
  Tensor i32 = ones({2}, kInt32), f16 = ones({2}, kFloat16), b = ones({2}, kBool);
  // Python-style scalars do not raise a tensor within its category.
  EXPECT_EQ((i32 + 1).dtype(), kInt32);
  EXPECT_EQ((i32 * 2.5).dtype(), kFloat32);  // float scalar on an int tensor: the default float
  EXPECT_EQ((f16 * 2.5).dtype(), kFloat16);
  EXPECT_EQ((b + 1).dtype(), kInt64);
  EXPECT_EQ((b + true).dtype(), kBool);
  // 0-dim tensors behave like scalars unless of a higher category.
  EXPECT_EQ((i32 + scalar_tensor(5)).dtype(), kInt32);
  EXPECT_EQ((i32 + scalar_tensor(5.0, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((f16 + scalar_tensor(5.0, kFloat64)).dtype(), kFloat16);
  EXPECT_EQ((ones({2}, kInt8) + ones({2}, kInt64)).dtype(), kInt64);
  // True division of integers gives the default float.
  EXPECT_EQ((i32 / i32).dtype(), kFloat32);
  EXPECT_EQ(div(i32, i32, "floor").dtype(), kInt32);
  EXPECT_EQ((i32 < 2).dtype(), kBool);
}

TEST(DType, HalfAndBFloat16Round) {
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);                                  // rounds to inf
  EXPECT_EQ(static_cast<float>(Half(5.9604645e-08f)), 5.9604645e-08f);  // smallest subnormal
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).x, 0x3c00);  // ties to even
  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
  // Compute in float32, round once.
  Tensor h = tensor({1.0, 2.0}, {}, kFloat16);
  EXPECT_EQ((h / 3).to_vector<float>()[0], static_cast<float>(Half(1.0f / 3.0f)));
}

// ---- devices -----------------------------------------------------------------------------------

TEST(Device, Parses) {
  EXPECT_TRUE(Device("cpu").is_cpu());
  EXPECT_TRUE(Device("cuda").is_cuda());
  EXPECT_EQ(Device("cuda").index(), -1);
  EXPECT_EQ(Device("cuda:1").index(), 1);
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_EQ(Device(kCUDA, 0), Device("cuda:0"));
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", "CUDA:0", "cuda:01", "cpu:1", ""}) {
    EXPECT_THROW(Device{std::string_view(bad)}, Error) << bad;
  }
  try {
    Device("tpu");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[Device] invalid device string 'tpu'"),
              std::string::npos);
  }
}

TEST(Device, CudaWithoutBackendRaisesClearly) {
  try {
    zeros({2}, Device("cuda:0"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[cuda]"), std::string::npos) << e.what();
  }
}

// ---- shapes, views -----------------------------------------------------------------------------

TEST(Shape, InlineAndHeap) {
  Shape s{1, 2, 3};
  EXPECT_EQ(s.numel(), 6);
  EXPECT_EQ(s, (std::vector<int64_t>{1, 2, 3}));
  Shape big{1, 2, 3, 4, 5, 6, 7, 8};
  big.push_back(9);
  EXPECT_EQ(big.size(), 9u);
  Shape moved = std::move(big);
  EXPECT_EQ(moved[8], 9);
  Shape copy = moved;
  copy[0] = 7;
  EXPECT_EQ(moved[0], 1);
  EXPECT_EQ(Shape{}.numel(), 1);
}

TEST(Views, ShareStorage) {
  Tensor a = arange(12).view({3, 4});
  EXPECT_EQ(a.dtype(), kInt64);
  Tensor t = a.t();
  EXPECT_TRUE(t.is_same_storage(a));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.sizes(), (Shape{4, 3}));
  EXPECT_EQ(t.strides(), (Shape{1, 4}));
  EXPECT_EQ(t.contiguous().to_vector<int64_t>(),
            (std::vector<int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  a.select(0, 1).fill_(-1);  // writes through the view
  EXPECT_EQ(a.to_vector<int64_t>()[5], -1);
  EXPECT_EQ(a.narrow(1, 1, 2).sizes(), (Shape{3, 2}));
  EXPECT_EQ(a.narrow(1, 1, 2).storage_offset(), 1);
  EXPECT_EQ(a.slice(1, 0, std::nullopt, 2).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 2, -1, -1, 8, 10}));
  EXPECT_EQ(a.permute({1, 0}).sizes(), (Shape{4, 3}));
  EXPECT_EQ(a.unsqueeze(1).sizes(), (Shape{3, 1, 4}));
  EXPECT_EQ(a.unsqueeze(-1).sizes(), (Shape{3, 4, 1}));
  EXPECT_EQ(a.unsqueeze(1).squeeze().sizes(), (Shape{3, 4}));
  EXPECT_EQ(a.unsqueeze(0).squeeze(0).sizes(), (Shape{3, 4}));
  EXPECT_EQ(a.flatten().sizes(), (Shape{12}));
  EXPECT_EQ(a.view({2, -1, 3}).sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(a.unflatten(1, {2, 2}).sizes(), (Shape{3, 2, 2}));
  EXPECT_EQ(a.movedim(0, 1).sizes(), (Shape{4, 3}));
  Tensor e = tensor({1.0, 2.0}).view({2, 1}).expand({2, 3});
  EXPECT_EQ(e.strides(), (Shape{1, 0}));
  EXPECT_EQ(e.contiguous().to_vector<float>(), (std::vector<float>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(tensor({1.0}).expand({2, 0}).numel(), 0);
}

TEST(Views, SplitChunkUnbind) {
  Tensor a = arange(10);
  auto parts = a.split(4);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].to_vector<int64_t>(), (std::vector<int64_t>{8, 9}));
  auto sized = a.split(std::vector<int64_t>{3, 7});
  EXPECT_EQ(sized[1].numel(), 7);
  auto chunks = a.chunk(3);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].numel(), 4);
  EXPECT_EQ(chunks[2].numel(), 2);
  auto rows = arange(6).view({2, 3}).unbind(1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1].to_vector<int64_t>(), (std::vector<int64_t>{1, 4}));
}

TEST(Views, ViewVersusReshape) {
  Tensor t = arange(6).view({2, 3}).t();
  try {
    t.view({6});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[view] view size is not compatible"), std::string::npos);
  }
  Tensor r = t.reshape({6});
  EXPECT_FALSE(r.is_same_storage(t));
  EXPECT_EQ(r.to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  // A transposed tensor whose split dim is contiguous is still viewable.
  Tensor u = arange(24).view({2, 3, 4}).transpose(0, 1);
  EXPECT_TRUE(u.view({3, 2, 2, 2}).is_same_storage(u));
}

TEST(Views, BadInputRaises) {
  Tensor a = zeros({2, 3});
  EXPECT_THROW(a.view({4, 2}), ValueError);
  EXPECT_THROW(a.view({-1, -1}), ValueError);
  EXPECT_THROW(a.transpose(0, 2), IndexError);
  EXPECT_THROW(a.select(0, 2), IndexError);
  EXPECT_THROW(a.select(1, -4), IndexError);
  EXPECT_THROW(a.narrow(1, 2, 2), IndexError);
  EXPECT_THROW(a.expand({3, 3}), ValueError);
  EXPECT_THROW(a.expand({3}), ValueError);
  EXPECT_THROW(a.permute({0, 0}), ValueError);
  EXPECT_THROW(a.permute({0}), ValueError);
  EXPECT_THROW(a.unsqueeze(3), IndexError);
  EXPECT_THROW(a.split(0), ValueError);
  EXPECT_THROW(a.chunk(0), ValueError);
  EXPECT_THROW(a.slice(0, 0, 1, 0), ValueError);
  EXPECT_THROW(zeros({2, 3, 4}).t(), ValueError);
  EXPECT_THROW(a.as_strided({10}, {1}, 0), IndexError);
  try {
    a.size(5);
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "Dimension out of range (expected to be in range of [-2, 1], but got 5)"),
              std::string::npos);
  }
}

// ---- factories ---------------------------------------------------------------------------------

TEST(Factories, ValuesAndDtypes) {
  EXPECT_EQ(zeros({2, 3}).dtype(), kFloat32);
  EXPECT_EQ(ones({2}, kInt32).to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(full({2}, 7).dtype(), kInt64);
  EXPECT_EQ(full({2}, 7.5).dtype(), kFloat32);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_EQ(arange(5).dtype(), kInt64);
  EXPECT_EQ(arange(0, 1, 0.25).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(arange(5, 0, -2).to_vector<int64_t>(), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(tensor({1, 2}).dtype(), kInt64);
  EXPECT_EQ(tensor({1.5, 2.5}).dtype(), kFloat32);
  EXPECT_EQ(tensor(std::vector<double>{1.5}).dtype(), kFloat64);
  EXPECT_EQ(tensor({true, false}).dtype(), kBool);
  EXPECT_EQ(tensor({1, 2, 3, 4}, {2, 2}).sizes(), (Shape{2, 2}));
  EXPECT_EQ(scalar_tensor(3).dim(), 0);
  EXPECT_EQ(scalar_tensor(3).item<int64_t>(), 3);
  EXPECT_EQ(zeros_like(ones({2, 2}, kInt8)).dtype(), kInt8);
  EXPECT_EQ(ones({0, 3}).numel(), 0);
  float buf[4] = {1, 2, 3, 4};
  Tensor blob = from_blob(buf, {2, 2});
  EXPECT_EQ(blob.t().contiguous().to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
}

TEST(Factories, BadInputRaises) {
  EXPECT_THROW(zeros({2, -1}), ValueError);
  EXPECT_THROW(empty({INT64_MAX, 4}), ValueError);
  EXPECT_THROW(empty({int64_t(1) << 62, 8}), ValueError);
  EXPECT_THROW(arange(0, 5, 0), ValueError);
  EXPECT_THROW(arange(5, 0, 1), ValueError);
  EXPECT_THROW(tensor({1, 2, 3}, {2, 2}), ValueError);
  EXPECT_THROW(linspace(0, 1, -1), ValueError);
  EXPECT_THROW(ones({3}).item<float>(), ValueError);
  EXPECT_THROW(ones({3}).data_ptr<double>(), TypeError);
  EXPECT_THROW(Tensor().dim(), Error);
}

TEST(Conversion, EveryPairOfDtypes) {
  std::vector<double> vals = {0, 1, -2, 3.75, 100, -0.5};
  for (int a = 0; a < kNumDTypes; ++a) {
    for (int b = 0; b < kNumDTypes; ++b) {
      DType from = DType(a), to = DType(b);
      Tensor src = tensor(vals).to(from);
      Tensor dst = src.to(to);
      ASSERT_EQ(dst.dtype(), to);
      std::vector<double> s = src.to_vector<double>(), d = dst.to_vector<double>();
      for (size_t i = 0; i < vals.size(); ++i) {
        double want = s[i];
        if (to == kBool)
          want = s[i] != 0;
        else if (is_integral(to)) {
          int64_t t = static_cast<int64_t>(std::trunc(s[i]));
          if (to == kUInt8)
            want = static_cast<uint8_t>(t);
          else if (to == kInt8)
            want = static_cast<int8_t>(t);
          else
            want = static_cast<double>(t);
        } else if (to == kFloat16)
          want = static_cast<float>(Half(static_cast<float>(s[i])));
        else if (to == kBFloat16)
          want = static_cast<float>(BFloat16(static_cast<float>(s[i])));
        EXPECT_EQ(d[i], want) << dtype_name(from) << " -> " << dtype_name(to) << " value " << s[i];
      }
    }
  }
  // NaN and out-of-range floats convert without undefined behaviour.
  Tensor weird = tensor({std::nan(""), 1e30, -1e30}, {}, kFloat64);
  EXPECT_EQ(weird.to(kInt64).to_vector<int64_t>()[0], 0);
  EXPECT_EQ(weird.to(kBool).to_vector<bool>(), (std::vector<bool>{true, true, true}));
}

// ---- element-wise rules -------------------------------------------------------------------------

TEST(Elementwise, BroadcastingAndErrors) {
  Tensor a = arange(6, kFloat32).view({2, 3});
  Tensor b = tensor({10.0, 20.0}).view({2, 1});
  EXPECT_EQ((a + b).to_vector<float>(), (std::vector<float>{10, 11, 12, 23, 24, 25}));
  EXPECT_EQ(add(a, b, 2).to_vector<float>()[0], 20.f);
  try {
    a + ones({4});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[add]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(add(ones({2}, kInt32), ones({2}, kInt32), 1.5), TypeError);
  EXPECT_THROW(ones({2}, kBool) - ones({2}, kBool), TypeError);
  EXPECT_THROW(bitwise_and(ones({2}), ones({2})), TypeError);
  EXPECT_THROW(div(ones({2}), ones({2}), "ceil"), ValueError);
  EXPECT_THROW(gelu(ones({2}), "fast"), ValueError);
  EXPECT_THROW(silu(ones({2}, kInt64)), TypeError);
  EXPECT_THROW(neg(ones({2}, kBool)), TypeError);
  EXPECT_THROW(div(ones({2}, kInt64), zeros({2}, kInt64), "floor"), ValueError);
  EXPECT_THROW(remainder(ones({2}, kInt32), 0), ValueError);
  EXPECT_THROW(pow(ones({2}, kInt64), -1), ValueError);
  EXPECT_THROW(clamp(ones({2}), std::optional<Scalar>(), std::optional<Scalar>()), ValueError);
  EXPECT_THROW(where(ones({2}), ones({2}), ones({2})), TypeError);
}

TEST(Elementwise, InPlaceRules) {
  Tensor a = ones({2, 3});
  a.add_(tensor({1.0, 2.0, 3.0}));
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{2, 3, 4, 2, 3, 4}));
  a *= 2;
  EXPECT_EQ(a.to_vector<float>()[0], 4.f);
  Tensor i = ones({3}, kInt64);
  EXPECT_THROW(i.add_(ones({3})), TypeError);  // float can't be cast to int64 in place
  EXPECT_THROW(i.div_(2), TypeError);
  i.add_(ones({3}, kInt32));  // fine: int32 -> int64
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 2}));
  Tensor small = ones({3});
  EXPECT_THROW(small.add_(ones({2, 3})), ValueError);  // broadcast shape differs from self's
  // Overlapping source and destination: in-place on a view of itself.
  Tensor m = arange(4, kFloat32).view({2, 2});
  m.add_(m.t());
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 3, 3, 6}));
  Tensor c = arange(4, kFloat32).view({2, 2});
  c.copy_(c.t());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 2, 1, 3}));
  Tensor f = ones({2});
  f.fill_(2.5).clamp_(0, 1);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(Elementwise, SpecialValues) {
  Tensor x = tensor({-1.0, 0.0, std::nan(""), INFINITY});
  auto r = relu(x).to_vector<float>();
  EXPECT_EQ(r[0], 0.f);
  EXPECT_TRUE(std::isnan(r[2]));
  auto m = maximum(x, zeros({4})).to_vector<float>();
  EXPECT_TRUE(std::isnan(m[2]));  // NaN propagates like PyTorch
  EXPECT_EQ(round(tensor({0.5, 1.5, 2.5, -0.5})).to_vector<float>(),
            (std::vector<float>{0, 2, 2, -0}));
  EXPECT_EQ(div(tensor({7, -7}), tensor({2, 2}), "floor").to_vector<int64_t>(),
            (std::vector<int64_t>{3, -4}));
  EXPECT_EQ(div(tensor({7, -7}), tensor({2, 2}), "trunc").to_vector<int64_t>(),
            (std::vector<int64_t>{3, -3}));
  EXPECT_EQ(remainder(tensor({-7, 7}), 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(fmod(tensor({-7, 7}), 3).to_vector<int64_t>(), (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(pow(tensor({2, 3}), 3).to_vector<int64_t>(), (std::vector<int64_t>{8, 27}));
  EXPECT_EQ(isnan(x).to_vector<bool>(), (std::vector<bool>{false, false, true, false}));
  EXPECT_TRUE(allclose(tensor({1.0, 2.0}), tensor({1.0, 2.0 + 1e-7})));
  EXPECT_FALSE(allclose(tensor({1.0}), tensor({1.1})));
  EXPECT_TRUE(equal(arange(3), arange(3)));
  EXPECT_FALSE(equal(arange(3), arange(4)));
}

// where's contiguous and scalar-operand loops select bits: NaN, infinities and signed zeros pass
// through unchanged, for long runs (vectorised) and short ones.
TEST(Elementwise, WhereKeepsSpecialValuesOnEveryLayout) {
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, -0.0f, 0.0f, 1.5f, -2.25f};
  for (int64_t n : {int64_t{7}, int64_t{1001}}) {
    std::vector<float> av(static_cast<size_t>(n)), bv(static_cast<size_t>(n));
    std::vector<float> cf(static_cast<size_t>(n));
    std::vector<bool> cv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      av[static_cast<size_t>(i)] = specials[i % 7];
      bv[static_cast<size_t>(i)] = specials[(i * 3 + 1) % 7];
      cv[static_cast<size_t>(i)] = (i * 5) % 3 == 0 || i % 7 == 2;
      cf[static_cast<size_t>(i)] = cv[static_cast<size_t>(i)] ? 1.0f : 0.0f;
    }
    const Tensor a = tensor(av), b = tensor(bv);
    const Tensor c = tensor(cf) != 0;
    auto bits = [](float f) {
      uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      return u;
    };
    const std::vector<float> both = where(c, a, b).to_vector<float>();
    const std::vector<float> lhs = where(c, a, -0.0).to_vector<float>();
    const std::vector<float> rhs = where(c, INFINITY, b).to_vector<float>();
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      ASSERT_EQ(bits(both[k]), bits(cv[k] ? av[k] : bv[k])) << i;
      ASSERT_EQ(bits(lhs[k]), bits(cv[k] ? av[k] : -0.0f)) << i;
      ASSERT_EQ(bits(rhs[k]), bits(cv[k] ? INFINITY : bv[k])) << i;
    }
    // Other dtypes take the same loops with a plain select.
    const std::vector<int64_t> ints = where(c, a.to(kInt64), 7).to_vector<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (std::isfinite(av[k])) ASSERT_EQ(ints[k], cv[k] ? static_cast<int64_t>(av[k]) : 7) << i;
    }
  }
}

TEST(Elementwise, PowByOneIsTheInput) {
  const Tensor x = tensor({-1.5, 0.0, -0.0, 3.0, std::nan(""), INFINITY, -INFINITY});
  const std::vector<float> y = pow(x, 1).to_vector<float>(), xv = x.to_vector<float>();
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::isnan(xv[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    } else {
      EXPECT_EQ(y[i], xv[i]);
      EXPECT_EQ(std::signbit(y[i]), std::signbit(xv[i])) << i;
    }
  }
}

// ---- threads -----------------------------------------------------------------------------------

TEST(Threads, ParallelForCoversRangeAndPropagatesErrors) {
  int old = get_num_threads();
  set_num_threads(2);
  EXPECT_EQ(get_num_threads(), 2);
  std::vector<std::atomic<int>> hits(100000);
  parallel_for(100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  // Small ranges stay on the calling thread.
  bool inline_run = false;
  parallel_for(10, 1000, [&](int64_t, int64_t) { inline_run = !in_parallel_region(); });
  EXPECT_TRUE(inline_run);
  EXPECT_THROW(parallel_for(100000, 10,
                            [](int64_t b, int64_t) {
                              if (b > 50000) throw ValueError("boom");
                            }),
               ValueError);
  EXPECT_THROW(set_num_threads(0), ValueError);
  // Large ops give the same answer with one or two threads.
  Tensor a = arange(200000, kFloat32).div(1000).view({400, 500}).t();
  Tensor two = sin(a) + a;
  set_num_threads(1);
  Tensor one = sin(a) + a;
  EXPECT_TRUE(equal(one, two));
  set_num_threads(old);
}

// ---- host allocator ---------------------------------------------------------------------------

TEST(HostAllocator, ReusesLargeBlocksAndPoisonsThem) {
  void* first;
  {
    Tensor a = empty({1 << 20});  // 4 MiB: cached after free
    first = a.data_ptr();
  }
  Tensor b = empty({1 << 20});
  EXPECT_EQ(b.data_ptr(), first);  // the freed block came back without a fresh mmap
  b.fill_(1);
  b = Tensor();
  set_cpu_alloc_poison(true, 0xFF);
  Tensor c = empty({1 << 20});
  set_cpu_alloc_poison(false);
  EXPECT_TRUE(std::isnan(c.to_vector<float>()[12345]));  // reused memory is poisoned too
  // Nearby sizes share a size class; the cache can be emptied.
  c = Tensor();
  Tensor d = empty({(1 << 20) - 1000});
  EXPECT_EQ(d.data_ptr(), first);
  d = Tensor();
  cpu_empty_cache();
  Tensor e = ones({1 << 20});
  EXPECT_EQ(e.sum().item<float>(), float(1 << 20));
  // Small blocks are cached too: a freed 32-byte buffer serves the next one of its class.
  void* small = nullptr;
  {
    Tensor s = empty({8});
    small = s.data_ptr();
  }
  Tensor s2 = empty({16});
  EXPECT_EQ(s2.data_ptr(), small);
}
