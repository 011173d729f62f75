// The backend interface: one kernel entry per op family. The op layer has already checked
// arguments, chosen dtypes and shapes and allocated outputs; a backend only computes.
// A backend without a kernel for some family raises NotImplementedError naming op and backend.
#pragma once

#include <cstdint>
#include <string>

#include "core/tensor_util.h"
#include "kernels/elementwise_ops.h"
#include "kernels/optim_ops.h"
#include "kernels/window.h"

namespace ember {

enum class ReduceOp : uint8_t;
enum class ScanOp : uint8_t;
enum class RandomOp : uint8_t;
struct ReduceParams;
struct RandomParams;
struct NormParams;
struct AttentionParams;

// What an index range error names: the op, and for index/index_put_ the dim of the user's tensor
// that each index tensor indexes (index_select, gather and scatter name their dim argument).
struct IndexCheck {
  const char* op = "index";
  Shape dims;
};

// Options of the fused cross-entropy family; op names the caller in errors.
struct CrossEntropyParams {
  const char* op = "cross_entropy";
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
  bool from_logits = true;  // false: the input holds log-probabilities (nll_loss)
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "CPU" or "CUDA", used in error messages.
  virtual const char* name() const = 0;
  // The allocator for a device of this backend. pinned (CPU devices only): page-locked host
  // memory, which the CPU backend obtains from the CUDA backend.
  virtual Allocator& allocator(Device device, bool pinned = false) = 0;
  // True when data, the start of a host allocation, is page-locked memory of this backend.
  virtual bool is_pinned(const void* data) const { return false; }

  // ---- copy and element-wise: every operand already has out's shape (inputs may have stride 0) --
  // dst = src converted to dst's dtype; dst and src may overlap only if identical. A device
  // backend also handles transfers where the other side is the host or another device.
  virtual void copy(const Tensor& dst, const Tensor& src) { missing("copy_"); }
  // copy() between the host and a device (or two devices). With non_blocking a device backend
  // may return before the transfer has completed when the host side is pinned memory.
  virtual void transfer(const Tensor& dst, const Tensor& src, bool non_blocking) { copy(dst, src); }
  // Raises "[op] cannot run while ... is capturing a graph: <what>" when a host sync now would
  // break a CUDA graph capture (a device backend; the CPU has nothing to capture).
  virtual void check_host_sync(const char* op, const std::string& what) {}
  virtual void fill(const Tensor& dst, Scalar value) { missing("fill_"); }
  // in has the compute dtype; out has it too, or bool for predicates.
  virtual void unary(UnaryOp op, const Tensor& out, const Tensor& in, const ElementwiseParams& p) {
    missing("unary");
  }
  // a and b share the compute dtype; out has it too, or bool for comparisons and logic.
  virtual void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                      const ElementwiseParams& p) {
    missing("binary");
  }
  virtual void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                       const Tensor& c, const ElementwiseParams& p) {
    missing("ternary");
  }
  // out = cond ? a : b with cond bool.
  virtual void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
    missing("where");
  }

  // ---- reductions: out has in's rank with size 1 on the reduced dims (keepdim layout) ----------
  virtual void reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) {
    missing("reduce");
  }
  // max/min along one dim with the index of the first extreme element.
  virtual void reduce_with_index(ReduceOp op, const Tensor& values, const Tensor& indices,
                                 const Tensor& in, int64_t dim) {
    missing("max/min");
  }
  virtual void scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) {
    missing("cumsum/cumprod");
  }
  virtual void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) {
    missing("softmax");
  }

  // ---- normalisation and dropout (kernels/norm_ops.h: geometry and math) -----------------------
  // Inputs are contiguous, seen as (batch, channels, inner) by p; mean and rstd hold p.stats()
  // float32 values (float64 for float64 inputs); weight and bias (channels, or undefined) have
  // in's dtype. norm_stats also updates running_mean/running_var (in's dtype) when defined.
  virtual void norm_stats(const Tensor& mean, const Tensor& rstd, const Tensor& in,
                          const NormParams& p, const Tensor& running_mean,
                          const Tensor& running_var) {
    missing("norm");
  }
  // out = (in - mean) * rstd * weight + bias.
  virtual void norm_forward(const Tensor& out, const Tensor& in, const Tensor& mean,
                            const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                            const NormParams& p) {
    missing("norm");
  }
  // Gradients of norm_forward for the outputs that are defined.
  virtual void norm_backward(const Tensor& grad_in, const Tensor& grad_weight,
                             const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                             const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                             const NormParams& p) {
    missing("norm backward");
  }
  // out = keep ? in / (1 - p) : 0 and mask (bool) = keep, keep = bernoulli(1 - p)'s draw.
  virtual void dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p,
                       uint64_t seed, uint64_t offset) {
    missing("dropout");
  }

  // ---- fused scaled dot-product attention (kernels/attention_ops.h: geometry and math) -------
  // q (B, L, E), k (B, S, E), v (B, S, Ev) contiguous of one floating dtype; mask bool or q's
  // dtype, strided as p says, or undefined. out (B, L, Ev) = softmax(scores) v and lse (B, L) in
  // the accumulation dtype, without materialising the (L, S) scores.
  virtual void attention_forward(const Tensor& out, const Tensor& lse, const Tensor& q,
                                 const Tensor& k, const Tensor& v, const Tensor& mask,
                                 const AttentionParams& p) {
    missing("scaled_dot_product_attention");
  }
  // dq, dk, dv (q's, k's, v's shapes, contiguous) from dout (B, L, Ev) contiguous and the
  // forward's out and lse: the probabilities are recomputed tile by tile.
  virtual void attention_backward(const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                  const Tensor& dout, const Tensor& q, const Tensor& k,
                                  const Tensor& v, const Tensor& out, const Tensor& lse,
                                  const Tensor& mask, const AttentionParams& p) {
    missing("scaled_dot_product_attention backward");
  }

  // ---- matmul: out (B, n, m) = alpha * a (B, n, k) @ b (B, k, m) + beta * out ------------------
  // Any strides; beta == 0 means out is not read.
  virtual void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha,
                    double beta) {
    missing("matmul");
  }
  // out (1, n, m) = alpha * a (1, n, k) @ b (1, k, m) + bias (m), the bias added to every row in
  // the product's epilogue. Returns false, with out untouched, where the backend has no fused
  // path for these operands (the caller then adds the bias itself).
  virtual bool gemm_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                         double alpha) {
    return false;
  }

  // ---- direct convolution (cuDNN on CUDA devices) ---------------------------------------------
  // x (n, c, h, w), w (o, c / groups, kh, kw), y (n, o, oh, ow), all contiguous; g gives the
  // kernel, stride, top/left padding and dilation, in_h/in_w = (h, w), out_h/out_w = (oh, ow).
  // Each returns false, doing nothing, where the backend has no direct kernel for the operands;
  // the op layer then uses im2col + gemm. op names the operation in errors.
  // y = conv(x, w) + beta * y (beta 0: y is not read).
  virtual bool conv2d_forward(const char* op, const Tensor& y, const Tensor& x, const Tensor& w,
                              const Window2d& g, int64_t groups, double beta) {
    return false;
  }
  // gx = the gradient of conv(x, w) with respect to x, for the output gradient gy.
  virtual bool conv2d_backward_input(const char* op, const Tensor& gx, const Tensor& gy,
                                     const Tensor& w, const Window2d& g, int64_t groups) {
    return false;
  }
  // gw = the gradient with respect to w, summed over the batch.
  virtual bool conv2d_backward_weight(const char* op, const Tensor& gw, const Tensor& gy,
                                      const Tensor& x, const Window2d& g, int64_t groups) {
    return false;
  }

  // ---- convolution and pooling: contiguous (planes, H, W) images, floating dtypes ---------------
  // col (planes, kh*kw, out_h*out_w) = the input element under each tap of each window, 0 in the
  // padding (im2col copies any dtype).
  virtual void im2col(const Tensor& col, const Tensor& in, const Window2d& g) { missing("im2col"); }
  // in (planes, H, W) = the sum of the col entries im2col takes from each element (its adjoint).
  virtual void col2im(const Tensor& in, const Tensor& col, const Window2d& g) { missing("col2im"); }
  // out (planes, out_h, out_w) = window maxima (NaN wins), indices = their h * W + w (int64).
  virtual void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in,
                          const Window2d& g) {
    missing("max_pool2d");
  }
  // grad_in (planes, H, W) = the sum of grad_out over the outputs whose index names the element.
  virtual void max_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out,
                                   const Tensor& indices, const Window2d& g) {
    missing("max_pool2d_backward");
  }
  // out = window means (avg_window); adaptive windows when p.adaptive.
  virtual void avg_pool2d(const Tensor& out, const Tensor& in, const Window2d& g,
                          const AvgPool2dParams& p) {
    missing("avg_pool2d");
  }
  virtual void avg_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out, const Window2d& g,
                                   const AvgPool2dParams& p) {
    missing("avg_pool2d_backward");
  }

  // ---- indexing: indices are int64 (a device backend also takes int32 ones as they are) --------
  // The op layer checks CPU indices on the host (and wraps negative ones for index/index_put_).
  // A device backend checks them in its kernels instead (wrapping negatives for index and
  // index_put), skips the elements whose index is out of range and raises IndexError naming
  // check.op: indices never travel to the host.
  virtual void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                            const IndexCheck& check) {
    missing("index_select");
  }
  virtual void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                      const IndexCheck& check) {
    missing("gather");
  }
  // out[..index[i]..] = src[i] (or += when accumulate) along dim.
  virtual void scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                       bool accumulate, const IndexCheck& check) {
    missing("scatter");
  }
  // out (index shape + in.shape[k:]) = in[idx0, ..., idx{k-1}]; indices broadcast to one shape.
  virtual void index(const Tensor& out, const Tensor& in, const TensorList& indices,
                     const IndexCheck& check) {
    missing("index");
  }
  // self[idx0, ..., idx{k-1}] = values (or +=), values broadcast to (index shape + rest).
  virtual void index_put(const Tensor& self, const TensorList& indices, const Tensor& values,
                         bool accumulate, const IndexCheck& check) {
    missing("index_put_");
  }
  // (count, dim) int64 coordinates of non-zero elements of in.
  virtual Tensor nonzero(const Tensor& in) { missing("nonzero"); }
  virtual void sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                    bool descending, bool stable) {
    missing("sort");
  }
  virtual void topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                    int64_t dim, bool largest, bool sorted) {
    missing("topk");
  }
  // out = in with elements above (upper=false) or below (upper=true) diagonal k zeroed.
  virtual void tril_triu(const Tensor& out, const Tensor& in, int64_t k, bool upper) {
    missing("tril/triu");
  }

  // ---- softmax cross-entropy and nll over rows: input (M, C) contiguous, target (M) int64 ------
  // loss, row_weight and lse are (M) contiguous in the accumulation dtype (float32 for 16-bit
  // inputs); weight (C) has input's dtype or is undefined; weight_sum is weight.sum() as a
  // 1-element tensor of the accumulation dtype (undefined without weight: it is C).
  // With from_logits, row i gives lse_i = log sum_c exp(x_ic) and, t = target_i, e = smoothing,
  //   loss_i = (1 - e) w_t (lse_i - x_it) + e / C sum_c w_c (lse_i - x_ic);
  // without (nll of log-probabilities) loss_i = -w_t x_it and lse_i = 0. row_weight_i = w_t.
  // Rows whose target is ignore_index give 0 for both; a target outside [0, C) raises IndexError
  // "[op] Target t is out of bounds." (after the kernels on a device).
  virtual void cross_entropy(const Tensor& loss, const Tensor& row_weight, const Tensor& lse,
                             const Tensor& input, const Tensor& target, const Tensor& weight,
                             const Tensor& weight_sum, const CrossEntropyParams& p) {
    missing(p.op);
  }
  // grad_input (M, C) contiguous = d loss_i / d x_ic * grad_rows_i; grad_rows (M) in the
  // accumulation dtype, any stride (0 broadcasts one value). Targets were checked by the forward.
  virtual void cross_entropy_backward(const Tensor& grad_input, const Tensor& grad_rows,
                                      const Tensor& input, const Tensor& lse, const Tensor& target,
                                      const Tensor& weight, const Tensor& weight_sum,
                                      const CrossEntropyParams& p) {
    missing(p.op);
  }

  // ---- random: counter-based Philox; element i depends only on (seed, offset, i) ---------------
  virtual void random(RandomOp op, const Tensor& out, uint64_t seed, uint64_t offset,
                      const RandomParams& p) {
    missing("random");
  }
  // out = (u < p) with p a tensor of out's shape.
  virtual void bernoulli(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) {
    missing("bernoulli");
  }

  // ---- optimizer updates (kernels/optim_ops.h) --------------------------------------------------
  // Updates every parameter of one device and dtype in one fused pass. slots[k][i] is operand k
  // of parameter i (param, grad, then the op's state tensors; undefined where the op has none),
  // all contiguous with the parameter's numel; scalars[i] holds parameter i's step values.
  virtual void optim_step(OptimOp op, const std::vector<TensorList>& slots, const OptimHyper& h,
                          const std::vector<OptimTensorScalars>& scalars) {
    missing("optimizer step");
  }

  // ---- mixed precision (kernels/amp_ops.h) ------------------------------------------------------
  // One pass over grads (contiguous, one float dtype, this device): every element is multiplied
  // by inv_scale[0]; found_inf[0] becomes 1 when any element was inf or NaN before, and first_bad
  // (int32, may be undefined) is lowered to the smallest ids[i] of a gradient that had one.
  // found_inf and inv_scale are one-element float32 tensors; nothing is read on the host.
  virtual void amp_unscale(const TensorList& grads, const std::vector<int32_t>& ids,
                           const Tensor& found_inf, const Tensor& inv_scale,
                           const Tensor& first_bad) {
    missing("_amp_foreach_non_finite_check_and_unscale_");
  }
  // Updates the one-element scale (float32) and growth_tracker (int32) from found_inf (float32)
  // on the device (amp_update_scale_value).
  virtual void amp_update_scale(const Tensor& scale, const Tensor& growth_tracker,
                                const Tensor& found_inf, double growth_factor,
                                double backoff_factor, int64_t growth_interval) {
    missing("_amp_update_scale_");
  }

 protected:
  [[noreturn]] void missing(const char* op) const {
    throw NotImplementedError(std::string("[") + op + "] has no " + name() + " kernel");
  }
};

// The backend for a device type; raises for CUDA when ember was built without it.
Backend& backend(DeviceType type);
inline Backend& backend(Device device) { return backend(device.type()); }
// The CUDA backend when this build has one (even with no device), else nullptr. Never throws.
Backend* cuda_backend_if_present();
// Installs the backend for a device type (the CUDA backend registers itself at load time).
void register_backend(DeviceType type, Backend* b);

// Test hook: while enabled, every fresh allocation on every backend (including blocks a caching
// allocator hands out again) is filled with pattern, so an output a kernel never writes is seen.
void set_alloc_poison(bool enabled, uint8_t pattern = 0xFF);
// The byte device allocators fill fresh blocks with, or -1 when poisoning is off.
int device_alloc_poison();

}  // namespace ember
