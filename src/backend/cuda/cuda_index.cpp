// The CUDA backend's indexing and sorting: operand geometry on the host, kernels in
// index_kernels.cu and sort_kernels.cu. Indices stay on the device: the kernels check them and
// record the first bad one in a small device record, which the host reads back with one copy.
#include <string>
#include <vector>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/index_kernels.h"
#include "core/tensor_util.h"
#include "ember/cuda.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_detail::strided_of;
using cuda_kernels::IndexArgs;
using cuda_kernels::IndexFault;

// A zeroed fault record on the device for the kernels of one op.
class FaultRecord {
 public:
  explicit FaultRecord(Device device)
      : buf_(make_empty({4}, TensorOptions().dtype(kInt64).device(device))) {
    static_assert(sizeof(IndexFault) == 4 * sizeof(int64_t));
    EMBER_CUDA_CHECK(cudaMemsetAsync(buf_.data_ptr(), 0, sizeof(IndexFault), current_stream()));
  }
  IndexFault* get() { return static_cast<IndexFault*>(buf_.data_ptr()); }

  // Waits for the kernels and raises PyTorch's IndexError when one met an out-of-range index;
  // dims[slot] (or dim when dims is empty) is the dim that index tensor indexes.
  void raise_if_hit(const IndexCheck& check, int64_t dim) {
    IndexFault f{};
    cudaStream_t stream = current_stream();
    EMBER_CUDA_CHECK(cudaMemcpyAsync(&f, get(), sizeof f, cudaMemcpyDeviceToHost, stream));
    EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!f.hit) return;
    if (!check.dims.empty() && f.slot >= 0 && f.slot < static_cast<int64_t>(check.dims.size())) {
      dim = check.dims[static_cast<size_t>(f.slot)];
    }
    throw IndexError(op_prefix(check.op) + "index " + std::to_string(f.value) +
                     " is out of bounds for dimension " + std::to_string(dim) + " with size " +
                     std::to_string(f.size));
  }

 private:
  Tensor buf_;
};

// t's strides with the stride of `dim` replaced by 0.
Shape strides_without(const Tensor& t, int64_t dim) {
  Shape s = t.strides();
  s[static_cast<size_t>(dim)] = 0;
  return s;
}

IndexArgs one_index(const Tensor& index, int64_t size, int64_t stride) {
  IndexArgs a;
  a.k = 1;
  a.int32_mask = index.dtype() == kInt32 ? 1u : 0u;
  a.ptr[0] = index.data_ptr();
  a.size[0] = size;
  a.stride[0] = stride;
  return a;
}

// Advanced indexing over `shape` = (index shape, rest of base's dims): the k index tensors (one
// layout: each made contiguous unless they already share strides), how they step through base's
// leading dims, and base seen with `shape` (stride 0 on the index dims).
struct AdvancedIndex {
  IndexArgs args;
  TensorList keep;  // owns contiguous copies
  Tensor base_view;
  Tensor pos_view;  // the index tensors' shared layout seen with `shape`
};

AdvancedIndex plan_advanced(const Tensor& base, const TensorList& indices, const Shape& shape,
                            const char* op) {
  const size_t k = indices.size(), m = indices[0].sizes().size();
  if (k > static_cast<size_t>(cuda_kernels::kMaxDims)) {
    throw NotImplementedError(op_prefix(op) + "more than " +
                              std::to_string(cuda_kernels::kMaxDims) +
                              " index tensors are not supported on CUDA");
  }
  AdvancedIndex p;
  bool shared = true;
  for (const Tensor& t : indices) shared &= t.strides() == indices[0].strides();
  for (const Tensor& t : indices) p.keep.push_back(shared ? t : t.contiguous());
  p.args.k = static_cast<int>(k);
  p.args.wrap = true;
  for (size_t j = 0; j < k; ++j) {
    p.args.ptr[j] = p.keep[j].data_ptr();
    if (p.keep[j].dtype() == kInt32) p.args.int32_mask |= 1u << j;
    p.args.size[j] = base.sizes()[j];
    p.args.stride[j] = base.strides()[j];
  }
  Shape base_st(m, 0), pos_st = p.keep[0].strides();
  for (size_t d = k; d < base.sizes().size(); ++d) {
    base_st.push_back(base.strides()[d]);
    pos_st.push_back(0);
  }
  p.base_view = make_view(base, shape, base_st, base.storage_offset());
  p.pos_view = make_view(p.keep[0], shape, pos_st, p.keep[0].storage_offset());
  return p;
}

// Geometry of the rows along dim of in, values and indices (values/indices may be shorter
// along dim: topk).
cuda_kernels::SortRows sort_rows_of(const Tensor& values, const Tensor& indices, const Tensor& in,
                                    int64_t dim, int64_t keep, const char* op) {
  cuda_kernels::SortRows r;
  const bool scalar = in.dim() == 0;
  r.n = scalar ? 1 : in.sizes()[dim];
  r.rows = in.numel() / r.n;
  r.keep = keep;
  r.in_stride = scalar ? 0 : in.strides()[dim];
  r.v_stride = scalar ? 0 : values.strides()[dim];
  r.i_stride = scalar ? 0 : indices.strides()[dim];
  const Tensor* ts[3] = {&in, &values, &indices};
  int nd = 0;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d == dim || in.sizes()[d] == 1) continue;
    if (nd == cuda_kernels::kMaxDims) {
      throw NotImplementedError(op_prefix(op) + "CUDA tensors with more than " +
                                std::to_string(cuda_kernels::kMaxDims) + " dims are not supported");
    }
    r.geom.sizes[nd] = in.sizes()[d];
    for (int k = 0; k < 3; ++k) r.geom.strides[k][nd] = ts[k]->strides()[d];
    ++nd;
  }
  r.geom.ndim = nd;
  return r;
}

void sort_on_device(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                    bool descending, int64_t keep, const char* op) {
  cuda::DeviceGuard guard(device_index(in.device()));
  const cuda_kernels::SortRows r = sort_rows_of(values, indices, in, dim, keep, op);
  const size_t scratch_bytes = cuda_kernels::sort_scratch_bytes(in.dtype(), r.rows, r.n);
  Tensor scratch;
  if (scratch_bytes > 0) {
    scratch = make_empty({static_cast<int64_t>(scratch_bytes)},
                         TensorOptions().dtype(kUInt8).device(in.device()));
  }
  EMBER_CUDA_CHECK(cuda_kernels::sort_rows(
      values.data_ptr(), static_cast<int64_t*>(indices.data_ptr()), in.data_ptr(), in.dtype(), r,
      descending, scratch.defined() ? scratch.data_ptr() : nullptr, current_stream()));
}

}  // namespace

void CudaBackend::index_select(const Tensor& out, const Tensor& in, int64_t dim,
                               const Tensor& index, const IndexCheck& check) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  // in seen with out's sizes and stride 0 along dim; the index walks along dim only.
  Tensor in_r = make_view(in, out.sizes(), strides_without(in, dim), in.storage_offset());
  Shape idx_st(out.sizes().size(), 0);
  idx_st[static_cast<size_t>(dim)] = index.dim() == 0 ? 0 : index.strides()[0];
  Tensor idx_r = make_view(index, out.sizes(), idx_st, index.storage_offset());
  const Tensor* ops[3] = {&out, &in_r, &idx_r};
  FaultRecord fault(out.device());
  EMBER_CUDA_CHECK(cuda_kernels::index_gather(
      out.data_ptr(), in.data_ptr(), static_cast<int>(out.element_size()), out.numel(),
      strided_of(ops, check.op), one_index(index, in.sizes()[dim], in.strides()[dim]), fault.get(),
      current_stream()));
  fault.raise_if_hit(check, dim);
}

void CudaBackend::gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                         const IndexCheck& check) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  Tensor in_r = make_view(in, index.sizes(), strides_without(in, dim), in.storage_offset());
  const Tensor* ops[3] = {&out, &in_r, &index};
  FaultRecord fault(out.device());
  EMBER_CUDA_CHECK(cuda_kernels::index_gather(
      out.data_ptr(), in.data_ptr(), static_cast<int>(out.element_size()), out.numel(),
      strided_of(ops, check.op), one_index(index, in.sizes()[dim], in.strides()[dim]), fault.get(),
      current_stream()));
  fault.raise_if_hit(check, dim);
}

void CudaBackend::scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                          bool accumulate, const IndexCheck& check) {
  if (index.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  // Positions walk index's shape; out is reached through the index along dim.
  Tensor out_r = make_view(out, index.sizes(), strides_without(out, dim), out.storage_offset());
  const Tensor* ops[3] = {&out_r, &src, &index};
  FaultRecord fault(out.device());
  EMBER_CUDA_CHECK(cuda_kernels::index_scatter(
      out.data_ptr(), src.data_ptr(), out.dtype(), accumulate, index.numel(),
      strided_of(ops, check.op), one_index(index, out.sizes()[dim], out.strides()[dim]),
      fault.get(), current_stream()));
  fault.raise_if_hit(check, dim);
}

void CudaBackend::index(const Tensor& out, const Tensor& in, const TensorList& indices,
                        const IndexCheck& check) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  AdvancedIndex p = plan_advanced(in, indices, out.sizes(), check.op);
  const Tensor* ops[3] = {&out, &p.base_view, &p.pos_view};
  FaultRecord fault(out.device());
  EMBER_CUDA_CHECK(cuda_kernels::index_gather(
      out.data_ptr(), in.data_ptr(), static_cast<int>(out.element_size()), out.numel(),
      strided_of(ops, check.op), p.args, fault.get(), current_stream()));
  fault.raise_if_hit(check, 0);
}

void CudaBackend::index_put(const Tensor& self, const TensorList& indices, const Tensor& values,
                            bool accumulate, const IndexCheck& check) {
  if (values.numel() == 0 || indices[0].numel() == 0) return;
  cuda::DeviceGuard guard(device_index(self.device()));
  AdvancedIndex p = plan_advanced(self, indices, values.sizes(), check.op);
  const Tensor* ops[3] = {&p.base_view, &values, &p.pos_view};
  FaultRecord fault(self.device());
  EMBER_CUDA_CHECK(cuda_kernels::index_scatter(
      self.data_ptr(), values.data_ptr(), self.dtype(), accumulate, values.numel(),
      strided_of(ops, check.op), p.args, fault.get(), current_stream()));
  fault.raise_if_hit(check, 0);
}

// Count per chunk, scan, then write: only the total comes back to size the output.
Tensor CudaBackend::nonzero(const Tensor& in) {
  cuda::DeviceGuard guard(device_index(in.device()));
  const TensorOptions opts = TensorOptions().dtype(kInt64).device(in.device());
  const int64_t n = in.numel(), nd = in.dim();
  if (nd > cuda_kernels::kMaxDims) {
    throw NotImplementedError("[nonzero] CUDA tensors with more than " +
                              std::to_string(cuda_kernels::kMaxDims) + " dims are not supported");
  }
  if (n == 0) return make_empty({0, nd}, opts);
  Tensor c = in.contiguous();
  const int blocks = cuda_kernels::nonzero_blocks(n);
  Tensor counts = make_empty({blocks + 1}, opts);
  int64_t* counts_ptr = static_cast<int64_t*>(counts.data_ptr());
  cudaStream_t stream = current_stream();
  EMBER_CUDA_CHECK(
      cuda_kernels::nonzero_count(c.data_ptr(), c.dtype(), n, blocks, counts_ptr, stream));
  int64_t total = 0;
  EMBER_CUDA_CHECK(
      cudaMemcpyAsync(&total, counts_ptr + blocks, sizeof total, cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  Tensor out = make_empty({total, nd}, opts);
  if (total > 0 && nd > 0) {
    EMBER_CUDA_CHECK(cuda_kernels::nonzero_write(c.data_ptr(), c.dtype(), n, blocks, counts_ptr,
                                                 static_cast<int>(nd), c.sizes().data(),
                                                 static_cast<int64_t*>(out.data_ptr()), stream));
  }
  return out;
}

void CudaBackend::sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                       bool descending, bool stable) {
  // Ties always keep their input order, which satisfies both stable and unstable requests.
  (void)stable;
  if (in.numel() == 0) return;
  sort_on_device(values, indices, in, dim, descending, in.dim() == 0 ? 1 : in.sizes()[dim], "sort");
}

void CudaBackend::topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                       int64_t dim, bool largest, bool sorted) {
  // The k selected elements always come out sorted, which is allowed when sorted is false.
  (void)sorted;
  if (values.numel() == 0) return;
  const int64_t n = in.dim() == 0 ? 1 : in.sizes()[dim];
  if (!cuda_kernels::topk_selects(n, k)) {
    sort_on_device(values, indices, in, dim, largest, k, "topk");
    return;
  }
  cuda::DeviceGuard guard(device_index(in.device()));
  const cuda_kernels::SortRows r = sort_rows_of(values, indices, in, dim, k, "topk");
  Tensor scratch =
      make_empty({static_cast<int64_t>(cuda_kernels::topk_scratch_bytes(in.dtype(), r.rows, k))},
                 TensorOptions().dtype(kUInt8).device(in.device()));
  EMBER_CUDA_CHECK(cuda_kernels::topk_rows(
      values.data_ptr(), static_cast<int64_t*>(indices.data_ptr()), in.data_ptr(), in.dtype(), r,
      largest, scratch.data_ptr(), current_stream()));
}

}  // namespace ember
