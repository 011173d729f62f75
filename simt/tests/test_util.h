// Shared helpers for the emulator's tests: checked CUDA calls, device buffers, a fixture that
// runs each test under every thread order.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels.h"

#define ASSERT_CUDA(call) ASSERT_EQ((call), cudaSuccess) << cudaGetErrorString(cudaGetLastError())

// A device allocation holding n values of T, copied to and from host vectors.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)), cudaSuccess);
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& host) {
    EXPECT_EQ(cudaMemcpy(p_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    EXPECT_EQ(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

inline std::vector<float> ramp(std::size_t n, float scale = 1.0f, float offset = 0.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = offset + scale * static_cast<float>((i * 7919) % 1009) / 1009.0f;
  }
  return v;
}

// Runs a test once per thread order; the order is restored afterwards.
class OrderTest : public ::testing::TestWithParam<simt::Order> {
 protected:
  void SetUp() override {
    saved_ = simt::order();
    simt::set_order(GetParam());
  }
  void TearDown() override { simt::set_order(saved_); }

 private:
  simt::Order saved_ = simt::Order::kForward;
};

inline std::string order_name(const ::testing::TestParamInfo<simt::Order>& info) {
  switch (info.param) {
    case simt::Order::kForward:
      return "forward";
    case simt::Order::kReverse:
      return "reverse";
    default:
      return "random";
  }
}

#define INSTANTIATE_ORDERS(suite)                                                            \
  INSTANTIATE_TEST_SUITE_P(                                                                  \
      Orders, suite,                                                                         \
      ::testing::Values(simt::Order::kForward, simt::Order::kReverse, simt::Order::kRandom), \
      order_name)
