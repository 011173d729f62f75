// The tensor primitives every layer shares (core/tensor_util.h).
#include "core/tensor_util.h"

#include <algorithm>
#include <sstream>

#include "core/record_scope.h"
#include "ember/cuda.h"
#include "ember/grad_mode.h"

namespace ember {

void check_no_internal_overlap(const char* op, const Tensor& t) {
  if (!t.defined()) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > 1 && t.stride(d) == 0) {
      throw ValueError(op_prefix(op) +
                       "unsupported operation: more than one element of the written-to tensor "
                       "refers to a single memory location. Please clone() the tensor before "
                       "performing the operation.");
    }
  }
}

int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) {
    throw IndexError(op_prefix(op) + "Dimension out of range (expected to be in range of [" +
                     std::to_string(-n) + ", " + std::to_string(n - 1) + "], but got " +
                     std::to_string(dim) + ")");
  }
  return dim < 0 ? dim + n : dim;
}

std::vector<int64_t> wrap_dims(const char* op, const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(op, d, ndim));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    throw ValueError(op_prefix(op) + "dim " +
                     std::to_string(*std::adjacent_find(out.begin(), out.end())) +
                     " appears multiple times in the list of dims");
  }
  if (ndim == 0) out.clear();  // dims 0/-1 of a 0-dim tensor name the tensor itself
  return out;
}

Shape contiguous_strides(const Shape& sizes, const char* op) {
  Shape strides(sizes.size(), 1);
  // As PyTorch: only the products that become strides are checked (a zero size counts as 1, so
  // an empty tensor's strides can overflow too).
  for (size_t i = sizes.size(); i-- > 1;) {
    if (__builtin_mul_overflow(strides[i], std::max<int64_t>(sizes[i], 1), &strides[i - 1])) {
      throw ValueError(op_prefix(op) + "Stride calculation overflowed for shape " +
                       shape_str(sizes));
    }
  }
  return strides;
}

int64_t checked_numel(const char* op, const Shape& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) {
      throw ValueError(op_prefix(op) + "Trying to create tensor with negative dimension " +
                       std::to_string(s) + ": " + shape_str(sizes));
    }
    if (s != 0 && n > INT64_MAX / s) {
      throw ValueError(op_prefix(op) + "the number of elements of shape " + shape_str(sizes) +
                       " overflows int64");
    }
    n *= s;
  }
  return n;
}

Device resolve_device(Device d) {
  // As in PyTorch, "cuda" is the calling thread's current device (cuda::set_device), looked up
  // when the tensor is made: every allocation, factory, `to`, `cuda()` and Module::to comes here.
  if (d.is_cuda() && !d.has_index()) return Device(kCUDA, cuda::current_device());
  return d;
}

namespace {

// A storage allocated while memory is profiled reports its free too: the original allocation
// lives on inside the tracked context and is freed with it.
struct TrackedMemory {
  DataPtr inner;
  int64_t nbytes;
  Device device;
};

void tracked_delete(void* data, void* ctx) {
  auto* t = static_cast<TrackedMemory*>(ctx);
  record::report_memory(data, -t->nbytes, t->device);
  delete t;
}

DataPtr track_memory(DataPtr data, size_t nbytes) {
  record::Observer* obs = record::observer();
  if (obs == nullptr || !obs->wants_memory() || nbytes == 0) return data;
  const Device device = data.device();
  void* ptr = data.get();
  auto* t = new TrackedMemory{std::move(data), static_cast<int64_t>(nbytes), device};
  record::report_memory(ptr, t->nbytes, device);
  return DataPtr(ptr, t, tracked_delete, device);
}

}  // namespace

Tensor make_empty(const Shape& sizes, DType dtype, Device device, bool pinned, const char* op) {
  int64_t n = checked_numel(op, sizes);
  size_t esize = element_size(dtype);
  if (static_cast<uint64_t>(n) > static_cast<uint64_t>(INT64_MAX) / esize) {
    throw ValueError(op_prefix(op) + "tensor of shape " + shape_str(sizes) + " and dtype " +
                     std::string(dtype_name(dtype)) + " is too large to allocate");
  }
  if (pinned && !device.is_cpu()) {
    throw ValueError(op_prefix(op) + "only CPU tensors can be pinned, got device " + device.str());
  }
  device = resolve_device(device);
  size_t nbytes = static_cast<size_t>(n) * esize;
  Shape strides = contiguous_strides(sizes, op);  // checked before anything is allocated
  auto impl = std::make_shared<TensorImpl>();
  DataPtr data = device_allocator(device, pinned).allocate(nbytes);
  if (record::active()) [[unlikely]]
    data = track_memory(std::move(data), nbytes);
  impl->storage = std::make_shared<StorageImpl>(std::move(data), nbytes);
  impl->sizes = sizes;
  impl->strides = std::move(strides);
  impl->dtype = dtype;
  impl->device = device;
  impl->numel = n;
  impl->contiguous = true;
  return Tensor(std::move(impl));
}

Tensor make_empty(const Shape& sizes, const TensorOptions& options, const char* op) {
  return make_empty(sizes, options.dtype(), options.device(), options.pinned_memory(), op);
}

Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl& src = t.impl();
  impl->storage = src.storage;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = src.dtype;
  impl->device = src.device;
  impl->refresh();
  // Views remember the tensor that owns the storage, for autograd's view + in-place rules.
  impl->view_base = src.view_base ? src.view_base : t.impl_ptr();
  impl->view_version = src.storage ? src.storage->version() : 0;
  impl->view_no_grad = !is_grad_enabled();
  return Tensor(std::move(impl));
}

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
  if (a == b) return a;  // the common case of element-wise ops
  size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) {
      throw ValueError(op_prefix(op) + "shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast: the size of tensor a (" + std::to_string(x) +
                       ") must match the size of tensor b (" + std::to_string(y) +
                       ") at non-singleton dimension " + std::to_string(i));
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

std::string shape_str(const Tensor& t) { return shape_str(t.sizes()); }

}  // namespace ember
