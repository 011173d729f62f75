// What the emulated cuDNN (simt/src/cudnn_shim.cpp) adds to the real <cudnn.h> API: the reason
// for the calling thread's last failed call and what the last executed convolution was told, for
// tests.
#pragma once

#include <cstdint>
#include <string>

namespace simt {

// Why the calling thread's last cudnn call failed ("" after a successful call).
std::string cudnn_last_message();

// The last convolution the emulated cuDNN executed (any thread).
struct CudnnConvRecord {
  int kind = -1;  // 0 forward, 1 backward data, 2 backward filter
  int algo = -1;
  int math_type = -1;  // cudnnMathType_t
  int groups = 0;
  int data_type = -1;                 // cudnnDataType_t
  std::uint64_t workspace_bytes = 0;  // what the caller passed
};
CudnnConvRecord cudnn_last_conv();
// Convolutions executed (forward, backward data, backward filter) since the process started.
std::uint64_t cudnn_conv_count();
// Calls of cudnnFind*AlgorithmEx since the process started.
std::uint64_t cudnn_find_count();
// Makes the next call that checks a convolution problem (algorithm queries, workspace sizes,
// executions) fail with status (a cudnnStatus_t), to test how callers report errors.
void cudnn_fail_next_call(int status);

}  // namespace simt
