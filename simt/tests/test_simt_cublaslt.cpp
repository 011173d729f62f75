// The emulated cuBLASLt: column-major products with transposes, leading dimensions, strided
// batches, alpha/beta (C not read when beta is 0), TF32 rounding, 16-bit types, the bias epilogue,
// and the argument checks a real cuBLASLt makes (leading dimension, shapes, batch counts, types,
// memory, epilogues it does not emulate).
// clang-format off
// test_util.h first: it brings in the emulator's CUDA qualifiers before any CUDA header.
#include "test_util.h"
// clang-format on

#include <cublasLt.h>
#include <cuda_fp16.h>

#include <cmath>
#include <limits>
#include <vector>

#include "simt/cublaslt_shim.h"

namespace {

#define ASSERT_LT_OK(call) ASSERT_EQ((call), CUBLAS_STATUS_SUCCESS) << simt::cublaslt_last_message()

// Device copy of host values; freed by the fixture.
class CublasLt : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_LT_OK(cublasLtCreate(&handle)); }
  void TearDown() override {
    for (void* p : buffers) cudaFree(p);
    for (auto l : layouts) cublasLtMatrixLayoutDestroy(l);
    if (desc) cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
  }
  template <class T>
  T* upload(const std::vector<T>& host) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, host.size() * sizeof(T)), cudaSuccess);
    cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    buffers.push_back(p);
    return static_cast<T*>(p);
  }
  template <class T>
  std::vector<T> download(const T* p, size_t n) {
    std::vector<T> host(n);
    cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }
  cublasLtMatrixLayout_t layout(cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld,
                                int32_t batch = 1, int64_t stride = 0) {
    cublasLtMatrixLayout_t l = nullptr;
    EXPECT_EQ(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld), CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch,
                                               sizeof batch),
              CUBLAS_STATUS_SUCCESS);
    EXPECT_EQ(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                               &stride, sizeof stride),
              CUBLAS_STATUS_SUCCESS);
    layouts.push_back(l);
    return l;
  }
  void make_desc(cublasComputeType_t compute, cudaDataType scale, cublasOperation_t ta,
                 cublasOperation_t tb) {
    ASSERT_LT_OK(cublasLtMatmulDescCreate(&desc, compute, scale));
    int32_t a = ta, b = tb;
    ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &a, sizeof a));
    ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &b, sizeof b));
  }

  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  std::vector<void*> buffers;
  std::vector<cublasLtMatrixLayout_t> layouts;
};

std::vector<float> iota_values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::fmod(static_cast<float>(i) * 0.37f, 3.0f) * scale - 1.0f;
  return v;
}

TEST_F(CublasLt, TransposesLeadingDimensionsBatchesAndBeta) {
  // D (m x n) = alpha * A^T B + beta * C for 2 batches; A stored k x m with lda 6, B k x n with
  // ldb 7, C = D with ldd 4; batch strides leave gaps.
  const int m = 3, n = 2, k = 5, batches = 2;
  const int lda = 6, ldb = 7, ldd = 4;
  const int64_t sa = lda * m + 3, sb = ldb * n + 1, sd = ldd * n + 2;
  std::vector<float> ha = iota_values(sa * batches, 1.0f), hb = iota_values(sb * batches, 0.5f);
  std::vector<float> hd = iota_values(sd * batches, 2.0f);
  float *a = upload(ha), *b = upload(hb), *d = upload(hd);
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T, CUBLAS_OP_N);
  auto la = layout(CUDA_R_32F, k, m, lda, batches, sa);
  auto lb = layout(CUDA_R_32F, k, n, ldb, batches, sb);
  auto ld = layout(CUDA_R_32F, m, n, ldd, batches, sd);
  const float alpha = 1.5f, beta = -0.5f;
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &alpha, a, la, b, lb, &beta, d, ld, d, ld, nullptr,
                              nullptr, 0, nullptr));
  std::vector<float> got = download(d, hd.size());
  for (int bt = 0; bt < batches; ++bt) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int q = 0; q < k; ++q) acc += ha[bt * sa + q + i * lda] * hb[bt * sb + q + j * ldb];
        const size_t at = bt * sd + i + j * ldd;
        EXPECT_NEAR(got[at], alpha * acc + beta * hd[at], 1e-5) << bt << " " << i << " " << j;
      }
    }
  }
  // Padding between columns and batches is untouched.
  EXPECT_EQ(got[3], hd[3]);
  EXPECT_EQ(got[sd - 1], hd[sd - 1]);
}

TEST_F(CublasLt, BetaZeroDoesNotReadCAndTf32RoundsInputs) {
  // 1 + 2^-12 is exact in float and rounds to 1 in TF32 (10 significand bits).
  const float x = 1.0f + 1.0f / 4096.0f;
  float* a = upload(std::vector<float>{x});
  float* b = upload(std::vector<float>{1.0f});
  float* c = upload(std::vector<float>{std::numeric_limits<float>::quiet_NaN()});
  float* d = upload(std::vector<float>{0.0f});
  auto l = layout(CUDA_R_32F, 1, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a, l, b, l, &zero, c, l, d, l, nullptr, nullptr,
                              0, nullptr));
  EXPECT_EQ(download(d, 1)[0], x);
  cublasLtMatmulDescDestroy(desc);
  desc = nullptr;
  make_desc(CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a, l, b, l, &zero, c, l, d, l, nullptr, nullptr,
                              0, nullptr));
  EXPECT_EQ(download(d, 1)[0], 1.0f);
}

TEST_F(CublasLt, HalfInputsAccumulateInFloat) {
  // 2048 + 1 + 1 is 2050 in float; a half accumulator would stop at 2048.
  std::vector<__half> ha = {__float2half(2048.0f), __float2half(1.0f), __float2half(1.0f)};
  std::vector<__half> hb(3, __float2half(1.0f));
  __half *a = upload(ha), *b = upload(hb), *d = upload(std::vector<__half>(1));
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  auto la = layout(CUDA_R_16F, 1, 3, 1), lb = layout(CUDA_R_16F, 3, 1, 3),
       ld = layout(CUDA_R_16F, 1, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, nullptr,
                              nullptr, 0, nullptr));
  EXPECT_EQ(__half2float(download(d, 1)[0]), 2050.0f);
}

TEST_F(CublasLt, RejectsWhatCublasLtRejects) {
  float* buf = upload(std::vector<float>(64, 1.0f));
  const float one = 1.0f, zero = 0.0f;
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  auto good = layout(CUDA_R_32F, 4, 4, 4);
  // Leading dimension below the row count.
  auto bad_ld = layout(CUDA_R_32F, 4, 4, 3);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, bad_ld, buf, good, &zero, buf, good, buf, good,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(simt::cublaslt_last_message().find("leading dimension 3"), std::string::npos)
      << simt::cublaslt_last_message();
  // Shapes that do not multiply.
  auto wide = layout(CUDA_R_32F, 4, 5, 4);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, good, buf, wide, &zero, buf, good, buf, good,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  // Batch counts that differ.
  auto two = layout(CUDA_R_32F, 4, 4, 4, 2, 16);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, two, buf, good, &zero, buf, good, buf, good,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  // Operands past the end of their allocation (a GPU would fault).
  auto big = layout(CUDA_R_32F, 8, 9, 8);
  auto big_b = layout(CUDA_R_32F, 9, 8, 9);
  auto big_d = layout(CUDA_R_32F, 8, 8, 8);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, big, buf, big_b, &zero, buf, big_d, buf, big_d,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_EXECUTION_FAILED);
  // Wrong attribute sizes; mixed data types; an unknown handle.
  int64_t wide_value = 0;
  EXPECT_EQ(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &wide_value,
                                           sizeof wide_value),
            CUBLAS_STATUS_INVALID_VALUE);
  auto dbl = layout(CUDA_R_64F, 4, 4, 4);
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, dbl, buf, good, &zero, buf, good, buf, good,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(cublasLtMatmul(nullptr, desc, &one, buf, good, buf, good, &zero, buf, good, buf, good,
                           nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
}

TEST_F(CublasLt, HeuristicReturnsAnAlgorithmTheMatmulAccepts) {
  float *a = upload(std::vector<float>(8, 2.0f)), *b = upload(std::vector<float>(4, 2.0f));
  float* d = upload(std::vector<float>(4, 0.0f));
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  auto l = layout(CUDA_R_32F, 2, 2, 2);
  cublasLtMatmulPreference_t pref;
  ASSERT_LT_OK(cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws = 1 << 20;
  ASSERT_LT_OK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t result;
  int count = 0;
  ASSERT_LT_OK(cublasLtMatmulAlgoGetHeuristic(handle, desc, l, l, l, l, pref, 1, &result, &count));
  ASSERT_EQ(count, 1);
  EXPECT_EQ(result.state, CUBLAS_STATUS_SUCCESS);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a, l, b, l, &zero, d, l, d, l, &result.algo,
                              nullptr, 0, nullptr));
  EXPECT_EQ(download(d, 4), std::vector<float>(4, 8.0f));
  // The heuristic assumed 256-byte aligned operands (the default): a view 4 bytes in is refused.
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, a + 1, l, b, l, &zero, d, l, d, l, &result.algo,
                           nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(simt::cublaslt_last_message().find("not aligned"), std::string::npos);
  uint32_t four = 4;
  ASSERT_LT_OK(cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &four, sizeof four));
  ASSERT_LT_OK(cublasLtMatmulAlgoGetHeuristic(handle, desc, l, l, l, l, pref, 1, &result, &count));
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a + 1, l, b, l, &zero, d, l, d, l, &result.algo,
                              nullptr, 0, nullptr));
  cublasLtMatmulAlgo_t forged{};
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, a, l, b, l, &zero, d, l, d, l, &forged, nullptr, 0,
                           nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  cublasLtMatmulPreferenceDestroy(pref);
}

TEST_F(CublasLt, BiasEpilogueAddsOneVectorOverTheRowsOfD) {
  // D (3 x 4) = alpha * A B + beta * C + bias, bias[i] on row i of every column, 2 batches whose
  // bias vectors are 5 elements apart. m != n, so a bias over the columns would differ.
  const int m = 3, n = 4, k = 2, batches = 2;
  const int64_t sa = m * k, sb = k * n, sd = m * n, sbias = 5;
  std::vector<float> ha = iota_values(sa * batches, 1.0f), hb = iota_values(sb * batches, 0.5f);
  std::vector<float> hc = iota_values(sd * batches, 2.0f);
  std::vector<float> hbias = {10, 20, 30, -1, -1, -40, -50, -60};
  float *a = upload(ha), *b = upload(hb), *c = upload(hc), *bias = upload(hbias);
  float* d = upload(std::vector<float>(sd * batches));
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const int32_t bias_type = CUDA_R_32F;
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue));
  ASSERT_LT_OK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                              sizeof bias_type));
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &sbias,
                                              sizeof sbias));
  auto la = layout(CUDA_R_32F, m, k, m, batches, sa);
  auto lb = layout(CUDA_R_32F, k, n, k, batches, sb);
  auto ld = layout(CUDA_R_32F, m, n, m, batches, sd);
  const float alpha = 2.0f, beta = 0.5f;
  const uint64_t fused = simt::cublaslt_bias_epilogue_count();
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &alpha, a, la, b, lb, &beta, c, ld, d, ld, nullptr,
                              nullptr, 0, nullptr));
  EXPECT_EQ(simt::cublaslt_bias_epilogue_count() - fused, 1u);
  const std::vector<float> got = download(d, sd * batches);
  for (int bt = 0; bt < batches; ++bt) {
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int q = 0; q < k; ++q) acc += ha[bt * sa + i + q * m] * hb[bt * sb + q + j * k];
        const size_t at = bt * sd + i + j * m;
        EXPECT_NEAR(got[at], alpha * acc + beta * hc[at] + hbias[bt * sbias + i], 1e-4)
            << bt << " " << i << " " << j;
      }
    }
  }
}

TEST_F(CublasLt, HalfBiasIsAddedBeforeTheOneRounding) {
  // 2047 * 1 + 2 * 1 = 2049 in float; + bias 1 = 2050, a half. Rounding the product to half first
  // (2049 -> 2048, ties to even) and then adding the bias (2049 -> 2048) would give 2048.
  __half* a = upload(std::vector<__half>{__float2half(2047.0f), __float2half(2.0f)});
  __half* b = upload(std::vector<__half>{__float2half(1.0f), __float2half(1.0f)});
  __half* bias = upload(std::vector<__half>{__float2half(1.0f)});
  __half* d = upload(std::vector<__half>(1));
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                              sizeof epilogue));
  ASSERT_LT_OK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  auto la = layout(CUDA_R_16F, 1, 2, 1), lb = layout(CUDA_R_16F, 2, 1, 2),
       ld = layout(CUDA_R_16F, 1, 1, 1);
  const float one = 1.0f, zero = 0.0f;
  ASSERT_LT_OK(cublasLtMatmul(handle, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, nullptr,
                              nullptr, 0, nullptr));
  EXPECT_EQ(__half2float(download(d, 1)[0]), 2050.0f);
}

TEST_F(CublasLt, RejectsEpiloguesAndBiasesItCannotRun) {
  float* buf = upload(std::vector<float>(64, 1.0f));
  double* dbuf = upload(std::vector<double>(64, 1.0));
  const float one = 1.0f, zero = 0.0f;
  make_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N, CUBLAS_OP_N);
  auto l = layout(CUDA_R_32F, 4, 4, 4);
  auto run = [&](const void* d_ptr = nullptr) {
    return cublasLtMatmul(handle, desc, &one, buf, l, buf, l, &zero, buf, l,
                          d_ptr ? const_cast<void*>(d_ptr) : buf, l, nullptr, nullptr, 0, nullptr);
  };
  auto set_epilogue = [&](cublasLtEpilogue_t e) {
    ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof e));
  };
  // Epilogues that are not emulated are refused by name, never skipped.
  for (cublasLtEpilogue_t e :
       {CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_GELU_BIAS, CUBLASLT_EPILOGUE_BGRADB}) {
    set_epilogue(e);
    EXPECT_EQ(run(), CUBLAS_STATUS_NOT_SUPPORTED) << e;
    EXPECT_NE(simt::cublaslt_last_message().find("is not emulated"), std::string::npos)
        << simt::cublaslt_last_message();
  }
  set_epilogue(CUBLASLT_EPILOGUE_BGRADA);
  EXPECT_EQ(run(), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_NE(simt::cublaslt_last_message().find("CUBLASLT_EPILOGUE_BGRADA"), std::string::npos)
      << simt::cublaslt_last_message();
  // The bias epilogue needs its pointer.
  set_epilogue(CUBLASLT_EPILOGUE_BIAS);
  EXPECT_EQ(run(), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(simt::cublaslt_last_message().find("BIAS_POINTER"), std::string::npos);
  // A bias vector shorter than D's rows runs past its allocation (a GPU would fault).
  float* short_bias = upload(std::vector<float>(3, 0.0f));
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &short_bias,
                                              sizeof short_bias));
  EXPECT_EQ(run(), CUBLAS_STATUS_EXECUTION_FAILED);
  EXPECT_NE(simt::cublaslt_last_message().find("bias vector"), std::string::npos);
  // A bias type other than D's; a wrongly sized attribute.
  float* bias = upload(std::vector<float>(4, 0.0f));
  ASSERT_LT_OK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  ASSERT_LT_OK(run());
  int32_t half_type = CUDA_R_16F;
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &half_type,
                                              sizeof half_type));
  EXPECT_EQ(run(), CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &half_type, 2),
      CUBLAS_STATUS_INVALID_VALUE);
  int32_t float_type = CUDA_R_32F;
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                              &float_type, sizeof float_type));
  // The heuristic relies on the bias pointer's alignment: a misaligned one later is refused.
  cublasLtMatmulPreference_t pref;
  ASSERT_LT_OK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulHeuristicResult_t result;
  int count = 0;
  ASSERT_LT_OK(cublasLtMatmulAlgoGetHeuristic(handle, desc, l, l, l, l, pref, 1, &result, &count));
  float* bias_buf = upload(std::vector<float>(8, 0.0f));
  float* moved = bias_buf + 1;
  ASSERT_LT_OK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &moved,
                                              sizeof moved));
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one, buf, l, buf, l, &zero, buf, l, buf, l, &result.algo,
                           nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_NE(simt::cublaslt_last_message().find("the bias vector is not aligned"), std::string::npos)
      << simt::cublaslt_last_message();
  cublasLtMatmulPreferenceDestroy(pref);
  // Double compute has no emulated bias epilogue.
  cublasLtMatmulDescDestroy(desc);
  desc = nullptr;
  make_desc(CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N, CUBLAS_OP_N);
  set_epilogue(CUBLASLT_EPILOGUE_BIAS);
  ASSERT_LT_OK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbuf, sizeof dbuf));
  auto l64 = layout(CUDA_R_64F, 4, 4, 4);
  const double one64 = 1.0, zero64 = 0.0;
  EXPECT_EQ(cublasLtMatmul(handle, desc, &one64, dbuf, l64, dbuf, l64, &zero64, dbuf, l64, dbuf,
                           l64, nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_SUPPORTED);
}

}  // namespace
