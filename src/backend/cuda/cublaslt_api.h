// The cuBLASLt entry points ember calls, as one table: resolved with dlsym from libcublasLt in the
// CUDA build (ember never links cuBLASLt, so a program starts on a machine without it), the
// emulated cuBLASLt's functions in the emulated build.
#pragma once

#include <cublasLt.h>

#include <string>

namespace ember::cuda_detail {

struct CublasLtApi {
  decltype(&cublasLtGetStatusName) GetStatusName;
  decltype(&cublasLtGetStatusString) GetStatusString;
  decltype(&cublasLtCreate) Create;
  decltype(&cublasLtMatmul) Matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic;
  decltype(&cublasLtMatmulDescCreate) MatmulDescCreate;
  decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy;
  decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute;
  decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate;
  decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute;
  decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate;
  decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy;
  decltype(&cublasLtMatrixLayoutSetAttribute) MatrixLayoutSetAttribute;
};

// The table, or nullptr when cuBLASLt is absent (EMBER_CUBLASLT_LIBRARY=none, no libcublasLt, an
// entry point missing). Loaded once per process.
const CublasLtApi* cublaslt_api();

// Why cublaslt_api() is null ("" when it is not), for messages.
std::string cublaslt_missing_reason();

}  // namespace ember::cuda_detail
