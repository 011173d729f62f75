// Launchers for the element-wise and copy kernels (elementwise*.cu, copy_kernels.cu). Plain types
// only (pointers, dtypes, op enums, geometry), so the header compiles under nvcc and as C++
// against the emulator. Operand 0 of every geometry is the output.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"
#include "ember/dtype.h"
#include "kernels/elementwise_ops.h"

namespace ember::cuda_kernels {

// What a launcher did: supported is false when the (op, dtype) pair has no kernel (nothing ran).
struct EwResult {
  cudaError_t err = cudaSuccess;
  bool supported = true;
};

// out = op(in); in has dtype, out the same dtype or bool for predicates.
EwResult unary(UnaryOp op, DType dtype, void* out, const void* in, const Strided<2>& g, int64_t n,
               const ElementwiseParams& p, cudaStream_t stream);
// out = op(a, b); a and b have dtype, out the same dtype or bool for comparisons and logic.
EwResult binary(BinaryOp op, DType dtype, void* out, const void* a, const void* b,
                const Strided<3>& g, int64_t n, const ElementwiseParams& p, cudaStream_t stream);
// out = op(a, b, c), all of dtype.
EwResult ternary(TernaryOp op, DType dtype, void* out, const void* a, const void* b, const void* c,
                 const Strided<4>& g, int64_t n, const ElementwiseParams& p, cudaStream_t stream);
// out = cond ? a : b; cond is bool, the others have dtype.
cudaError_t where(DType dtype, void* out, const void* cond, const void* a, const void* b,
                  const Strided<4>& g, int64_t n, cudaStream_t stream);

// dst = cast<dst dtype>(src) for any pair of the 9 dtypes (a plain copy when they are equal).
// A dst that is dense in its innermost dim read from a source whose innermost stride is large
// goes through shared-memory tiles so that reads and writes both coalesce.
cudaError_t copy(DType dst_dtype, DType src_dtype, void* dst, const void* src, const Strided<2>& g,
                 int64_t n, cudaStream_t stream);
// dst = the elem_size (1, 2, 4 or 8) low bytes of pattern, at the geometry's strides.
cudaError_t fill(void* dst, uint64_t pattern, int elem_size, const Strided<1>& g, int64_t n,
                 cudaStream_t stream);

// Caps the blocks of an element-wise launch (0: the default, kMaxBlocks), so that tests reach
// the grid-stride loops with small tensors.
void set_elementwise_grid_limit(int64_t blocks);
int64_t elementwise_grid_limit();

}  // namespace ember::cuda_kernels
