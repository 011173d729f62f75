// Switches for the libraries CUDA ops may use, after PyTorch's torch.backends.
#pragma once

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
