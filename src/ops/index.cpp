// Indexing ops: index_select, gather, scatter, advanced indexing (index, index_put_),
// masked_select, nonzero, embedding, one_hot, tril/triu. CPU indices are bounds-checked here,
// device indices by the backend's kernels.
#include <algorithm>
#include <numeric>

#include "autograd/function.h"
#include "ops/autocast.h"
#include "ops/index_grad.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

std::string dname(DType t) { return std::string(dtype_name(t)); }

void check_defined(const char* op, const Tensor& t, const char* what) {
  if (!t.defined()) throw ValueError(op_prefix(op) + "the " + what + " tensor is undefined");
}

// A 0-dim tensor seen as 1-D of one element (the kernels work on dims >= 1).
Tensor as_1d(const Tensor& t) { return t.dim() == 0 ? t.view({1}) : t; }

// Raises for the first index outside [0, size) (or [-size, size) when negatives wrap). Used for
// CPU tensors only: a device backend checks its indices in its kernels (see backend.h),
// so they never travel to the host. Returns true when some index is negative.
bool check_bounds(const char* op, const Tensor& index, int64_t dim, int64_t size, bool wrap) {
  if (index.numel() == 0) return false;
  bool negative = false;
  for (int64_t v : index.to_vector<int64_t>()) {
    if (v >= size || v < (wrap ? -size : 0)) {
      throw IndexError(op_prefix(op) + "index " + std::to_string(v) +
                       " is out of bounds for dimension " + std::to_string(dim) + " with size " +
                       std::to_string(size));
    }
    negative |= v < 0;
  }
  return negative;
}

// An index tensor as the backend takes it: int64, or int32 as it is on a device (converting it
// there would be one more pass, or a trip through the host).
Tensor index_operand(const Tensor& index, Device dev) {
  if (!dev.is_cpu() && index.dtype() == kInt32) return to_operand(index, kInt32, dev);
  return to_operand(index, kInt64, dev);
}

void check_int64_index(const char* op, const Tensor& index) {
  if (index.dtype() != kInt64) {
    throw TypeError(op_prefix(op) + "expected an int64 index tensor, got " + dname(index.dtype()));
  }
}

void check_int_index(const char* op, const Tensor& index) {
  if (index.dtype() != kInt64 && index.dtype() != kInt32) {
    throw TypeError(op_prefix(op) + "expected an int64 or int32 index tensor, got " +
                    dname(index.dtype()));
  }
}

// ---- index_select -------------------------------------------------------------------------------

Tensor index_select_impl(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  check_defined(op, x, "input");
  check_defined(op, index, "index");
  Device dev = common_device(op, {&x, &index});
  check_int_index(op, index);
  if (index.dim() > 1) {
    throw ValueError(op_prefix(op) + "index must be 0-D or 1-D, got shape " + shape_str(index));
  }
  dim = wrap_dim(op, dim, x.dim());
  if (x.dim() == 0 && index.numel() != 1) {
    throw ValueError(op_prefix(op) + "index of a 0-dim tensor must hold exactly 1 value, got " +
                     std::to_string(index.numel()));
  }
  Tensor in = as_1d(to_operand(x, x.dtype(), dev));
  if (dev.is_cpu()) check_bounds(op, index, dim, in.sizes()[dim], false);
  Shape shape = in.sizes();
  shape[dim] = index.numel();
  Tensor out = make_empty(shape, x.dtype(), dev, false, op);
  if (out.numel() > 0) {
    backend(dev).index_select(out, in, dim, as_1d(index_operand(index, dev)), IndexCheck{op, {}});
  }
  return x.dim() == 0 ? out.view({}) : out;
}

// ---- gather / scatter ---------------------------------------------------------------------------

// index must have the rank of self (0-dim counting as 1-D) and fit inside self (and src) on
// every dim but `dim`.
void check_scatter_shapes(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                          const Tensor* src) {
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  if (std::max<int64_t>(index.dim(), 1) != rank) {
    throw ValueError(op_prefix(op) + "index tensor must have the same number of dimensions as " +
                     "the input tensor, got index of shape " + shape_str(index) +
                     " and input of shape " + shape_str(self));
  }
  if (src && std::max<int64_t>(src->dim(), 1) != rank) {
    throw ValueError(op_prefix(op) + "index tensor must have the same number of dimensions as " +
                     "the src tensor, got index of shape " + shape_str(index) +
                     " and src of shape " + shape_str(*src));
  }
  Tensor s1 = as_1d(self), i1 = as_1d(index);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t n = i1.sizes()[d];
    bool bad = d != dim && n > s1.sizes()[d];
    if (src) bad = bad || n > as_1d(*src).sizes()[d];
    if (bad) {
      std::string msg = op_prefix(op) + "size does not match at dimension " + std::to_string(d) +
                        ": expected index " + shape_str(index) +
                        " to be no larger than the input " + shape_str(self) +
                        " apart from dimension " + std::to_string(dim);
      if (src) msg += " and no larger than src " + shape_str(*src);
      throw ValueError(msg);
    }
  }
}

// self[..index[i]..] = src[i] (or +=) along dim, in place. src undefined: the scalar value.
Tensor& scatter_impl(const char* op, Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& src, Scalar value, bool accumulate) {
  check_defined(op, self, "input");
  check_defined(op, index, "index");
  Device dev = common_device(op, {&self, &index, &src});
  if (dev != self.device()) {
    throw Error(op_prefix(op) +
                "Expected all tensors to be on the same device, but found at least two devices, " +
                self.device().str() + " and " + dev.str() + "!");
  }
  check_int64_index(op, index);
  if (src.defined() && src.dtype() != self.dtype()) {
    throw TypeError(op_prefix(op) + "expected self and src to have the same dtype, got " +
                    dname(self.dtype()) + " and " + dname(src.dtype()));
  }
  dim = wrap_dim(op, dim, self.dim());
  check_scatter_shapes(op, self, dim, index, src.defined() ? &src : nullptr);
  Tensor s1 = as_1d(self);
  if (dev.is_cpu()) check_bounds(op, index, dim, s1.sizes()[dim], false);
  if (index.numel() == 0) return self;
  Tensor idx = as_1d(to_operand(index, kInt64, dev));
  if (idx.is_same_storage(self)) idx = idx.clone();
  Tensor sv;
  if (src.defined()) {
    // src may be larger than index: only its leading index-shaped corner is read.
    Tensor s = as_1d(to_operand(src, self.dtype(), dev));
    sv = make_view(s, idx.sizes(), s.strides(), s.storage_offset());
    if (sv.is_same_storage(self)) sv = sv.clone();
  } else {
    sv = scalar_tensor(value, TensorOptions().dtype(self.dtype()).device(dev)).expand(idx.sizes());
  }
  if (self.storage()) self.storage()->bump_version();
  backend(dev).scatter(s1, dim, idx, sv, accumulate, IndexCheck{op, {}});
  return self;
}

// ---- advanced indexing --------------------------------------------------------------------------

// What index/index_put_ hand to the backend: self with the indexed dims moved to the front,
// int64 in-range indices broadcast to one shape, and how the backend's output layout
// (index dims, remaining dims) maps onto PyTorch's result layout.
struct IndexPlan {
  Tensor self;                // a view of the input, indexed dims first
  TensorList indices;         // one per leading dim of self
  Shape result_shape;         // PyTorch's result shape
  std::vector<int64_t> perm;  // backend layout dim i is result dim perm[i]
  std::vector<int64_t> dims;  // the dim of the (mask-expanded) input each index indexes
};

// Turns a list of index tensors (undefined = the full slice ':'; bool masks spread over as many
// dims as they have) into one int64 index per indexed dim.
IndexPlan plan_index(const char* op, const Tensor& x, const TensorList& indices) {
  check_defined(op, x, "input");
  Tensor self = x;
  std::vector<Tensor> slots;  // per dim of self: index or undefined
  int64_t given = 0;
  for (const Tensor& t : indices) {
    const int64_t p = static_cast<int64_t>(slots.size());
    if (!t.defined()) {
      slots.emplace_back();
      ++given;
      continue;
    }
    if (t.device() != x.device() && !t.is_cpu()) {
      throw Error(op_prefix(op) +
                  "indices should be either on cpu or on the same device as the "
                  "indexed tensor (" +
                  x.device().str() + "), got " + t.device().str());
    }
    if (t.dtype() == kBool || t.dtype() == kUInt8) {
      const int64_t m = t.dim();
      given += m;
      if (m == 0) {
        // A 0-dim mask adds a unit dim, kept (true) or emptied (false).
        self = self.unsqueeze(p);
        const int64_t count = t.item<bool>() ? 1 : 0;
        slots.push_back(zeros({count}, TensorOptions().dtype(kInt64).device(x.device())));
        continue;
      }
      if (p + m > self.dim()) {
        throw IndexError(op_prefix(op) + "too many indices for tensor of dimension " +
                         std::to_string(x.dim()) + " (got " + std::to_string(given) + ")");
      }
      for (int64_t j = 0; j < m; ++j) {
        if (t.sizes()[j] != self.sizes()[p + j]) {
          throw IndexError(op_prefix(op) + "The shape of the mask " + shape_str(t) + " at index " +
                           std::to_string(j) + " does not match the shape of the indexed tensor " +
                           shape_str(self) + " at index " + std::to_string(p + j));
        }
      }
      Tensor nz = nonzero(t.dtype() == kBool ? t : t.to(kBool));
      for (int64_t j = 0; j < m; ++j) slots.push_back(nz.select(1, j));
      continue;
    }
    if (t.dtype() != kInt64 && t.dtype() != kInt32) {
      throw TypeError(op_prefix(op) +
                      "tensors used as indices must be int64, int32, bool or "
                      "uint8 tensors, got " +
                      dname(t.dtype()));
    }
    ++given;
    slots.push_back(t);
  }
  if (static_cast<int64_t>(slots.size()) > self.dim()) {
    throw IndexError(op_prefix(op) + "too many indices for tensor of dimension " +
                     std::to_string(x.dim()) + " (got " + std::to_string(given) + ")");
  }
  const Device dev = x.device();
  std::vector<int64_t> idx_dims, rest_dims;
  Shape bshape;
  bool first = true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool indexed = d < static_cast<int64_t>(slots.size()) && slots[d].defined();
    (indexed ? idx_dims : rest_dims).push_back(d);
    if (!indexed) continue;
    Tensor& t = slots[d];
    // A device backend wraps negative indices and checks ranges in its kernels.
    const bool negative = dev.is_cpu() && check_bounds(op, t, d, self.sizes()[d], true);
    t = index_operand(t, dev);
    if (negative) t = where(lt(t, 0), add(t, self.sizes()[d]), t);
    if (first) {
      bshape = t.sizes();
      first = false;
      continue;
    }
    try {
      bshape = broadcast_shapes(bshape, t.sizes());
    } catch (const ValueError&) {
      std::string shapes;
      for (const Tensor& s : slots) {
        if (!s.defined()) continue;
        shapes += (shapes.empty() ? "" : ", ") + shape_str(s);
      }
      throw IndexError(op_prefix(op) +
                       "shape mismatch: indexing tensors could not be broadcast "
                       "together with shapes " +
                       shapes);
    }
  }
  IndexPlan plan;
  // Indexed dims that sit next to each other keep their place in the result; otherwise the
  // index dims come first (numpy's rule).
  bool adjacent = !idx_dims.empty() &&
                  idx_dims.back() - idx_dims.front() + 1 == static_cast<int64_t>(idx_dims.size());
  const int64_t at = adjacent ? idx_dims.front() : 0;
  const int64_t mb = static_cast<int64_t>(bshape.size());
  Shape order;
  for (int64_t d : idx_dims) order.push_back(d);
  for (int64_t d : rest_dims) order.push_back(d);
  plan.self = self.permute(order);
  plan.dims = idx_dims;
  for (int64_t d : idx_dims) plan.indices.push_back(slots[d].expand(bshape));
  for (int64_t j = 0; j < static_cast<int64_t>(rest_dims.size()); ++j) {
    if (j == at) {
      for (int64_t s : bshape) plan.result_shape.push_back(s);
    }
    plan.result_shape.push_back(self.sizes()[rest_dims[j]]);
  }
  if (at == static_cast<int64_t>(rest_dims.size())) {
    for (int64_t s : bshape) plan.result_shape.push_back(s);
  }
  for (int64_t i = 0; i < mb; ++i) plan.perm.push_back(at + i);
  for (int64_t j = 0; j < static_cast<int64_t>(rest_dims.size()); ++j) {
    plan.perm.push_back(j < at ? j : j + mb);
  }
  return plan;
}

Tensor tril_triu(const char* op, const Tensor& x, int64_t k, bool upper) {
  check_defined(op, x, "input");
  if (x.dim() < 2) {
    throw ValueError(op_prefix(op) + "input tensor must have at least 2 dimensions, got shape " +
                     shape_str(x));
  }
  const int64_t lim = x.sizes()[x.dim() - 2] + x.sizes()[x.dim() - 1];
  k = std::clamp<int64_t>(k, -lim, lim);  // beyond this every element is kept or zeroed anyway
  Tensor out = make_empty(x.sizes(), x.dtype(), x.device(), false, op);
  if (out.numel() > 0) backend(x.device()).tril_triu(out, x, k, upper);
  return out;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  if (autograd::needs_grad({&x})) return grad_ops::index_select(x, dim, index);
  return index_select_impl("index_select", x, dim, index);
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  if (autograd::needs_grad({&x})) return grad_ops::gather(x, dim, index);
  const char* op = "gather";
  check_defined(op, x, "input");
  check_defined(op, index, "index");
  Device dev = common_device(op, {&x, &index});
  check_int64_index(op, index);
  dim = wrap_dim(op, dim, x.dim());
  check_scatter_shapes(op, x, dim, index, nullptr);
  Tensor in = as_1d(to_operand(x, x.dtype(), dev));
  if (dev.is_cpu()) check_bounds(op, index, dim, in.sizes()[dim], false);
  Tensor out = make_empty(index.sizes(), x.dtype(), dev, false, op);
  if (out.numel() > 0) {
    backend(dev).gather(as_1d(out), in, dim, as_1d(to_operand(index, kInt64, dev)),
                        IndexCheck{op, {}});
  }
  return out;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  if (autograd::needs_grad({&x, &src})) return grad_ops::scatter(x, dim, index, src, false);
  check_defined("scatter", x, "input");
  check_defined("scatter", src, "src");
  Tensor out = x.clone();
  return scatter_impl("scatter", out, dim, index, src, 0, false);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  if (autograd::needs_grad({&x})) return grad_ops::scatter_value(x, dim, index, value);
  check_defined("scatter", x, "input");
  Tensor out = x.clone();
  return scatter_impl("scatter", out, dim, index, Tensor(), value, false);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  if (autocast::active(autocast::Op::scatter_add, x)) {
    autocast::Scope s(autocast::Op::scatter_add, x, {x, src});
    return scatter_add(s[0], dim, index, s[1]);
  }
  if (autograd::needs_grad({&x, &src})) return grad_ops::scatter(x, dim, index, src, true);
  check_defined("scatter_add", x, "input");
  check_defined("scatter_add", src, "src");
  Tensor out = x.clone();
  return scatter_impl("scatter_add", out, dim, index, src, 0, true);
}

Tensor index(const Tensor& x, const TensorList& indices) {
  if (autograd::needs_grad({&x})) return grad_ops::index(x, indices);
  IndexPlan plan = plan_index("index", x, indices);
  if (plan.indices.empty()) return x.clone();  // only full slices: a copy of x
  Tensor out = make_empty(plan.result_shape, x.dtype(), x.device(), false, "index");
  if (out.numel() > 0) {
    backend(x.device())
        .index(out.permute(Shape(plan.perm)), plan.self, plan.indices,
               IndexCheck{"index", Shape(plan.dims)});
  }
  return out;
}

namespace {
Tensor& index_put_raw(Tensor& x, const TensorList& indices, const Tensor& values, bool accumulate) {
  const char* op = "index_put_";
  check_defined(op, values, "values");
  check_defined(op, x, "input");
  if (values.dtype() != x.dtype()) {
    throw TypeError(op_prefix(op) +
                    "index_put_ requires the source and destination dtypes to "
                    "match, got " +
                    dname(x.dtype()) + " for the destination and " + dname(values.dtype()) +
                    " for the source");
  }
  common_device(op, {&x, &values});
  if (values.device() != x.device() && !(values.is_cpu() && values.dim() == 0)) {
    throw Error(op_prefix(op) +
                "Expected all tensors to be on the same device, but found at least two devices, " +
                x.device().str() + " and " + values.device().str() + "!");
  }
  IndexPlan plan = plan_index(op, x, indices);
  const Shape target = plan.indices.empty() ? x.sizes() : plan.result_shape;
  Tensor v = to_operand(values, x.dtype(), x.device());
  while (v.dim() > static_cast<int64_t>(target.size()) && v.sizes()[0] == 1) v = v.squeeze(0);
  bool fits = v.dim() <= static_cast<int64_t>(target.size());
  if (fits) {
    try {
      fits = broadcast_shapes(v.sizes(), target) == target;
    } catch (const ValueError&) {
      fits = false;
    }
  }
  if (!fits) {
    throw ValueError(op_prefix(op) + "shape mismatch: value tensor of shape " + shape_str(values) +
                     " cannot be broadcast to indexing result of shape " + shape_str(target));
  }
  // Values that alias x are read in full before any write.
  if (v.is_same_storage(x)) v = v.clone();
  if (plan.indices.empty()) {  // only full slices
    if (accumulate) return x.add_(v);
    x.copy_(v);
    return x;
  }
  for (Tensor& t : plan.indices) {
    if (t.is_same_storage(x)) t = t.clone();
  }
  if (x.storage()) x.storage()->bump_version();
  if (target.numel() > 0) {
    backend(x.device())
        .index_put(plan.self, plan.indices, v.expand(target).permute(Shape(plan.perm)), accumulate,
                   IndexCheck{op, Shape(plan.dims)});
  }
  return x;
}

}  // namespace

Tensor& index_put_(Tensor& x, const TensorList& indices, const Tensor& values, bool accumulate) {
  check_no_internal_overlap("index_put_", x);
  return autograd::inplace(
      "index_put_", x, {&values}, [&] { index_put_raw(x, indices, values, accumulate); },
      [&](const Tensor& s) { return index_put(s, indices, values, accumulate); });
}

Tensor index_put(const Tensor& x, const TensorList& indices, const Tensor& values,
                 bool accumulate) {
  if (autocast::active(autocast::Op::index_put, x)) {
    autocast::Scope s(autocast::Op::index_put, x, {x, values});
    return index_put(s[0], indices, s[1], accumulate);
  }
  if (autograd::needs_grad({&x, &values}))
    return grad_ops::index_put(x, indices, values, accumulate);
  check_defined("index_put", x, "input");
  Tensor out = x.clone();
  return index_put_raw(out, indices, values, accumulate);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  const char* op = "masked_select";
  check_defined(op, x, "input");
  check_defined(op, mask, "mask");
  if (mask.dtype() != kBool) {
    throw TypeError(op_prefix(op) + "expected a bool mask, got " + dname(mask.dtype()));
  }
  Device dev = common_device(op, {&x, &mask});
  Shape shape;
  try {
    shape = broadcast_shapes(x.sizes(), mask.sizes());
  } catch (const ValueError&) {
    throw ValueError(op_prefix(op) + "the mask of shape " + shape_str(mask) +
                     " cannot be broadcast with the input of shape " + shape_str(x));
  }
  Tensor xb = to_operand(x, x.dtype(), dev).expand(shape);
  Tensor mb = to_operand(mask, kBool, dev).expand(shape);
  // A mask over every dim selects a flat list; a 0-dim mask goes through the unit-dim path.
  return index(xb, {mb}).reshape({-1});
}

Tensor nonzero(const Tensor& x) {
  check_defined("nonzero", x, "input");
  return backend(x.device()).nonzero(x);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  if (autograd::needs_grad({&weight})) return grad_ops::embedding(weight, indices);
  const char* op = "embedding";
  check_defined(op, weight, "weight");
  check_defined(op, indices, "indices");
  if (weight.dim() != 2) {
    throw ValueError(op_prefix(op) +
                     "weight must be 2-D (num_embeddings, embedding_dim), got "
                     "shape " +
                     shape_str(weight));
  }
  check_int_index(op, indices);
  Tensor rows = index_select_impl(op, weight, 0, indices.reshape({-1}));
  Shape shape = indices.sizes();
  shape.push_back(weight.sizes()[1]);
  return rows.view(shape);
}

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  const char* op = "one_hot";
  check_defined(op, indices, "indices");
  if (indices.dtype() != kInt64) {
    throw TypeError(op_prefix(op) + "one_hot is only applicable to an int64 index tensor, got " +
                    dname(indices.dtype()));
  }
  if (num_classes < -1) {
    throw ValueError(op_prefix(op) + "num_classes must be -1 or non-negative, got " +
                     std::to_string(num_classes));
  }
  // The values are read on the host: one pass finds the range for the checks and the inference.
  std::vector<int64_t> vals = indices.to_vector<int64_t>();
  if (num_classes == -1 && vals.empty()) {
    throw ValueError(op_prefix(op) + "Can not infer total number of classes from empty tensor.");
  }
  if (!vals.empty()) {
    auto [lo, hi] = std::minmax_element(vals.begin(), vals.end());
    if (*lo < 0) throw ValueError(op_prefix(op) + "Class values must be non-negative.");
    if (num_classes == -1) num_classes = *hi + 1;
    if (*hi >= num_classes) {
      throw ValueError(op_prefix(op) + "Class values must be smaller than num_classes (got " +
                       std::to_string(*hi) + " for num_classes " + std::to_string(num_classes) +
                       ").");
    }
  }
  Shape shape = indices.sizes();
  shape.push_back(num_classes);
  Device dev = indices.device();
  Tensor out = zeros(shape, TensorOptions().dtype(kInt64).device(dev));
  if (!vals.empty()) {
    Tensor idx = indices.unsqueeze(-1);
    Tensor one = scalar_tensor(1, TensorOptions().dtype(kInt64).device(dev)).expand(idx.sizes());
    backend(dev).scatter(out, out.dim() - 1, idx, one, false, IndexCheck{op, {}});
  }
  return out;
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  if (autograd::needs_grad({&x})) return grad_ops::tril_triu(x, diagonal, false);
  return tril_triu("tril", x, diagonal, false);
}
Tensor triu(const Tensor& x, int64_t diagonal) {
  if (autograd::needs_grad({&x})) return grad_ops::tril_triu(x, diagonal, true);
  return tril_triu("triu", x, diagonal, true);
}

// ---- Tensor members -----------------------------------------------------------------------------

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return ember::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return ember::gather(*this, dim, index);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src) {
  check_defined("scatter", src, "src");
  check_no_internal_overlap("scatter_", *this);
  return autograd::inplace(
      "scatter_", *this, {&src}, [&] { scatter_impl("scatter", *this, dim, index, src, 0, false); },
      [&](const Tensor& s) { return ember::scatter(s, dim, index, src); });
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, Scalar value) {
  check_no_internal_overlap("scatter_", *this);
  return autograd::inplace(
      "scatter_", *this, {},
      [&] { scatter_impl("scatter", *this, dim, index, Tensor(), value, false); },
      [&](const Tensor& s) { return ember::scatter(s, dim, index, value); });
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  check_defined("scatter_add", src, "src");
  check_no_internal_overlap("scatter_add_", *this);
  return autograd::inplace(
      "scatter_add_", *this, {&src},
      [&] { scatter_impl("scatter_add", *this, dim, index, src, 0, true); },
      [&](const Tensor& s) { return ember::scatter_add(s, dim, index, src); });
}
Tensor Tensor::index(const TensorList& indices) const { return ember::index(*this, indices); }
Tensor& Tensor::index_put_(const TensorList& indices, const Tensor& values, bool accumulate) {
  return ember::index_put_(*this, indices, values, accumulate);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::nonzero() const { return ember::nonzero(*this); }
Tensor Tensor::tril(int64_t diagonal) const { return ember::tril(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return ember::triu(*this, diagonal); }

}  // namespace ember
