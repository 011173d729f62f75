// Random numbers on an emulated device are bit-identical to the CPU's for the same seed: every
// random op, several dtypes, contiguous and non-contiguous outputs, and sizes that end mid-block.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <vector>

#include "ember/ember.h"
#include "ember/random.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

const Device kCpu("cpu"), kGpu("cuda:0");

// A (7, 5) output on dev: contiguous, transposed (a (5, 7) buffer read as its transpose), or every
// other column of a (7, 10) buffer.
enum class Layout { Contiguous, Transposed, Sliced };
Tensor make_out(DType dt, Device dev, Layout l) {
  const TensorOptions o = TensorOptions().dtype(dt).device(dev);
  switch (l) {
    case Layout::Transposed:
      return zeros({5, 7}, o).t();
    case Layout::Sliced:
      return zeros({7, 10}, o).slice(1, 0, std::nullopt, 2);
    default:
      return zeros({7, 5}, o);
  }
}

// fill(t) on a CPU tensor and on a device tensor of each layout, seeded alike: same bits.
void expect_same_bits(const char* what, DType dt, const std::function<void(Tensor&)>& fill) {
  for (Layout l : {Layout::Contiguous, Layout::Transposed, Layout::Sliced}) {
    manual_seed(77);
    Tensor host = make_out(dt, kCpu, Layout::Contiguous);
    fill(host);
    manual_seed(77);
    Tensor dev = make_out(dt, kGpu, l);
    fill(dev);
    EXPECT_EQ(bytes_of(dev), bytes_of(host))
        << what << " dtype " << dtype_name(dt) << " layout " << static_cast<int>(l);
  }
}

const std::vector<DType> kFloats = {kFloat16, kBFloat16, kFloat32, kFloat64};
const std::vector<DType> kAll = {kBool,    kUInt8,    kInt8,    kInt32,  kInt64,
                                 kFloat16, kBFloat16, kFloat32, kFloat64};

TEST(CudaRandom, InPlaceFillsMatchTheCpu) {
  for (DType dt : kFloats) {
    expect_same_bits("uniform_", dt, [](Tensor& t) { t.uniform_(-2, 3); });
    expect_same_bits("normal_", dt, [](Tensor& t) { t.normal_(1, 2); });
  }
  for (DType dt : kAll) {
    expect_same_bits("bernoulli_", dt, [](Tensor& t) { t.bernoulli_(0.3); });
    if (dt != kBool) expect_same_bits("random_", dt, [](Tensor& t) { random_(t, 2, 50); });
  }
}

TEST(CudaRandom, FactoriesMatchTheCpu) {
  auto same = [](const char* what, DType dt, const std::function<Tensor(TensorOptions)>& make) {
    manual_seed(5);
    Tensor host = make(TensorOptions().dtype(dt));
    manual_seed(5);
    Tensor dev = make(TensorOptions().dtype(dt).device(kGpu));
    EXPECT_TRUE(dev.is_cuda());
    EXPECT_EQ(bytes_of(dev), bytes_of(host)) << what << " dtype " << dtype_name(dt);
  };
  for (DType dt : kFloats) {
    same("rand", dt, [](TensorOptions o) { return rand({3, 11}, o); });
    same("randn", dt, [](TensorOptions o) { return randn({3, 11}, o); });
    same("normal", dt, [](TensorOptions o) { return normal(2.0, 0.5, {13}, o); });
  }
  for (DType dt : {kUInt8, kInt8, kInt32, kInt64, kFloat32, kFloat64}) {
    same("randint", dt, [](TensorOptions o) { return randint(0, 100, {3, 11}, o); });
  }
  for (DType dt : {kInt32, kInt64}) {
    same("randperm", dt, [](TensorOptions o) { return randperm(37, o); });
  }
}

// Outputs of thousands of blocks: the CPU draws them in SIMD lanes and in chunks (several chunks
// here, and a counter that does not start at a multiple of the lane count on the second call).
TEST(CudaRandom, LargeOutputsMatchTheCpu) {
  auto same = [](const char* what, DType dt, const std::function<Tensor(TensorOptions)>& make) {
    manual_seed(6);
    Tensor host = make(TensorOptions().dtype(dt));
    manual_seed(6);
    Tensor dev = make(TensorOptions().dtype(dt).device(kGpu));
    EXPECT_EQ(bytes_of(dev), bytes_of(host)) << what << " dtype " << dtype_name(dt);
  };
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    same("rand", dt, [](TensorOptions o) { return rand({4099}, o); });
    same("randn", dt, [](TensorOptions o) { return randn({97, 43}, o); });
    same("bernoulli", dt, [](TensorOptions o) { return bernoulli(zeros({4101}, o), 0.35); });
  }
  same("randint", kInt64, [](TensorOptions o) { return randint(-9, 1000, {2053}, o); });
}

TEST(CudaRandom, BernoulliOfATensorMatchesTheCpu) {
  manual_seed(9);
  const Tensor p64 = rand({6, 7}, TensorOptions().dtype(kFloat64));
  for (DType dt : kFloats) {
    const Tensor p = p64.to(dt);
    manual_seed(3);
    Tensor host = bernoulli(p);
    // A transposed probability tensor on the device.
    Tensor pt = empty({7, 6}, TensorOptions().dtype(dt).device(kGpu)).t();
    pt.copy_(p);
    manual_seed(3);
    Tensor dev = bernoulli(pt);
    EXPECT_EQ(bytes_of(dev), bytes_of(host)) << dtype_name(dt);
  }
}

TEST(CudaRandom, BernoulliRejectsProbabilitiesOutsideTheUnitInterval) {
  Tensor p = full({5}, 0.5, TensorOptions().device(kGpu));
  p.slice(0, 3, 4).fill_(1.5);
  try {
    bernoulli(p);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "[bernoulli] expects all elements of p to be in [0, 1], but got p=1.5"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaRandom, SuccessiveCallsAdvanceTheDeviceGenerator) {
  manual_seed(1);
  Tensor a = rand({8}, TensorOptions().device(kGpu)), b = rand({8}, TensorOptions().device(kGpu));
  EXPECT_NE(bytes_of(a), bytes_of(b));
  manual_seed(1);
  EXPECT_EQ(bytes_of(rand({8}, TensorOptions().device(kGpu))), bytes_of(a));
}

}  // namespace
