// What the emulated cuBLASLt (simt/src/cublaslt_shim.cpp) adds to the real <cublasLt.h> API:
// the reason for the calling thread's last failed cublasLt call, and counts of the matmuls it
// ran (all, and those with the bias epilogue), for tests.
#pragma once

#include <cstdint>
#include <string>

namespace simt {

// Why the calling thread's last cublasLt call failed ("" after a successful call).
std::string cublaslt_last_message();
// Matmuls executed by the emulated cublasLtMatmul since the process started (all threads).
std::uint64_t cublaslt_matmul_count();
// Of those, the ones that ran CUBLASLT_EPILOGUE_BIAS.
std::uint64_t cublaslt_bias_epilogue_count();

}  // namespace simt
