// The op surface: one free function per op, PyTorch's names and argument order.
// Shapes in comments: (N, C) etc. Every op checks that its tensors share one device.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/backends.h"
#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

// ---- factories ----------------------------------------------------------------------------------
// Uninitialised memory.
Tensor empty(const Shape& size, TensorOptions options = {});
Tensor zeros(const Shape& size, TensorOptions options = {});
Tensor ones(const Shape& size, TensorOptions options = {});
// dtype defaults to the fill value's (bool, int64 or the default float), as in PyTorch.
Tensor full(const Shape& size, Scalar value, TensorOptions options = {});
// [0, end) or [start, end) by step; int64 when all bounds are integers, else the default float.
Tensor arange(Scalar end, TensorOptions options = {});
Tensor arange(Scalar start, Scalar end, Scalar step = 1, TensorOptions options = {});
Tensor linspace(double start, double end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions options = {});
// A 0-dim tensor holding value.
Tensor scalar_tensor(Scalar value, TensorOptions options = {});
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& t, Scalar value,
                 std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);

// Copies host values. An empty shape means 1-D of values.size() elements. dtype defaults to T's.
template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape = {}, TensorOptions options = {});
// Braced lists follow PyTorch: floating literals give the default float dtype, integers int64.
Tensor tensor(std::initializer_list<double> values, const Shape& shape = {},
              TensorOptions options = {});
Tensor tensor(std::initializer_list<float> values, const Shape& shape = {},
              TensorOptions options = {});
Tensor tensor(std::initializer_list<int> values, const Shape& shape = {},
              TensorOptions options = {});
Tensor tensor(std::initializer_list<int64_t> values, const Shape& shape = {},
              TensorOptions options = {});
Tensor tensor(std::initializer_list<bool> values, const Shape& shape = {},
              TensorOptions options = {});
// Wraps existing host memory without copying; the caller keeps it alive. strides empty = row-major.
Tensor from_blob(void* data, const Shape& sizes, TensorOptions options = {},
                 const Shape& strides = {});
// t, made a leaf that requires grad when options.requires_grad() is set.
Tensor as_leaf(Tensor t, const TensorOptions& options);

// ---- random (Philox4x32-10; the same seed gives the same numbers on every device) ---------------
// manual_seed(seed) (ember/generator.h) seeds the CPU generator and every CUDA device's.
// Uniform on [0, 1).
Tensor rand(const Shape& size, TensorOptions options = {});
// Standard normal.
Tensor randn(const Shape& size, TensorOptions options = {});
// Integers uniform on [low, high); int64 unless options name a dtype.
Tensor randint(int64_t low, int64_t high, const Shape& size, TensorOptions options = {});
Tensor randint(int64_t high, const Shape& size, TensorOptions options = {});
// A random permutation of 0..n-1 (int64 unless options name a dtype).
Tensor randperm(int64_t n, TensorOptions options = {});
// 1 with probability p (each element of p, or the scalar p), else 0; same dtype as the input.
Tensor bernoulli(const Tensor& p);
Tensor bernoulli(const Tensor& input, double p);
Tensor normal(double mean, double std, const Shape& size, TensorOptions options = {});

// ---- type promotion -----------------------------------------------------------------------------
// The dtype an op on these operands computes in (PyTorch's result_type).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);
// The common shape of broadcasting a and b; throws when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
TensorList broadcast_tensors(const TensorList& tensors);

// ---- unary element-wise -------------------------------------------------------------------------
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor relu(const Tensor& x);
// approximate: "none" (exact, erf) or "tanh".
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
// Rounds half to even, as PyTorch.
Tensor round(const Tensor& x);
Tensor trunc(const Tensor& x);
Tensor logical_not(const Tensor& x);
Tensor bitwise_not(const Tensor& x);

// ---- binary element-wise (broadcasting, PyTorch type promotion) ---------------------------------
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor rsub(const Tensor& a, Scalar b, Scalar alpha = 1);  // b - alpha * a
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
// rounding_mode: "" true division (integers promote to float), "trunc" or "floor".
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode = "");
Tensor div(const Tensor& a, Scalar b, const std::string& rounding_mode = "");
Tensor div(Scalar a, const Tensor& b, const std::string& rounding_mode = "");
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, Scalar b);
Tensor pow(Scalar a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// Remainder with the sign of the dividend (C fmod).
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
// Remainder with the sign of the divisor (Python %).
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
Tensor atan2(const Tensor& a, const Tensor& b);
// log(exp(a) + exp(b)) without overflow (logaddexp(-inf, -inf) = -inf, (inf, inf) = inf); floats,
// integers promote to the default float dtype.
Tensor logaddexp(const Tensor& a, const Tensor& b);
// log2(2^a + 2^b), the same in base 2.
Tensor logaddexp2(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, Scalar b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Integer and bool tensors only.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
// True where |a - b| <= atol + rtol * |b| (NaNs equal when equal_nan).
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// Same shape and the same values.
bool equal(const Tensor& a, const Tensor& b);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);

// ---- ternary element-wise -----------------------------------------------------------------------
// condition ? a : b (condition is bool; a and b promote).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, Scalar b);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b);
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
// start + weight * (end - start)
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
// x + value * t1 * t2
Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);
// x + value * t1 / t2
Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value = 1);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

// ---- reductions (dims empty = every dim) --------------------------------------------------------
// Integers and bool sum to int64 unless dtype is given.
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Largest element (no dims) or (values, indices) along dim.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Index of the first maximum; over the flattened tensor when dim is not given.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
// Variance with Bessel's correction by default (correction = 1).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
           bool keepdim = false);
Tensor std(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1,
           bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int64_t>& dims = {},
                                    int64_t correction = 1, bool keepdim = false);
// p-norm (p = inf for max |x|, 0 for the count of non-zeros).
Tensor norm(const Tensor& x, double p = 2.0, const std::vector<int64_t>& dims = {},
            bool keepdim = false);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor any(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor all(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

// ---- linear algebra (through BLAS) --------------------------------------------------------------
// (n, k) @ (k, m) -> (n, m)
Tensor mm(const Tensor& a, const Tensor& b);
// (B, n, k) @ (B, k, m) -> (B, n, m)
Tensor bmm(const Tensor& a, const Tensor& b);
// numpy matmul: 1-D dot, 2-D mm, batched with broadcast batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
// beta * input + alpha * (a @ b), input broadcast to (n, m).
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta = 1,
             Scalar alpha = 1);
// x (*, in) @ weight (out, in)^T + bias (out) -> (*, out)
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});
Tensor dot(const Tensor& a, const Tensor& b);
Tensor outer(const Tensor& a, const Tensor& b);
// set_float32_matmul_precision / get_float32_matmul_precision: in ember/backends.h.

// ---- joining, indexing, sorting -----------------------------------------------------------------
Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// x[indices...]: int64/int32 index tensors broadcast together; a bool mask stands for its
// nonzero().
Tensor index(const Tensor& x, const TensorList& indices);
// x[indices...] = values (or += when accumulate).
Tensor& index_put_(Tensor& x, const TensorList& indices, const Tensor& values,
                   bool accumulate = false);
Tensor index_put(const Tensor& x, const TensorList& indices, const Tensor& values,
                 bool accumulate = false);
// Elements where mask is true, as a 1-D tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);
// (count, dim) int64 coordinates of the non-zero elements.
Tensor nonzero(const Tensor& x);
// Rows of weight (V, D) picked by integer indices (*) -> (*, D).
Tensor embedding(const Tensor& weight, const Tensor& indices);
// (*) int64 -> (*, num_classes) int64; num_classes = max + 1 when -1.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false,
                                bool stable = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false, bool stable = false);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true);
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);

// ---- mixed precision (the loss scaler's device passes; amp::GradScaler calls them) ------------
// PyTorch's torch._amp_foreach_non_finite_check_and_unscale_: multiplies every gradient (float
// dtypes, any devices) by inv_scale in place and sets found_inf to 1 when any element was inf or
// NaN before; one fused pass per (device, dtype) group, nothing read on the host. found_inf and
// inv_scale: one-element float32 tensors on the gradients' device. first_nonfinite (optional,
// one-element int32 there too) is lowered to the index in grads of the first gradient that held a
// non-finite value.
void _amp_foreach_non_finite_check_and_unscale_(const TensorList& grads, const Tensor& found_inf,
                                                const Tensor& inv_scale,
                                                const Tensor& first_nonfinite = Tensor());
// PyTorch's torch._amp_update_scale_, on the device: with found_inf > 0 the scale (one-element
// float32) is multiplied by backoff_factor and growth_tracker (one-element int32) reset to 0;
// otherwise the tracker counts, and after growth_interval clean steps the scale is multiplied by
// growth_factor (kept when that overflows) and the tracker restarts.
void _amp_update_scale_(const Tensor& scale, const Tensor& growth_tracker, const Tensor& found_inf,
                        double growth_factor, double backoff_factor, int64_t growth_interval);

}  // namespace ember
