// Helpers shared by the op layer: dim wrapping, device checks, output allocation.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "ember/ops.h"

namespace ember {

// Maps a possibly negative dim into [0, ndim); a 0-dim tensor accepts -1 and 0.
int64_t wrap_dim(const char* op, int64_t dim, int64_t ndim);
// Wraps and sorts dims, rejecting repeats; empty means every dim.
std::vector<int64_t> wrap_dims(const char* op, const std::vector<int64_t>& dims, int64_t ndim);
// Row-major strides for a shape.
Shape contiguous_strides(const Shape& sizes);
// Checks sizes are >= 0 and their product fits in int64; returns the product.
int64_t checked_numel(const char* op, const Shape& sizes);
// Uninitialised contiguous tensor (the one allocation path every op uses).
Tensor make_empty(const Shape& sizes, DType dtype, Device device, bool pinned = false,
                  const char* op = "empty");
// A view of t's storage with new geometry.
Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset);
// A CUDA device with index -1 becomes the current device.
Device resolve_device(Device d);

// The common device of the operands (undefined tensors are skipped). 0-dim CPU tensors count as
// scalars and may meet tensors on any device. Raises PyTorch's device-mismatch error otherwise.
Device common_device(const char* op, std::initializer_list<const Tensor*> tensors);
// Same for a list.
Device common_device(const char* op, const TensorList& tensors);

// t converted to dtype and moved to device (no copy when it already matches).
Tensor to_operand(const Tensor& t, DType dtype, Device device);

// broadcast_shapes with the op's name in the error message.
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// Options of t, overridden by whatever o sets (for the *_like factories).
TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& o);

// "[2, 3]"
std::string shape_str(const Shape& s);
std::string shape_str(const Tensor& t);
// [op] prefix helper.
inline std::string op_prefix(const char* op) { return std::string("[") + op + "] "; }

}  // namespace ember
