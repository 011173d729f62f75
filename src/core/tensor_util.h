// The primitives every layer builds tensors with: dim wrapping, strides, element counts,
// broadcast shapes, allocation, views, device resolution and the "[op] " prefix of errors.
#pragma once

#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember {

// Maps a possibly negative dim into [0, ndim); a 0-dim tensor accepts -1 and 0.
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);
// Wraps and sorts dims, rejecting repeats; empty means every dim.
std::vector<int64_t> wrap_dims(const char* op, const std::vector<int64_t>& dims, int64_t ndim);
// Row-major strides for a shape; raises "[op] Stride calculation overflowed" (PyTorch's words)
// when a stride does not fit in int64.
Shape contiguous_strides(const Shape& sizes, const char* op = "strides");
// Checks sizes are >= 0 and their product fits in int64; returns the product.
int64_t checked_numel(const char* op, const Shape& sizes);

// The shape a and b broadcast to; raises naming op when they cannot.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// A CUDA device with index -1 becomes the current device (cuda::current_device()).
Device resolve_device(Device d);
// The allocator of a device (pinned: page-locked host memory, CPU devices only). Declared here
// for make_empty and defined by the backend registry (src/backend/registry.cpp): the one place
// core reaches a backend (docs/design.md, "Layers").
Allocator& device_allocator(Device device, bool pinned);
// Uninitialised contiguous tensor (the one allocation path every layer uses).
Tensor make_empty(const Shape& sizes, DType dtype, Device device, bool pinned = false,
                  const char* op = "empty");
// The same with a factory's options (requires_grad is not looked at).
Tensor make_empty(const Shape& sizes, const TensorOptions& options, const char* op = "empty");
// A view of t's storage with new geometry.
Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset);

// Raises PyTorch's error when t, about to be written, has internal overlap: a dim of size > 1
// with stride 0 (an expanded view), where several elements share one memory location and the
// result would depend on which write lands last. Every in-place op and copy_ calls it on its
// destination (fill_ and zero_ do not: they write one value everywhere, as in PyTorch).
void check_no_internal_overlap(const char* op, const Tensor& t);

// "[2, 3]"
std::string shape_str(const Shape& s);
std::string shape_str(const Tensor& t);
// "[op] ", the start of every error message.
inline std::string op_prefix(const char* op) { return std::string("[") + op + "] "; }

}  // namespace ember
