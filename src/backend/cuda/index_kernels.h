// Launchers for the indexing kernels (index_kernels.cu), the sorting kernels (sort_kernels.cu)
// and topk's selection (topk_kernels.cu).
// Plain types only, so the header compiles under nvcc and as C++ against the emulator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"
#include "ember/dtype.h"

namespace ember::cuda_kernels {

// The first out-of-range index a kernel met, in device memory: hit is 0 until one is found; slot
// is the index tensor it came from, value the index as given, size the extent it indexes.
struct IndexFault {
  unsigned long long hit;
  long long slot;
  long long value;
  long long size;
};

// Up to kMaxDims index tensors (int64, or int32 where bit j of int32_mask is set) that share
// one layout in elements (operand 2 of the geometry). Index j of a position adds
// idx_j * stride[j] to the indexed operand's offset, once 0 <= idx_j < size[j] (negative values
// first wrap by size[j] when wrap is set).
struct IndexArgs {
  int k = 0;
  bool wrap = false;
  unsigned int32_mask = 0;
  const void* ptr[kMaxDims];
  int64_t size[kMaxDims];
  int64_t stride[kMaxDims];
};

// out[o0] = in[o1 + sum_j idx_j[o2] * stride_j] for the n positions of the geometry; elements
// elem_size (1, 2, 4 or 8) bytes. A position with an out-of-range index is skipped and recorded.
cudaError_t index_gather(void* out, const void* in, int elem_size, int64_t n,
                         const Strided<3>& geom, const IndexArgs& idx, IndexFault* fault,
                         cudaStream_t stream);

// out[o0 + sum_j idx_j[o2] * stride_j] = src[o1] (+= with accumulate, atomically) for the n
// positions of the geometry. A position with an out-of-range index is skipped and recorded.
cudaError_t index_scatter(void* out, const void* src, DType dtype, bool accumulate, int64_t n,
                          const Strided<3>& geom, const IndexArgs& idx, IndexFault* fault,
                          cudaStream_t stream);

// nonzero in three steps over `blocks` chunks of the n contiguous elements of in:
// counts[b] = non-zero elements of chunk b; then counts becomes its exclusive scan with the
// total in counts[blocks]; then each chunk writes the row-major coordinates (ndim of sizes)
// of its non-zero elements to out (total, ndim) from its offset.
int nonzero_blocks(int64_t n);
cudaError_t nonzero_count(const void* in, DType dtype, int64_t n, int blocks, int64_t* counts,
                          cudaStream_t stream);
cudaError_t nonzero_write(const void* in, DType dtype, int64_t n, int blocks, const int64_t* counts,
                          int ndim, const int64_t* sizes, int64_t* out, cudaStream_t stream);

// Rows of a sort: `rows` slices of length n along one dim; base offsets of row r in the input,
// values and indices come from the geometry (operands 0, 1, 2) over the other dims, and
// in_stride/v_stride/i_stride step along the row.
struct SortRows {
  int64_t rows = 0;
  int64_t n = 0;
  int64_t keep = 0;  // leading elements of each sorted row written out (topk: k)
  int64_t in_stride = 0, v_stride = 0, i_stride = 0;
  Strided<3> geom;
};

// Elements per row sorted inside one block's shared memory; longer rows are sorted tile by tile
// and then merged in global memory through `scratch`.
int64_t sort_tile(DType dtype);
// Bytes of scratch the sort needs (0 when every row fits in one tile).
size_t sort_scratch_bytes(DType dtype, int64_t rows, int64_t n);
// values/indices (the first keep of each row) = in sorted along the rows: NaN above every
// number, ties in input order (always stable).
cudaError_t sort_rows(void* values, int64_t* indices, const void* in, DType dtype,
                      const SortRows& rows, bool descending, void* scratch, cudaStream_t stream);

// Whether topk of k elements from rows of n takes the radix selection (topk_rows): long rows and
// k up to half of them. Otherwise a sort of the whole row (sort_rows with keep = k) costs less.
bool topk_selects(int64_t n, int64_t k);
// Bytes of scratch topk_rows needs for rows.rows rows and k = rows.keep.
size_t topk_scratch_bytes(DType dtype, int64_t rows, int64_t k);
// values/indices (k = rows.keep per row) = the k largest (or smallest) elements of each row and
// their indices along it, ordered as sort_rows orders them (NaN above every number, ties by
// index), by a radix selection and a sort of the k selected.
cudaError_t topk_rows(void* values, int64_t* indices, const void* in, DType dtype,
                      const SortRows& rows, bool largest, void* scratch, cudaStream_t stream);

}  // namespace ember::cuda_kernels
