// Tensors, views, dtypes, devices, element-wise basics.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

TEST(Device, Parses) {
  EXPECT_TRUE(Device("cpu").is_cpu());
  EXPECT_EQ(Device("cuda").index(), -1);
  EXPECT_EQ(Device("cuda:1").index(), 1);
  EXPECT_EQ(Device("cuda:1").str(), "cuda:1");
  EXPECT_THROW(Device("gpu"), Error);
  EXPECT_THROW(Device("cuda:"), Error);
  EXPECT_THROW(Device("cuda:-1"), Error);
  EXPECT_THROW(Device("cuda:1x"), Error);
  EXPECT_THROW(Device("CUDA:0"), Error);
}

TEST(Tensor, FactoriesAndViews) {
  Tensor a = arange(6).view({2, 3});
  EXPECT_EQ(a.sizes(), (Shape{2, 3}));
  EXPECT_EQ(a.dtype(), kInt64);
  Tensor t = a.t();
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.contiguous().to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  Tensor b = (a + 1) * 2;
  EXPECT_EQ(b.to_vector<int64_t>(), (std::vector<int64_t>{2, 4, 6, 8, 10, 12}));
  Tensor f = a.to(kFloat32) / 2;
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(f.to_vector<float>()[5], 2.5f);
  EXPECT_THROW(t.view({6}), Error);
  EXPECT_EQ(t.reshape({6}).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}
