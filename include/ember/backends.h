// The process-wide switches ops read: the float32 matmul precision, and the switches for the
// optional libraries ops may use (cuDNN on CUDA devices, oneDNN on the CPU), after PyTorch's
// torch.backends.
#pragma once

#include <string>

namespace ember {

// Internal precision of float32 matrix products on CUDA, as in PyTorch: "highest" (default, full
// float32), "high" or "medium" (TensorFloat-32 tensor cores). Other values raise ValueError.
void set_float32_matmul_precision(const std::string& precision);
std::string get_float32_matmul_precision();

}  // namespace ember

namespace ember::backends::cudnn {

// True when cuDNN's convolution entry points are loaded (a CUDA build with libcudnn found, or the
// emulated build) and a CUDA device exists. Otherwise convolutions use im2col + gemm.
bool is_available();

// Use cuDNN for conv1d/conv2d/conv_transpose2d on CUDA devices when available (default true;
// the environment variable EMBER_CUDNN=0 makes the default false).
void set_enabled(bool enabled);
bool enabled();

// Time the algorithms once per (shapes, dtype, parameters) and keep the fastest, instead of
// cuDNN's heuristic (default false, like torch.backends.cudnn.benchmark).
void set_benchmark(bool benchmark);
bool benchmark();

// Only deterministic algorithms (default false, like torch.backends.cudnn.deterministic).
void set_deterministic(bool deterministic);
bool deterministic();

// Sets the three switches for a scope and restores them at its end (torch.backends.cudnn.flags).
class FlagsGuard {
 public:
  FlagsGuard(bool enabled, bool benchmark, bool deterministic);
  ~FlagsGuard();
  FlagsGuard(const FlagsGuard&) = delete;
  FlagsGuard& operator=(const FlagsGuard&) = delete;

 private:
  bool enabled_, benchmark_, deterministic_;
};

}  // namespace ember::backends::cudnn

namespace ember::backends::mkldnn {

// oneDNN (named mkldnn after torch.backends.mkldnn) on the CPU: true when its shared library
// (libdnnl.so.3 or .2, or the file EMBER_ONEDNN_LIBRARY names; "none" loads nothing) was found
// at run time. ember is never linked against it; without it float32 gemms use OpenBLAS alone.
bool is_available();

// Route float32 matrix products whose shape oneDNN's sgemm runs faster than OpenBLAS's to oneDNN
// (default true; the environment variable EMBER_ONEDNN=0 makes the default false). Results
// differ from OpenBLAS's only in the order of the float32 additions.
void set_enabled(bool enabled);
bool enabled();

// "oneDNN 2.6.3 (/usr/lib/x86_64-linux-gnu/libdnnl.so.2)", or why it is not available.
std::string describe();

// Sets the switch for a scope and restores it at its end (torch.backends.mkldnn.flags).
class FlagsGuard {
 public:
  explicit FlagsGuard(bool enabled);
  ~FlagsGuard();
  FlagsGuard(const FlagsGuard&) = delete;
  FlagsGuard& operator=(const FlagsGuard&) = delete;

 private:
  bool enabled_;
};

}  // namespace ember::backends::mkldnn
