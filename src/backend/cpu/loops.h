// Strided N-operand iteration for CPU kernels. Dims are coalesced, the range is split across
// threads, and the kernel sees 1-D runs (pointers + byte strides) so a contiguous run can take
// a vectorised path.
#pragma once

#include <array>
#include <cstdint>

#include "ember/parallel.h"
#include "ember/tensor.h"

namespace ember::cpu {

// Elements per thread chunk for cheap element-wise work (about 128 KiB of float32).
inline constexpr int64_t kGrain = 32768;

template <int N>
struct StridedLayout {
  int ndim = 0;
  int64_t sizes[16];
  int64_t strides[N][16];  // bytes
  char* base[N];
};

// Operand 0 is usually the output. All operands must have the same sizes.
template <int N>
StridedLayout<N> make_layout(const std::array<const Tensor*, N>& ops) {
  StridedLayout<N> L;
  const Shape& sizes = ops[0]->sizes();
  int nd = static_cast<int>(sizes.size());
  if (nd > 16) throw Error("[cpu] tensors with more than 16 dims are not supported");
  for (int k = 0; k < N; ++k) L.base[k] = static_cast<char*>(ops[k]->data_ptr());
  // Collect non-trivial dims, innermost last.
  int m = 0;
  for (int d = 0; d < nd; ++d) {
    if (sizes[d] == 1) continue;
    L.sizes[m] = sizes[d];
    for (int k = 0; k < N; ++k) {
      L.strides[k][m] = ops[k]->strides()[d] * static_cast<int64_t>(ops[k]->element_size());
    }
    ++m;
  }
  // Merge dim i into i+1 when it is a plain continuation for every operand.
  int out = 0;
  for (int d = 0; d < m; ++d) {
    if (out > 0) {
      bool merge = true;
      for (int k = 0; k < N; ++k) {
        if (L.strides[k][out - 1] != L.strides[k][d] * L.sizes[d]) merge = false;
      }
      if (merge) {
        L.sizes[out - 1] *= L.sizes[d];
        for (int k = 0; k < N; ++k) L.strides[k][out - 1] = L.strides[k][d];
        continue;
      }
    }
    L.sizes[out] = L.sizes[d];
    for (int k = 0; k < N; ++k) L.strides[k][out] = L.strides[k][d];
    ++out;
  }
  if (out == 0) {  // a single element
    L.sizes[0] = 1;
    for (int k = 0; k < N; ++k) L.strides[k][0] = 0;
    out = 1;
  }
  L.ndim = out;
  return L;
}

// Calls run(ptrs, n, strides) for 1-D runs covering every element, on several threads when the
// tensor is large. grain: minimum elements per thread chunk.
template <int N, class Run>
void for_each_run(const std::array<const Tensor*, N>& ops, int64_t grain, Run&& run) {
  int64_t total = ops[0]->numel();
  if (total == 0) return;
  const StridedLayout<N> L = make_layout<N>(ops);
  const int nd = L.ndim;
  const int64_t inner = L.sizes[nd - 1];
  int64_t inner_strides[N];
  for (int k = 0; k < N; ++k) inner_strides[k] = L.strides[k][nd - 1];

  parallel_for(total, grain, [&](int64_t begin, int64_t end) {
    int64_t idx[16];
    int64_t rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % L.sizes[d];
      rem /= L.sizes[d];
    }
    char* ptrs[N];
    for (int k = 0; k < N; ++k) {
      ptrs[k] = L.base[k];
      for (int d = 0; d < nd; ++d) ptrs[k] += idx[d] * L.strides[k][d];
    }
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(inner - idx[nd - 1], end - pos);
      run(ptrs, n, inner_strides);
      pos += n;
      if (pos >= end) break;
      // Advance to the start of the next run.
      for (int k = 0; k < N; ++k) ptrs[k] += n * inner_strides[k];
      idx[nd - 1] += n;
      for (int d = nd - 1; d > 0 && idx[d] == L.sizes[d]; --d) {
        idx[d] = 0;
        ++idx[d - 1];
        for (int k = 0; k < N; ++k) {
          ptrs[k] += L.strides[k][d - 1] - L.sizes[d] * L.strides[k][d];
        }
      }
    }
  });
}

}  // namespace ember::cpu
