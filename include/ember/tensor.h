// Tensor: a strided view of a Storage with a dtype and a device. Copies share data (like PyTorch).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/scalar.h"
#include "ember/shape.h"
#include "ember/storage.h"

namespace ember {

// Options for factories: TensorOptions().dtype(kFloat16).device(Device("cuda:0")).
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(DType t) : dtype_(t) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(Device(t)) {}
  TensorOptions(const char* device) : device_(Device(device)) {}

  TensorOptions dtype(DType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions pinned_memory(bool p) const {
    TensorOptions o = *this;
    o.pinned_ = p;
    return o;
  }
  // Factories return a leaf that requires grad (floating dtypes only).
  TensorOptions requires_grad(bool r) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }

  // The dtype, or the default float dtype when none was set.
  DType dtype() const { return dtype_.value_or(default_dtype()); }
  bool has_dtype() const { return dtype_.has_value(); }
  Device device() const { return device_; }
  bool pinned_memory() const { return pinned_; }
  bool requires_grad() const { return requires_grad_; }

 private:
  std::optional<DType> dtype_;
  Device device_ = Device(kCPU);
  bool pinned_ = false;
  bool requires_grad_ = false;
};

namespace autograd {
class Node;
struct AutogradMeta;
}  // namespace autograd

// The shared state behind a Tensor handle.
struct TensorImpl {
  Storage storage;
  Shape sizes;
  Shape strides;       // in elements
  int64_t offset = 0;  // in elements
  DType dtype = kFloat32;
  Device device;
  int64_t numel = 0;
  bool contiguous = true;
  // Autograd state (requires_grad, grad, grad_fn, hooks); null for tensors outside autograd.
  std::shared_ptr<autograd::AutogradMeta> autograd;
  // For views: the tensor whose storage this one views (never itself a view), the storage
  // version its grad_fn was made at, and whether it was made with grad mode off.
  std::shared_ptr<TensorImpl> view_base;
  uint32_t view_version = 0;
  bool view_no_grad = false;

  // Recomputes numel and the contiguity flag after sizes/strides change.
  void refresh();
};

class Tensor;
using TensorList = std::vector<Tensor>;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata ------------------------------------------------------------------------------
  bool defined() const { return impl_ != nullptr; }
  // Drops this handle's reference, leaving it undefined (libtorch's reset()).
  void reset() { impl_.reset(); }
  const Shape& sizes() const { return impl().sizes; }
  const Shape& shape() const { return impl().sizes; }
  const Shape& strides() const { return impl().strides; }
  // Size of one dim; negative dims count from the end.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().sizes.size()); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl().numel; }
  int64_t storage_offset() const { return impl().offset; }
  DType dtype() const { return impl().dtype; }
  DType scalar_type() const { return dtype(); }
  Device device() const { return impl().device; }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_contiguous() const { return impl().contiguous; }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  TensorOptions options() const { return TensorOptions().dtype(dtype()).device(device()); }
  const Storage& storage() const { return impl().storage; }
  // True when both handles view the same storage.
  bool is_same_storage(const Tensor& o) const { return storage() == o.storage(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  TensorImpl& impl() const {
    if (!impl_) [[unlikely]]
      throw_undefined();
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // Pointer to the first element (device memory for CUDA tensors). T must match dtype().
  void* data_ptr() const;
  template <class T>
  T* data_ptr() const;
  // The value of a one-element tensor, converted to T (copies from the device).
  template <class T>
  T item() const;
  Scalar item() const;
  // All elements in row-major order, converted to T, copied to the host.
  template <class T>
  std::vector<T> to_vector() const;

  // ---- devices and dtypes ----------------------------------------------------------------------
  Tensor to(Device device, bool non_blocking = false, bool copy = false) const;
  Tensor to(DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false, bool copy = false) const;
  Tensor to(const TensorOptions& options, bool non_blocking = false, bool copy = false) const;
  Tensor cuda(int index = -1) const;
  Tensor cpu() const;
  // A copy in page-locked host memory (this tensor if it is pinned already); CPU tensors only.
  Tensor pin_memory() const;
  // True for a CPU tensor whose memory is page-locked (pin_memory, pinned_memory(true)).
  bool is_pinned() const;
  Tensor contiguous() const;
  Tensor clone() const;
  // Copies src (broadcast to this shape, any dtype/device) into this tensor.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);

  // ---- autograd (docs/autograd.md) --------------------------------------------------------------
  // True for leaves that require grad and for results of ops on such tensors (in grad mode).
  bool requires_grad() const;
  // Makes a leaf require grad (floating dtypes only); false only on leaves.
  Tensor& requires_grad_(bool requires_grad = true);
  // A leaf: created by the user (or requires no grad), not by a recorded op.
  bool is_leaf() const;
  // The accumulated gradient (leaves, and non-leaves after retain_grad()); undefined when none.
  Tensor grad() const;
  // The gradient slot itself, for optimizers: assign, zero or reset it.
  Tensor& mutable_grad() const;
  // The node that made this tensor (null for leaves) and which of its outputs this is.
  std::shared_ptr<autograd::Node> grad_fn() const;
  uint32_t output_nr() const;
  // Counts in-place modifications of the storage (shared by views); saved tensors check it.
  uint32_t _version() const;
  // Accumulates d(this)/d(leaf) into every leaf's grad(). gradient defaults to 1 for a
  // one-element tensor; retain_graph defaults to create_graph.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // A non-leaf keeps its gradient in grad() after backward.
  void retain_grad() const;
  bool retains_grad() const;
  // Shares storage (and the version counter), outside the graph.
  Tensor detach() const;
  Tensor& detach_();
  // Makes this handle (and every copy of it) refer to data's storage, shape, dtype and device,
  // keeping its autograd identity (requires_grad, grad, hooks): what Module::to uses to move
  // parameters in place. Outside the graph.
  void set_data(const Tensor& data) const;
  // Runs on this tensor's gradient during backward, in registration order; returns a handle.
  size_t register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(size_t handle) const;
  // Leaves only: runs after the gradient was accumulated into grad().
  size_t register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const;
  // Whether this tensor is a view of another one's storage, and that tensor.
  bool is_view() const;
  Tensor _base() const;

  // ---- views (share storage) ------------------------------------------------------------------
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(const Shape& dims) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, const Shape& sizes) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor movedim(int64_t source, int64_t destination) const;
  Tensor as_strided(const Shape& sizes, const Shape& strides, int64_t storage_offset) const;
  TensorList split(int64_t split_size, int64_t dim = 0) const;
  TensorList split(const std::vector<int64_t>& split_sizes, int64_t dim = 0) const;
  TensorList chunk(int64_t chunks, int64_t dim = 0) const;
  TensorList unbind(int64_t dim = 0) const;

  // ---- element-wise ---------------------------------------------------------------------------
  Tensor neg() const;
  Tensor abs() const;
  Tensor sign() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor erf() const;
  Tensor relu() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor trunc() const;
  Tensor logical_not() const;
  Tensor bitwise_not() const;
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  // rounding_mode: "" (true division), "trunc" or "floor".
  Tensor div(const Tensor& other, const std::string& rounding_mode = "") const;
  Tensor div(Scalar other, const std::string& rounding_mode = "") const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(Scalar other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(Scalar other) const;
  Tensor atan2(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(Scalar other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(Scalar other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(Scalar other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor addcmul(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
  Tensor addcdiv(const Tensor& t1, const Tensor& t2, Scalar value = 1) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value) const;

  // ---- in place -------------------------------------------------------------------------------
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other, const std::string& rounding_mode = "");
  Tensor& div_(Scalar other, const std::string& rounding_mode = "");
  Tensor& pow_(Scalar exponent);
  Tensor& neg_();
  Tensor& abs_();
  Tensor& exp_();
  Tensor& log_();
  Tensor& sqrt_();
  Tensor& relu_();
  Tensor& sigmoid_();
  Tensor& tanh_();
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& lerp_(const Tensor& end, Scalar weight);
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, Scalar value = 1);
  Tensor& masked_fill_(const Tensor& mask, Scalar value);
  Tensor& fill_(Scalar value);
  Tensor& zero_();
  Tensor& uniform_(double from = 0.0, double to = 1.0);
  Tensor& normal_(double mean = 0.0, double std = 1.0);
  Tensor& bernoulli_(double p = 0.5);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& scatter_(int64_t dim, const Tensor& index, Scalar value);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  Tensor& index_put_(const TensorList& indices, const Tensor& values, bool accumulate = false);

  // ---- reductions (dims empty = all dims) ------------------------------------------------------
  Tensor sum(const std::vector<int64_t>& dims = {}, bool keepdim = false,
             std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor prod(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor amin(const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(const std::vector<int64_t>& dims = {}, int64_t correction = 1,
             bool keepdim = false) const;
  Tensor std(const std::vector<int64_t>& dims = {}, int64_t correction = 1,
             bool keepdim = false) const;
  Tensor norm(double p = 2.0, const std::vector<int64_t>& dims = {}, bool keepdim = false) const;
  Tensor logsumexp(const std::vector<int64_t>& dims, bool keepdim = false) const;
  Tensor any(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor all(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int64_t dim) const;
  Tensor cumprod(int64_t dim) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

  // ---- linear algebra, indexing, sorting --------------------------------------------------------
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  // Advanced indexing: integer or boolean tensors index the leading dims (t[idx0, idx1, ...]).
  Tensor index(const TensorList& indices) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor nonzero() const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false,
                                  bool stable = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true,
                                  bool sorted = true) const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;

 private:
  [[noreturn]] static void throw_undefined();
  std::shared_ptr<TensorImpl> impl_;
};

// PyTorch-style print: tensor([[1., 2.], [3., 4.]], dtype=float64, device='cuda:0').
std::ostream& operator<<(std::ostream& os, const Tensor& t);
// The same text as operator<<.
std::string to_string(const Tensor& t);

Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor& operator+=(Tensor& a, const Tensor& b);
Tensor& operator+=(Tensor& a, Scalar b);
Tensor& operator-=(Tensor& a, const Tensor& b);
Tensor& operator-=(Tensor& a, Scalar b);
Tensor& operator*=(Tensor& a, const Tensor& b);
Tensor& operator*=(Tensor& a, Scalar b);
Tensor& operator/=(Tensor& a, const Tensor& b);
Tensor& operator/=(Tensor& a, Scalar b);
// Element-wise comparisons returning bool tensors (as in libtorch).
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);

}  // namespace ember
