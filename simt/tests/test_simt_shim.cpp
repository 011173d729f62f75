// The host CUDA runtime shim: allocation registry (bounds, direction, capacity, poison),
// pointer attributes, devices and their properties, errors, launch validation.
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>

#include "test_util.h"

namespace {

// Two emulated devices of 1 GiB each, configured before the runtime's first use.
const bool configured = [] {
  setenv("EMBER_SIM_DEVICES", "2", 1);
  setenv("EMBER_SIM_MEMORY", "1G", 1);
  return true;
}();

class Shim : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(configured);
    cudaSetDevice(0);
    cudaGetLastError();
  }
  void TearDown() override {
    cudaSetDevice(0);
    cudaDeviceReset();
  }
};

TEST_F(Shim, MallocPoisonsAndRegistersExactSizes) {
  void* p = nullptr;
  ASSERT_CUDA(cudaMalloc(&p, 37));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  std::vector<unsigned char> host(37);
  ASSERT_CUDA(cudaMemcpy(host.data(), p, 37, cudaMemcpyDeviceToHost));
  for (unsigned char b : host) EXPECT_EQ(b, 0xFF);
  EXPECT_EQ(cudaMemcpy(host.data(), p, 38, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaFree(p));
  EXPECT_EQ(cudaFree(p), cudaErrorInvalidValue);  // double free
  EXPECT_EQ(cudaFree(host.data()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(nullptr), cudaSuccess);
  ASSERT_CUDA(cudaMalloc(&p, 0));
  EXPECT_EQ(p, nullptr);
  cudaGetLastError();
}

TEST_F(Shim, CopyDirectionsAreChecked) {
  DeviceBuffer<int> a(8), b(8);
  std::vector<int> host(8, 3), other(8);
  EXPECT_EQ(cudaMemcpy(a.get(), host.data(), 32, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), a.get(), 32, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(a.get(), host.data(), 32, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(other.data(), a.get(), 32, cudaMemcpyHostToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(a.get(), host.data(), 32, static_cast<cudaMemcpyKind>(9)),
            cudaErrorInvalidMemcpyDirection);
  ASSERT_CUDA(cudaMemcpy(a.get(), host.data(), 32, cudaMemcpyHostToDevice));
  ASSERT_CUDA(cudaMemcpy(b.get(), a.get(), 32, cudaMemcpyDeviceToDevice));
  ASSERT_CUDA(cudaMemcpy(other.data(), b.get(), 32, cudaMemcpyDefault));
  EXPECT_EQ(other, host);
  ASSERT_CUDA(cudaMemcpy(other.data(), host.data(), 32, cudaMemcpyHostToHost));
  cudaGetLastError();
}

TEST_F(Shim, BoundsOfOffsetsAnd2DCopies) {
  DeviceBuffer<float> buffer(64);  // 256 bytes: an 8x8 matrix, or 4 rows of pitch 64
  std::vector<float> host(64, 2.0f);
  ASSERT_CUDA(cudaMemcpy(buffer.get() + 60, host.data(), 16, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudaMemcpy(buffer.get() + 60, host.data(), 17, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  // 4 rows of 48 bytes at a 64-byte pitch fit exactly; a fifth row does not.
  ASSERT_CUDA(cudaMemcpy2D(buffer.get(), 64, host.data(), 48, 48, 4, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudaMemcpy2D(buffer.get(), 64, host.data(), 48, 48, 5, cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy2D(buffer.get(), 32, host.data(), 48, 48, 2, cudaMemcpyHostToDevice),
            cudaErrorInvalidPitchValue);
  std::vector<float> back(12 * 4, 0.0f);
  ASSERT_CUDA(
      cudaMemcpy2DAsync(back.data(), 48, buffer.get(), 64, 48, 4, cudaMemcpyDeviceToHost, nullptr));
  for (float v : back) EXPECT_EQ(v, 2.0f);
  EXPECT_EQ(cudaMemset(buffer.get() + 1, 0, 256), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(host.data(), 0, 4), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaMemsetAsync(buffer.get(), 0, 256, nullptr));
  for (float v : buffer.download()) EXPECT_EQ(v, 0.0f);
  cudaGetLastError();
}

TEST_F(Shim, CapacityComesFromEmberSimMemory) {
  size_t free0 = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free0, &total));
  EXPECT_EQ(total, size_t{1} << 30);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, (size_t{1} << 30) + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky
  ASSERT_CUDA(cudaMalloc(&p, 1 << 20));
  size_t free1 = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free0 - free1, size_t{1} << 20);
  void* q = nullptr;
  EXPECT_EQ(cudaMalloc(&q, free1 + 1), cudaErrorMemoryAllocation);
  // Capacity is per device.
  ASSERT_CUDA(cudaSetDevice(1));
  size_t free_other = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_other, &total));
  EXPECT_EQ(free_other, size_t{1} << 30);
  ASSERT_CUDA(cudaSetDevice(0));
  ASSERT_CUDA(cudaFree(p));
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0);
  cudaGetLastError();
}

TEST_F(Shim, PinnedHostMemoryAndPointerAttributes) {
  void* pinned = nullptr;
  ASSERT_CUDA(cudaMallocHost(&pinned, 64));
  void* device = nullptr;
  ASSERT_CUDA(cudaSetDevice(1));
  ASSERT_CUDA(cudaMalloc(&device, 64));
  ASSERT_CUDA(cudaSetDevice(0));
  int stack_value = 0;
  cudaPointerAttributes attr;
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, static_cast<char*>(device) + 10));
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 1);
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, pinned));
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  EXPECT_EQ(attr.hostPointer, pinned);
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, &stack_value));
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  // Pinned memory is host memory for copy directions.
  ASSERT_CUDA(cudaMemcpy(device, pinned, 64, cudaMemcpyHostToDevice));
  EXPECT_EQ(cudaMemcpy(pinned, device, 64, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(pinned), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaFreeHost(pinned));
  ASSERT_CUDA(cudaFree(device));
  cudaGetLastError();
}

TEST_F(Shim, DevicesAndProperties) {
  int count = 0;
  ASSERT_CUDA(cudaGetDeviceCount(&count));
  EXPECT_EQ(count, 2);
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  ASSERT_CUDA(cudaSetDevice(1));
  int device = -1;
  std::thread([&] { cudaGetDevice(&device); }).join();
  EXPECT_EQ(device, 0);  // the current device is per host thread
  ASSERT_CUDA(cudaGetDevice(&device));
  EXPECT_EQ(device, 1);
  cudaDeviceProp prop;
  ASSERT_CUDA(cudaGetDeviceProperties(&prop, 1));
  EXPECT_STREQ(prop.name, "ember SIMT emulator");
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.minor, 0);
  EXPECT_EQ(prop.multiProcessorCount, 132);
  EXPECT_EQ(prop.warpSize, 32);
  EXPECT_EQ(prop.sharedMemPerBlock, 48u * 1024);
  EXPECT_EQ(prop.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(prop.totalGlobalMem, size_t{1} << 30);
  EXPECT_EQ(prop.maxThreadsDim[2], 64);
  EXPECT_GT(prop.l2CacheSize, 0);
  int value = 0;
  ASSERT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, 0));
  EXPECT_EQ(value, 132);
  ASSERT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, 0));
  EXPECT_EQ(value, 9);
  ASSERT_CUDA(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  EXPECT_EQ(value, 227 * 1024);
  EXPECT_EQ(cudaGetDeviceProperties(&prop, 5), cudaErrorInvalidDevice);
  int version = 0;
  ASSERT_CUDA(cudaRuntimeGetVersion(&version));
  EXPECT_EQ(version, CUDART_VERSION);
  ASSERT_CUDA(cudaDriverGetVersion(&version));
  EXPECT_GE(version, CUDART_VERSION);
  cudaGetLastError();
}

TEST_F(Shim, PeerCopiesBetweenDevices) {
  int can = 0;
  ASSERT_CUDA(cudaDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(can, 1);
  std::vector<int> host(16);
  std::iota(host.begin(), host.end(), 5);
  DeviceBuffer<int> on0(host);
  ASSERT_CUDA(cudaSetDevice(1));
  int* on1 = nullptr;
  ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&on1), 64));
  ASSERT_CUDA(cudaMemcpyPeer(on1, 1, on0.get(), 0, 64));
  EXPECT_EQ(cudaMemcpyPeer(on1, 0, on0.get(), 0, 64), cudaErrorInvalidValue);  // wrong device
  EXPECT_EQ(cudaMemcpyPeer(on1, 1, on0.get(), 0, 65), cudaErrorInvalidValue);  // past the end
  std::vector<int> back(16);
  ASSERT_CUDA(cudaMemcpy(back.data(), on1, 64, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, host);
  ASSERT_CUDA(cudaFree(on1));
  ASSERT_CUDA(cudaSetDevice(0));
  cudaGetLastError();
}

TEST_F(Shim, ErrorNamesAndStrings) {
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidConfiguration), "cudaErrorInvalidConfiguration");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
  EXPECT_STREQ(cudaGetErrorString(cudaErrorLaunchFailure), "unspecified launch failure");
  EXPECT_STREQ(cudaGetErrorName(cudaErrorStreamCaptureUnsupported),
               "cudaErrorStreamCaptureUnsupported");
  EXPECT_STREQ(cudaGetErrorName(cudaSuccess), "cudaSuccess");
}

TEST_F(Shim, LastErrorIsPerThreadAndClearedByGetLastError) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, size_t{1} << 40), cudaErrorMemoryAllocation);
  cudaError_t other = cudaErrorUnknown;
  std::thread([&] { other = cudaGetLastError(); }).join();
  EXPECT_EQ(other, cudaSuccess);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess);
}

TEST_F(Shim, KernelFaultIsStickyUntilReset) {
  std::vector<int> v(32, -1);
  DeviceBuffer<int> data(v);
  launch_trap(data.get(), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  int* p = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), 4), cudaErrorLaunchFailure);
  ASSERT_CUDA(cudaDeviceReset());
  ASSERT_CUDA(cudaMalloc(reinterpret_cast<void**>(&p), 4));
  ASSERT_CUDA(cudaFree(p));
}

TEST_F(Shim, LaunchConfigurationLimits) {
  DeviceBuffer<unsigned> out(6 * 64 * 2);
  launch_indices(out.get(), dim3(1), dim3(1, 1, 65), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  launch_indices(out.get(), dim3(1, 65536), dim3(1), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  launch_indices(out.get(), dim3(0), dim3(32), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  launch_indices(out.get(), dim3(2), dim3(1, 1, 64), nullptr);  // the largest z is fine
  ASSERT_CUDA(cudaGetLastError());
  launch_add(nullptr, nullptr, nullptr, 0, 1, 32, reinterpret_cast<cudaStream_t>(0x1234));
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
}

}  // namespace
