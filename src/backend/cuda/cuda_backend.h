// The CUDA backend: device memory, transfers and kernels over the CUDA runtime.
#pragma once

#include "backend/backend.h"

namespace ember {

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "CUDA"; }
  Allocator& allocator(Device device, bool pinned) override;

  bool is_pinned(const void* data) const override;

  void copy(const Tensor& dst, const Tensor& src) override;
  void transfer(const Tensor& dst, const Tensor& src, bool non_blocking) override;
  void check_host_sync(const char* op, const std::string& what) override;
  void fill(const Tensor& dst, Scalar value) override;

  void unary(UnaryOp op, const Tensor& out, const Tensor& in, const ElementwiseParams& p) override;
  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
              const ElementwiseParams& p) override;
  void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c,
               const ElementwiseParams& p) override;
  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override;

  // Indexing and sorting (cuda_index.cpp): indices are checked on the device.
  void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                    const IndexCheck& check) override;
  void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
              const IndexCheck& check) override;
  void scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
               bool accumulate, const IndexCheck& check) override;
  void index(const Tensor& out, const Tensor& in, const TensorList& indices,
             const IndexCheck& check) override;
  void index_put(const Tensor& self, const TensorList& indices, const Tensor& values,
                 bool accumulate, const IndexCheck& check) override;
  Tensor nonzero(const Tensor& in) override;
  void sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
            bool descending, bool stable) override;
  void topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k, int64_t dim,
            bool largest, bool sorted) override;

  // Reductions, scans and softmax (cuda_reduce.cpp).
  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) override;
  void reduce_with_index(ReduceOp op, const Tensor& values, const Tensor& indices, const Tensor& in,
                         int64_t dim) override;
  void scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) override;
  void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) override;

  // ---- normalisation and dropout ----
  void norm_stats(const Tensor& mean, const Tensor& rstd, const Tensor& in, const NormParams& p,
                  const Tensor& running_mean, const Tensor& running_var) override;
  void norm_forward(const Tensor& out, const Tensor& in, const Tensor& mean, const Tensor& rstd,
                    const Tensor& weight, const Tensor& bias, const NormParams& p) override;
  void norm_backward(const Tensor& grad_in, const Tensor& grad_weight, const Tensor& grad_bias,
                     const Tensor& grad_out, const Tensor& in, const Tensor& mean,
                     const Tensor& rstd, const Tensor& weight, const NormParams& p) override;
  void dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p, uint64_t seed,
               uint64_t offset) override;

  // ---- fused attention (cuda_attention.cpp) ----
  void attention_forward(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,
                         const Tensor& v, const Tensor& mask, const AttentionParams& p) override;
  void attention_backward(const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& dout,
                          const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                          const Tensor& lse, const Tensor& mask, const AttentionParams& p) override;

  // Matmul through cuBLASLt (cuda_gemm.cpp).
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha,
            double beta) override;
  bool gemm_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                 double alpha) override;

  // Convolution and pooling (cuda_conv.cpp).
  bool conv2d_forward(const char* op, const Tensor& y, const Tensor& x, const Tensor& w,
                      const Window2d& g, int64_t groups, double beta) override;
  bool conv2d_backward_input(const char* op, const Tensor& gx, const Tensor& gy, const Tensor& w,
                             const Window2d& g, int64_t groups) override;
  bool conv2d_backward_weight(const char* op, const Tensor& gw, const Tensor& gy, const Tensor& x,
                              const Window2d& g, int64_t groups) override;
  void im2col(const Tensor& col, const Tensor& in, const Window2d& g) override;
  void col2im(const Tensor& in, const Tensor& col, const Window2d& g) override;
  void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in,
                  const Window2d& g) override;
  void max_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& indices,
                           const Window2d& g) override;
  void avg_pool2d(const Tensor& out, const Tensor& in, const Window2d& g,
                  const AvgPool2dParams& p) override;
  void avg_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Window2d& g,
                           const AvgPool2dParams& p) override;
  // Random numbers and triangles (cuda_random.cpp).
  void random(RandomOp op, const Tensor& out, uint64_t seed, uint64_t offset,
              const RandomParams& p) override;
  void bernoulli(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) override;
  void tril_triu(const Tensor& out, const Tensor& in, int64_t k, bool upper) override;
  // ---- softmax cross-entropy (cuda_loss.cpp): targets are checked on the device ----
  void cross_entropy(const Tensor& loss, const Tensor& row_weight, const Tensor& lse,
                     const Tensor& input, const Tensor& target, const Tensor& weight,
                     const Tensor& weight_sum, const CrossEntropyParams& p) override;
  void cross_entropy_backward(const Tensor& grad_input, const Tensor& grad_rows,
                              const Tensor& input, const Tensor& lse, const Tensor& target,
                              const Tensor& weight, const Tensor& weight_sum,
                              const CrossEntropyParams& p) override;

  // Fused multi-tensor optimizer updates (cuda_optim.cpp).
  void optim_step(OptimOp op, const std::vector<TensorList>& slots, const OptimHyper& h,
                  const std::vector<OptimTensorScalars>& scalars) override;

  // Mixed precision: the fused unscale and the scale's update (cuda_amp.cpp).
  void amp_unscale(const TensorList& grads, const std::vector<int32_t>& ids,
                   const Tensor& found_inf, const Tensor& inv_scale,
                   const Tensor& first_bad) override;
  void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                        double growth_factor, double backoff_factor,
                        int64_t growth_interval) override;
};

CudaBackend& cuda_backend();

}  // namespace ember
