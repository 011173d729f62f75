// Factories: empty, zeros, ones, full, arange, linspace, eye, tensor, from_blob, *_like.
#include <cmath>
#include <cstring>

#include "core/dispatch.h"
#include "core/element_types.h"
#include "kernels/cast.h"
#include "ops/op_utils.h"

namespace ember {

// A factory's result becomes a leaf that requires grad when the options ask for it.
Tensor as_leaf(Tensor t, const TensorOptions& o) {
  if (o.requires_grad()) t.requires_grad_(true);
  return t;
}

Tensor empty(const Shape& size, TensorOptions o) {
  return as_leaf(make_empty(size, o.dtype(), o.device(), o.pinned_memory(), "empty"), o);
}

Tensor zeros(const Shape& size, TensorOptions o) {
  return as_leaf(empty(size, o.requires_grad(false)).fill_(0), o);
}

Tensor ones(const Shape& size, TensorOptions o) {
  return as_leaf(empty(size, o.requires_grad(false)).fill_(1), o);
}

Tensor full(const Shape& size, Scalar value, TensorOptions o) {
  if (!o.has_dtype()) o = o.dtype(value.dtype());
  return as_leaf(empty(size, o.requires_grad(false)).fill_(value), o);
}

Tensor scalar_tensor(Scalar value, TensorOptions o) { return full({}, value, o); }

Tensor arange(Scalar end, TensorOptions o) { return arange(0, end, 1, o); }

Tensor arange(Scalar start, Scalar end, Scalar step, TensorOptions o) {
  bool all_int =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  if (!o.has_dtype()) o = o.dtype(all_int ? kInt64 : default_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  if (st == 0.0) throw ValueError("[arange] step must be nonzero");
  if (!std::isfinite(st))
    throw ValueError("[arange] step must be finite, got " + std::to_string(st));
  if (!std::isfinite(s) || !std::isfinite(e)) {
    throw ValueError("[arange] unsupported range: " + std::to_string(s) + " -> " +
                     std::to_string(e));
  }
  if ((st > 0 && e < s) || (st < 0 && e > s)) {
    throw ValueError("[arange] upper bound and larger bound inconsistent with step sign");
  }
  // The element count, computed without overflow: a range wider than int64 (or a step so small
  // that the count does not fit) is an error, not a wrapped size.
  int64_t n;
  auto too_many = [&](const std::string& count) {
    throw ValueError("[arange] the range " + std::to_string(s) + " -> " + std::to_string(e) +
                     " with step " + std::to_string(st) + " holds " + count +
                     " elements, more than int64 can count");
  };
  if (all_int) {
    const __int128 a = start.to_long(), b = end.to_long(), c = step.to_long();
    const __int128 count = c > 0 ? (b - a + c - 1) / c : (a - b - c - 1) / -c;
    if (count > INT64_MAX) too_many("more than 2^63 - 1");
    n = static_cast<int64_t>(count);
  } else {
    const double count = std::ceil((e - s) / st);
    if (!(count < 9.2e18)) too_many(std::to_string(count));
    n = static_cast<int64_t>(count);
  }
  Tensor host = make_empty({n}, o.dtype(), Device(kCPU), false, "arange");
  visit_dtype(o.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = host.data_ptr<T>();
    if (all_int) {
      int64_t a = start.to_long(), c = step.to_long();
      // In uint64, where i * c may wrap: every a + i * c itself lies in the range.
      const auto ua = static_cast<uint64_t>(a), uc = static_cast<uint64_t>(c);
      for (int64_t i = 0; i < n; ++i) {
        p[i] = cast<T>(static_cast<int64_t>(ua + static_cast<uint64_t>(i) * uc));
      }
    } else {
      for (int64_t i = 0; i < n; ++i) p[i] = cast<T>(s + static_cast<double>(i) * st);
    }
  });
  return host.to(o.device());
}

Tensor linspace(double start, double end, int64_t steps, TensorOptions o) {
  if (steps < 0)
    throw ValueError("[linspace] number of steps must be non-negative, got " +
                     std::to_string(steps));
  Tensor host = make_empty({steps}, o.dtype(), Device(kCPU), false, "linspace");
  visit_dtype(o.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = host.data_ptr<T>();
    double step = steps > 1 ? (end - start) / static_cast<double>(steps - 1) : 0.0;
    // Fill from both ends so the last value is exactly end, as PyTorch does.
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      double v = i < half ? start + step * static_cast<double>(i)
                          : end - step * static_cast<double>(steps - 1 - i);
      p[i] = cast<T>(v);
    }
  });
  return host.to(o.device());
}

Tensor eye(int64_t n, std::optional<int64_t> m, TensorOptions o) {
  int64_t cols = m.value_or(n);
  Tensor out = zeros({n, cols}, o);
  int64_t k = std::min(n, cols);
  if (k > 0) make_view(out, {k}, {cols + 1}, 0).fill_(1);
  return out;
}

TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& o) {
  TensorOptions r = t.options();
  if (o) {
    if (o->has_dtype()) r = r.dtype(o->dtype());
    r = r.device(o->device());
    r = r.requires_grad(o->requires_grad());
  }
  return r;
}

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) {
  return empty(t.sizes(), like_options(t, o));
}
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) {
  return zeros(t.sizes(), like_options(t, o));
}
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) {
  return ones(t.sizes(), like_options(t, o));
}
Tensor full_like(const Tensor& t, Scalar v, std::optional<TensorOptions> o) {
  return full(t.sizes(), v, like_options(t, o));
}

template <class T>
Tensor tensor(const std::vector<T>& values, const Shape& shape, TensorOptions o) {
  Shape s = shape.empty() ? Shape{static_cast<int64_t>(values.size())} : shape;
  int64_t n = checked_numel("tensor", s);
  if (n != static_cast<int64_t>(values.size())) {
    throw ValueError("[tensor] shape " + shape_str(s) + " needs " + std::to_string(n) +
                     " values, got " + std::to_string(values.size()));
  }
  Tensor host = make_empty(s, dtype_of_v<T>, Device(kCPU), false, "tensor");
  if constexpr (std::is_same_v<T, bool>) {
    bool* p = host.data_ptr<bool>();
    for (int64_t i = 0; i < n; ++i) p[i] = values[static_cast<size_t>(i)];
  } else if (n > 0) {
    std::memcpy(host.data_ptr(), values.data(), static_cast<size_t>(n) * sizeof(T));
  }
  DType dt = o.has_dtype() ? o.dtype() : dtype_of_v<T>;
  return host.to(o.device(), dt);
}

#define EMBER_INSTANTIATE(T) \
  template Tensor tensor<T>(const std::vector<T>&, const Shape&, TensorOptions);
EMBER_FOR_EACH_ELEMENT_TYPE(EMBER_INSTANTIATE)
#undef EMBER_INSTANTIATE

namespace {
template <class T>
Tensor tensor_from_list(std::initializer_list<T> values, const Shape& shape, TensorOptions o,
                        DType natural) {
  if (!o.has_dtype()) o = o.dtype(natural);
  return tensor(std::vector<T>(values), shape, o);
}
}  // namespace

Tensor tensor(std::initializer_list<double> v, const Shape& s, TensorOptions o) {
  return tensor_from_list(v, s, o, default_dtype());
}
Tensor tensor(std::initializer_list<float> v, const Shape& s, TensorOptions o) {
  return tensor_from_list(v, s, o, default_dtype());
}
Tensor tensor(std::initializer_list<int> v, const Shape& s, TensorOptions o) {
  return tensor_from_list(v, s, o, kInt64);
}
Tensor tensor(std::initializer_list<int64_t> v, const Shape& s, TensorOptions o) {
  return tensor_from_list(v, s, o, kInt64);
}
Tensor tensor(std::initializer_list<bool> v, const Shape& s, TensorOptions o) {
  return tensor_from_list(v, s, o, kBool);
}

Tensor from_blob(void* data, const Shape& sizes, TensorOptions o, const Shape& strides) {
  checked_numel("from_blob", sizes);
  if (!strides.empty() && strides.size() != sizes.size()) {
    throw ValueError("[from_blob] got " + std::to_string(strides.size()) + " strides for " +
                     std::to_string(sizes.size()) + " sizes");
  }
  auto impl = std::make_shared<TensorImpl>();
  Device dev = resolve_device(o.device());
  impl->storage = std::make_shared<StorageImpl>(DataPtr(data, nullptr, nullptr, dev), 0);
  impl->sizes = sizes;
  impl->strides = strides.empty() ? contiguous_strides(sizes, "from_blob") : strides;
  impl->dtype = o.dtype();
  impl->device = dev;
  impl->refresh();
  return Tensor(std::move(impl));
}

}  // namespace ember
