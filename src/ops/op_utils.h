// Helpers shared by the op layer: device checks, operand conversion, the options of *_like. The
// tensor primitives under them (allocation, views, dims, broadcasting) are core's
// (core/tensor_util.h).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

// The common device of the operands (undefined tensors are skipped). 0-dim CPU tensors count as
// scalars and may meet tensors on any device. Raises PyTorch's device-mismatch error otherwise.
Device common_device(const char* op, std::initializer_list<const Tensor*> tensors);
// Same for a list.
Device common_device(const char* op, const TensorList& tensors);

// t converted to dtype and moved to device (no copy when it already matches).
Tensor to_operand(const Tensor& t, DType dtype, Device device);

// Options of t, overridden by whatever o sets (for the *_like factories).
TensorOptions like_options(const Tensor& t, const std::optional<TensorOptions>& o);

}  // namespace ember
