// Views: new sizes/strides/offset over the same storage. No data moves here.
#include <algorithm>
#include <numeric>
#include <optional>

#include "autograd/function.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

// Records a view op: out shares in's storage; bwd maps out's gradient to in's shape.
template <class B>
Tensor view_result(const char* name, const Tensor& in, Tensor out, B&& bwd) {
  if (autograd::needs_grad({&in})) {
    autograd::record(
        name, {in}, {out}, {},
        [bwd = std::forward<B>(bwd)](const TensorList& g, const autograd::GradContext&) {
          return TensorList{bwd(g[0])};
        },
        true);
  }
  return out;
}

auto reshape_to(const Tensor& t) {
  return [in = t.sizes()](const Tensor& g) { return g.reshape(in); };
}
auto identity() {
  return [](const Tensor& g) { return g; };
}

// Resolves one -1 in a requested shape and checks the element count.
Shape infer_shape(const char* op, const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer) throw ValueError(op_prefix(op) + "only one dimension can be inferred");
      infer = i;
    } else if (out[i] < 0) {
      throw ValueError(op_prefix(op) + "invalid shape dimension " + std::to_string(out[i]));
    } else {
      if (out[i] != 0 && known > INT64_MAX / out[i]) {
        throw ValueError(op_prefix(op) + "shape " + shape_str(shape) + " overflows int64");
      }
      known *= out[i];
    }
  }
  if (infer) {
    if (known == 0 || numel % known != 0) {
      throw ValueError(op_prefix(op) + "shape '" + shape_str(shape) +
                       "' is invalid for input of size " + std::to_string(numel));
    }
    out[*infer] = numel / known;
  } else if (known != numel) {
    throw ValueError(op_prefix(op) + "shape '" + shape_str(shape) +
                     "' is invalid for input of size " + std::to_string(numel));
  }
  return out;
}

// Strides for viewing (sizes, strides) as new_sizes without copying, if possible (PyTorch's
// computeStride): each run of old dims that is contiguous in memory may be re-split freely.
std::optional<Shape> view_strides(const Shape& sizes, const Shape& strides,
                                  const Shape& new_sizes) {
  Shape out(new_sizes.size(), 0);
  if (sizes.empty()) {
    std::fill(out.begin(), out.end(), 1);
    return out;
  }
  int64_t numel = sizes.numel();
  if (numel == 0) {
    if (sizes == new_sizes) return strides;
    return contiguous_strides(new_sizes, "view");
  }
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

}  // namespace

Tensor Tensor::view(const Shape& shape) const {
  Shape s = infer_shape("view", shape, numel());
  auto st = view_strides(sizes(), strides(), s);
  if (!st) {
    throw ValueError(
        "[view] view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces) for a tensor of shape " +
        shape_str(*this) + " viewed as " + shape_str(s) + ". Use .reshape(...) instead.");
  }
  return view_result("ViewBackward0", *this, make_view(*this, s, *st, storage_offset()),
                     reshape_to(*this));
}

Tensor Tensor::reshape(const Shape& shape) const {
  Shape s = infer_shape("reshape", shape, numel());
  if (auto st = view_strides(sizes(), strides(), s)) {
    return view_result("ViewBackward0", *this, make_view(*this, s, *st, storage_offset()),
                       reshape_to(*this));
  }
  return clone().view(s);
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  int64_t n = dim();
  d0 = wrap_dim("transpose", d0, n);
  d1 = wrap_dim("transpose", d1, n);
  if (n == 0) {
    return view_result("TransposeBackward0", *this,
                       make_view(*this, sizes(), strides(), storage_offset()), identity());
  }
  Shape sz = sizes(), st = strides();
  std::swap(sz[d0], sz[d1]);
  std::swap(st[d0], st[d1]);
  return view_result("TransposeBackward0", *this, make_view(*this, sz, st, storage_offset()),
                     [d0, d1](const Tensor& g) { return g.transpose(d0, d1); });
}

Tensor Tensor::t() const {
  if (dim() > 2) {
    throw ValueError("[t] expects a tensor with <= 2 dimensions, but self is " +
                     std::to_string(dim()) + "D");
  }
  if (dim() >= 2) return transpose(0, 1);
  return view_result("TBackward0", *this, make_view(*this, sizes(), strides(), storage_offset()),
                     identity());
}

Tensor Tensor::permute(const Shape& dims) const {
  int64_t n = dim();
  if (static_cast<int64_t>(dims.size()) != n) {
    throw ValueError("[permute] number of dims in permutation " + shape_str(dims) +
                     " doesn't match the tensor's " + std::to_string(n));
  }
  Shape sz(static_cast<size_t>(n)), st(static_cast<size_t>(n));
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim("permute", dims[i], n);
    if (seen[d])
      throw ValueError("[permute] repeated dim " + std::to_string(d) + " in " + shape_str(dims));
    seen[d] = true;
    sz[i] = sizes()[d];
    st[i] = strides()[d];
  }
  Shape inverse(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) inverse[wrap_dim("permute", dims[i], n)] = i;
  return view_result("PermuteBackward0", *this, make_view(*this, sz, st, storage_offset()),
                     [inverse](const Tensor& g) { return g.permute(inverse); });
}

Tensor Tensor::movedim(int64_t source, int64_t destination) const {
  int64_t n = dim();
  source = wrap_dim("movedim", source, n);
  destination = wrap_dim("movedim", destination, n);
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (i != source) order.push_back(i);
  }
  order.insert(order.begin() + destination, source);
  return permute(Shape(order));
}

Tensor Tensor::squeeze() const {
  Shape sz, st;
  for (int64_t i = 0; i < dim(); ++i) {
    if (sizes()[i] != 1) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  }
  return view_result("SqueezeBackward0", *this, make_view(*this, sz, st, storage_offset()),
                     reshape_to(*this));
}

Tensor Tensor::squeeze(int64_t d) const {
  d = wrap_dim("squeeze", d, dim());
  if (dim() == 0 || sizes()[d] != 1) {
    return view_result("SqueezeBackward1", *this,
                       make_view(*this, sizes(), strides(), storage_offset()), identity());
  }
  Shape sz = sizes(), st = strides();
  sz.erase(d);
  st.erase(d);
  return view_result("SqueezeBackward1", *this, make_view(*this, sz, st, storage_offset()),
                     reshape_to(*this));
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim("unsqueeze", d, dim() + 1);
  Shape sz = sizes(), st = strides();
  int64_t stride = d < dim() ? sizes()[d] * strides()[d] : 1;
  sz.insert(d, 1);
  st.insert(d, stride);
  return view_result("UnsqueezeBackward0", *this, make_view(*this, sz, st, storage_offset()),
                     reshape_to(*this));
}

Tensor Tensor::expand(const Shape& shape) const {
  if (shape == sizes()) return *this;  // the common case in broadcasting ops: no new view
  int64_t n = static_cast<int64_t>(shape.size());
  if (n < dim()) {
    throw ValueError("[expand] the number of sizes provided (" + std::to_string(n) +
                     ") must be greater or equal to the number of dimensions in the tensor (" +
                     std::to_string(dim()) + ")");
  }
  Shape sz(static_cast<size_t>(n)), st(static_cast<size_t>(n));
  for (int64_t i = n - 1; i >= 0; --i) {
    int64_t j = i - (n - dim());
    int64_t want = shape[i];
    if (j < 0) {
      if (want < 0) {
        throw ValueError("[expand] -1 is not allowed in a leading, non-existing dimension");
      }
      sz[i] = want;
      st[i] = 0;
      continue;
    }
    int64_t have = sizes()[j];
    if (want == -1) want = have;
    if (have == want) {
      sz[i] = have;
      st[i] = strides()[j];
    } else if (have == 1 && want >= 0) {
      sz[i] = want;
      st[i] = 0;
    } else {
      throw ValueError("[expand] the expanded size of the tensor (" + std::to_string(want) +
                       ") must match the existing size (" + std::to_string(have) +
                       ") at non-singleton dimension " + std::to_string(i) + ".  Target sizes: " +
                       shape_str(shape) + ".  Tensor sizes: " + shape_str(*this));
    }
  }
  checked_numel("expand", sz);
  return view_result("ExpandBackward0", *this, make_view(*this, sz, st, storage_offset()),
                     [in = sizes()](const Tensor& g) { return autograd::sum_to(g, in); });
}

Tensor Tensor::expand_as(const Tensor& other) const { return expand(other.sizes()); }

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (dim() == 0) return reshape({1});
  start = wrap_dim("flatten", start, dim());
  end = wrap_dim("flatten", end, dim());
  if (start > end) throw ValueError("[flatten] start_dim cannot come after end_dim");
  Shape s;
  for (int64_t i = 0; i < start; ++i) s.push_back(sizes()[i]);
  int64_t m = 1;
  for (int64_t i = start; i <= end; ++i) m *= sizes()[i];
  s.push_back(m);
  for (int64_t i = end + 1; i < dim(); ++i) s.push_back(sizes()[i]);
  return reshape(s);
}

Tensor Tensor::unflatten(int64_t d, const Shape& parts) const {
  d = wrap_dim("unflatten", d, dim());
  Shape inner = infer_shape("unflatten", parts, sizes()[d]);
  Shape s;
  for (int64_t i = 0; i < d; ++i) s.push_back(sizes()[i]);
  for (int64_t v : inner) s.push_back(v);
  for (int64_t i = d + 1; i < dim(); ++i) s.push_back(sizes()[i]);
  return view(s);
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  if (dim() == 0) throw IndexError("[narrow] cannot be applied to a 0-dim tensor");
  d = wrap_dim("narrow", d, dim());
  int64_t size = sizes()[d];
  if (start < -size || start > size) {
    throw IndexError("[narrow] start (" + std::to_string(start) + ") is out of range for dim " +
                     std::to_string(d) + " of size " + std::to_string(size));
  }
  if (start < 0) start += size;
  if (length < 0 || start + length > size) {
    throw IndexError("[narrow] start (" + std::to_string(start) + ") + length (" +
                     std::to_string(length) + ") exceeds dimension size (" + std::to_string(size) +
                     ")");
  }
  Shape sz = sizes();
  sz[d] = length;
  return view_result("NarrowBackward0", *this,
                     make_view(*this, sz, strides(), storage_offset() + start * strides()[d]),
                     [in = sizes(), d, start, length](const Tensor& g) {
                       return autograd::embed(
                           g, in, [&](const Tensor& z) { return z.narrow(d, start, length); });
                     });
}

Tensor Tensor::slice(int64_t d, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step) const {
  if (dim() == 0) throw IndexError("[slice] cannot be applied to a 0-dim tensor");
  d = wrap_dim("slice", d, dim());
  if (step <= 0) throw ValueError("[slice] step must be positive, got " + std::to_string(step));
  int64_t size = sizes()[d];
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  Shape sz = sizes(), st = strides();
  sz[d] = (e - s + step - 1) / step;
  st[d] = strides()[d] * step;
  return view_result(
      "SliceBackward0", *this, make_view(*this, sz, st, storage_offset() + s * strides()[d]),
      [in = sizes(), d, s, e, step](const Tensor& g) {
        return autograd::embed(g, in, [&](const Tensor& z) { return z.slice(d, s, e, step); });
      });
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  if (dim() == 0) throw IndexError("[select] cannot be applied to a 0-dim tensor");
  d = wrap_dim("select", d, dim());
  int64_t size = sizes()[d];
  if (index < -size || index >= size) {
    throw IndexError("[select] index " + std::to_string(index) +
                     " is out of bounds for dimension " + std::to_string(d) + " with size " +
                     std::to_string(size));
  }
  if (index < 0) index += size;
  Shape sz = sizes(), st = strides();
  sz.erase(d);
  st.erase(d);
  return view_result(
      "SelectBackward0", *this, make_view(*this, sz, st, storage_offset() + index * strides()[d]),
      [in = sizes(), d, index](const Tensor& g) {
        return autograd::embed(g, in, [&](const Tensor& z) { return z.select(d, index); });
      });
}

Tensor Tensor::as_strided(const Shape& sz, const Shape& st, int64_t offset) const {
  if (sz.size() != st.size()) {
    throw ValueError("[as_strided] mismatch in length of strides and shape");
  }
  checked_numel("as_strided", sz);
  int64_t max_index = offset;
  for (size_t i = 0; i < sz.size(); ++i) {
    if (st[i] < 0) throw ValueError("[as_strided] negative strides are not supported");
    if (sz[i] > 0) max_index += (sz[i] - 1) * st[i];
  }
  int64_t capacity = static_cast<int64_t>(storage()->nbytes() / element_size());
  if (offset < 0 || (sz.numel() > 0 && storage()->nbytes() > 0 && max_index >= capacity)) {
    throw IndexError("[as_strided] the view of shape " + shape_str(sz) + " with strides " +
                     shape_str(st) + " and offset " + std::to_string(offset) +
                     " reaches past the storage of " + std::to_string(capacity) + " elements");
  }
  return view_result(
      "AsStridedBackward0", *this, make_view(*this, sz, st, offset),
      [bs = sizes(), bst = strides(), bo = storage_offset(), sz, st, offset](const Tensor& g) {
        return autograd::as_strided_backward(g, bs, bst, bo, sz, st, offset);
      });
}

TensorList Tensor::split(int64_t split_size, int64_t d) const {
  if (dim() == 0) throw IndexError("[split] cannot be applied to a 0-dim tensor");
  d = wrap_dim("split", d, dim());
  if (split_size < 0 || (split_size == 0 && sizes()[d] != 0)) {
    throw ValueError("[split] split_size must be positive, got " + std::to_string(split_size));
  }
  int64_t size = sizes()[d];
  TensorList out;
  if (size == 0) {
    out.push_back(*this);
    return out;
  }
  for (int64_t s = 0; s < size; s += split_size)
    out.push_back(narrow(d, s, std::min(split_size, size - s)));
  return out;
}

TensorList Tensor::split(const std::vector<int64_t>& split_sizes, int64_t d) const {
  if (dim() == 0) throw IndexError("[split] cannot be applied to a 0-dim tensor");
  d = wrap_dim("split", d, dim());
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) throw ValueError("[split] split sizes must be non-negative");
    total += s;
  }
  if (total != sizes()[d]) {
    throw ValueError("[split] split sizes add up to " + std::to_string(total) + " but dim " +
                     std::to_string(d) + " has size " + std::to_string(sizes()[d]));
  }
  TensorList out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(d, start, s));
    start += s;
  }
  return out;
}

TensorList Tensor::chunk(int64_t chunks, int64_t d) const {
  if (chunks <= 0)
    throw ValueError("[chunk] number of chunks must be positive, got " + std::to_string(chunks));
  if (dim() == 0) throw IndexError("[chunk] cannot be applied to a 0-dim tensor");
  d = wrap_dim("chunk", d, dim());
  int64_t size = sizes()[d];
  int64_t each = std::max<int64_t>((size + chunks - 1) / chunks, 1);
  return split(each, d);
}

TensorList Tensor::unbind(int64_t d) const {
  if (dim() == 0) throw IndexError("[unbind] cannot be applied to a 0-dim tensor");
  d = wrap_dim("unbind", d, dim());
  TensorList out;
  for (int64_t i = 0; i < sizes()[d]; ++i) out.push_back(select(d, i));
  return out;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  return broadcast_shapes("broadcast_shapes", a, b);
}

TensorList broadcast_tensors(const TensorList& tensors) {
  Shape s;
  for (const Tensor& t : tensors) s = broadcast_shapes(s, t.sizes());
  TensorList out;
  for (const Tensor& t : tensors) out.push_back(t.expand(s));
  return out;
}

}  // namespace ember
