// The CUDA backend on the SIMT emulator: device API, guard, transfers for every dtype,
// non-contiguous tensors, two devices, "cuda" as the current device, printing, and errors for bad
// ordinals.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

// Two emulated devices, set before the runtime is first used.
const bool kEnvSet = [] { return setenv("EMBER_SIM_DEVICES", "2", 1) == 0; }();

void expect_error_prefix(const std::function<void()>& fn, const std::string& prefix,
                         const std::string& needle = "") {
  try {
    fn();
    FAIL() << "expected an ember::Error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
    if (!needle.empty()) EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  }
}

const DType kAllDTypes[] = {kBool,    kUInt8,    kInt8,    kInt32,  kInt64,
                            kFloat16, kBFloat16, kFloat32, kFloat64};

}  // namespace

TEST(CudaSim, DeviceApi) {
  ASSERT_TRUE(kEnvSet);
  EXPECT_TRUE(cuda::is_available());
  EXPECT_EQ(cuda::device_count(), 2);
  EXPECT_EQ(cuda::get_device_name(), "ember SIMT emulator");
  cuda::DeviceProperties p = cuda::get_device_properties(1);
  EXPECT_EQ(p.name, "ember SIMT emulator");
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.multi_processor_count, 132);
  EXPECT_GT(p.total_memory, 0u);
  EXPECT_GT(p.l2_cache_size, 0u);
  EXPECT_GT(cuda::runtime_version(), 0);
  EXPECT_GE(cuda::driver_version(), 0);
  cuda::synchronize();
  cuda::synchronize(1);
  EXPECT_NE(std::string(build_info()).find("cuda=sim"), std::string::npos) << build_info();
}

TEST(CudaSim, DeviceGuardRestores) {
  EXPECT_EQ(cuda::current_device(), 0);
  {
    cuda::DeviceGuard g(1);
    EXPECT_EQ(g.original_device(), 0);
    EXPECT_EQ(cuda::current_device(), 1);
  }
  EXPECT_EQ(cuda::current_device(), 0);
  cuda::set_device(1);
  EXPECT_EQ(cuda::current_device(), 1);
  cuda::set_device(0);
}

TEST(CudaSim, BadOrdinals) {
  expect_error_prefix([] { cuda::get_device_properties(2); }, "[cuda] invalid device ordinal 2");
  expect_error_prefix([] { cuda::get_device_name(-1); }, "[cuda] invalid device ordinal -1");
  expect_error_prefix([] { cuda::set_device(7); }, "[cuda] invalid device ordinal 7");
  expect_error_prefix([] { cuda::DeviceGuard g(5); }, "[cuda] invalid device ordinal 5");
  expect_error_prefix([] { zeros({2}, TensorOptions().device(Device("cuda:3"))); },
                      "[cuda] invalid device ordinal 3");
  EXPECT_EQ(cuda::current_device(), 0);
}

TEST(CudaSim, FactoriesAndFill) {
  Tensor z = zeros({2, 3}, TensorOptions().device(Device("cuda:0")));
  EXPECT_TRUE(z.is_cuda());
  EXPECT_EQ(z.device().str(), "cuda:0");
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  for (DType dt : kAllDTypes) {
    Tensor t = full({5}, 3, TensorOptions().dtype(dt).device(Device("cuda")));
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(t.to_vector<double>(), std::vector<double>(5, dt == kBool ? 1.0 : 3.0))
        << dtype_name(dt);
  }
  Tensor h = full({2}, 0.1, TensorOptions().dtype(kFloat16).device(Device("cuda")));
  EXPECT_EQ(h.to_vector<float>()[0], static_cast<float>(Half(0.1f)));
  EXPECT_EQ(full({}, 7, TensorOptions().dtype(kInt64).device(Device("cuda"))).item<int64_t>(), 7);
}

TEST(CudaSim, RoundTripEveryDType) {
  for (DType dt : kAllDTypes) {
    Tensor host = arange(24).reshape({2, 3, 4}).to(dt);
    Tensor dev = host.cuda();
    EXPECT_TRUE(dev.is_cuda());
    EXPECT_EQ(dev.dtype(), dt);
    Tensor back = dev.cpu();
    EXPECT_TRUE(back.is_cpu());
    EXPECT_TRUE(equal(back, host)) << dtype_name(dt);
    // Conversion on the way in, on the way out, and on the device.
    for (DType to : kAllDTypes) {
      Tensor want = host.to(to);
      EXPECT_TRUE(equal(host.to(Device("cuda"), to).cpu(), want))
          << dtype_name(dt) << " -> " << dtype_name(to);
      EXPECT_TRUE(equal(dev.to(Device("cpu"), to), want))
          << dtype_name(dt) << " -> " << dtype_name(to);
      EXPECT_TRUE(equal(dev.to(to).cpu(), want)) << dtype_name(dt) << " -> " << dtype_name(to);
    }
  }
}

TEST(CudaSim, NonContiguousAndBroadcast) {
  Tensor host = arange(24, TensorOptions().dtype(kFloat32)).reshape({2, 3, 4});
  Tensor dev = host.cuda();
  // A transposed / sliced device tensor comes back with the right values.
  EXPECT_TRUE(equal(dev.transpose(0, 2).cpu(), host.transpose(0, 2).contiguous()));
  EXPECT_TRUE(equal(dev.slice(2, 1, 4, 2).cpu(), host.slice(2, 1, 4, 2).contiguous()));
  EXPECT_TRUE(equal(dev.transpose(0, 2).contiguous().cpu(), host.transpose(0, 2)));
  // Non-contiguous host source, non-contiguous device destination.
  Tensor d2 = zeros({4, 3, 2}, TensorOptions().device(Device("cuda")));
  d2.transpose(0, 2).copy_(host);
  EXPECT_TRUE(equal(d2.cpu(), host.transpose(0, 2)));
  // A stride-0 source is expanded on the device.
  Tensor row = arange(4, TensorOptions().dtype(kInt32)).cuda();
  Tensor wide = zeros({3, 4}, TensorOptions().dtype(kInt32).device(Device("cuda")));
  wide.copy_(row);
  EXPECT_TRUE(equal(wide.cpu(), arange(4, TensorOptions().dtype(kInt32)).expand({3, 4})));
  // Device to non-contiguous host destination with conversion.
  Tensor hd = zeros({4, 3, 2}, TensorOptions().dtype(kFloat64));
  hd.transpose(0, 2).copy_(dev);
  EXPECT_TRUE(equal(hd.transpose(0, 2), host.to(kFloat64)));
  // Filling a strided view leaves the rest untouched.
  Tensor f = zeros({3, 4}, TensorOptions().device(Device("cuda")));
  f.slice(1, 0, 4, 2).fill_(5);
  EXPECT_EQ(f.cpu().to_vector<float>(), (std::vector<float>{5, 0, 5, 0, 5, 0, 5, 0, 5, 0, 5, 0}));
}

TEST(CudaSim, EmptyAndScalar) {
  Tensor e = zeros({0, 3}).cuda();
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.cpu().sizes(), (Shape{0, 3}));
  Tensor s = scalar_tensor(2.5).cuda();
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
}

TEST(CudaSim, CrossDevice) {
  Tensor host = arange(12, TensorOptions().dtype(kFloat32)).reshape({3, 4});
  Tensor a = host.cuda(0);
  Tensor b = a.to(Device("cuda:1"));
  EXPECT_EQ(b.device().str(), "cuda:1");
  EXPECT_TRUE(equal(b.cpu(), host));
  EXPECT_TRUE(equal(a.t().to(Device("cuda:1")).cpu(), host.t()));
  Tensor c = zeros({4, 3}, TensorOptions().device(Device("cuda:1")));
  c.t().copy_(a);
  EXPECT_TRUE(equal(c.t().cpu(), host));
  EXPECT_TRUE(equal(a.to(Device("cuda:1"), kInt64).cpu(), host.to(kInt64)));
  EXPECT_EQ(cuda::current_device(), 0);
}

// "cuda" without an index is the current device, resolved when a tensor is made (PyTorch's rule).
TEST(CudaSim, IndexlessCudaIsTheCurrentDevice) {
  struct Restore {
    ~Restore() { cuda::set_device(0); }
  } restore;
  const Device cuda("cuda");
  cuda::set_device(1);
  Tensor o = ones({2}, TensorOptions().device(cuda));
  EXPECT_EQ(o.device(), Device(kCUDA, 1));
  EXPECT_EQ(o.device().str(), "cuda:1");
  Tensor host = arange(6, TensorOptions().dtype(kFloat32));
  EXPECT_EQ(host.to(cuda).device().str(), "cuda:1");
  EXPECT_EQ(host.cuda().device().str(), "cuda:1");
  EXPECT_EQ(randn({3}, TensorOptions().device(cuda)).device().str(), "cuda:1");
  EXPECT_EQ(empty_like(host, TensorOptions().device(cuda)).device().str(), "cuda:1");
  // A tensor on another device moves to the current one; one already there is returned as is.
  Tensor on0 = host.cuda(0);
  Tensor moved = on0.to(cuda);
  EXPECT_EQ(moved.device().str(), "cuda:1");
  EXPECT_TRUE(equal(moved.cpu(), host));
  EXPECT_TRUE(moved.to(cuda).is_same(moved));
  nn::Linear lin(3, 2);
  lin->to(cuda);
  for (const Tensor& p : lin->parameters()) EXPECT_EQ(p.device().str(), "cuda:1");
  cuda::set_device(0);
  EXPECT_EQ(host.cuda().device().str(), "cuda:0");
  EXPECT_EQ(zeros({1}, TensorOptions().device(cuda)).device().str(), "cuda:0");
}

TEST(CudaSim, Printing) {
  std::ostringstream os;
  os << arange(3).cuda();
  EXPECT_EQ(os.str(), "tensor([0, 1, 2], device='cuda:0')");
  std::ostringstream os1;
  os1 << ones({2}).cuda(1);
  EXPECT_NE(os1.str().find("device='cuda:1'"), std::string::npos) << os1.str();
}
