// CPU sort and topk: each slice along dim is copied into (key, index) pairs and ordered there.
// Ties order by original index, so every sort is stable; NaN orders above every number.
#include <algorithm>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember {

namespace {

template <class K>
using Item = std::pair<K, int64_t>;

// Strict weak order on (key, index) pairs: by key (NaN largest), ties by index ascending.
template <class K>
struct ItemOrder {
  bool descending;
  bool operator()(const Item<K>& a, const Item<K>& b) const {
    if constexpr (std::is_floating_point_v<K>) {
      const bool an = a.first != a.first, bn = b.first != b.first;
      if (an || bn) {
        if (an && bn) return a.second < b.second;
        return descending ? an : bn;
      }
    }
    if (a.first != b.first) return descending ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

// Geometry of the slices along dim of up to three same-rank tensors (in, values, indices): the
// slice number maps to a base element offset in each through the other dims.
struct Slices {
  int nd = 0;  // dims other than dim
  int64_t sizes[16];
  int64_t strides[3][16];
  int64_t count = 1;

  Slices(const Tensor* const (&ts)[3], int64_t dim) {
    const int64_t n = ts[0]->dim();
    if (n > 16) throw Error("[sort] tensors with more than 16 dims are not supported");
    for (int64_t d = 0; d < n; ++d) {
      if (d == dim) continue;
      sizes[nd] = ts[0]->sizes()[d];
      for (int k = 0; k < 3; ++k) strides[k][nd] = ts[k]->strides()[d];
      count *= sizes[nd];
      ++nd;
    }
  }
  void offsets(int64_t slice, int64_t (&off)[3]) const {
    off[0] = off[1] = off[2] = 0;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t c = slice % sizes[d];
      slice /= sizes[d];
      for (int k = 0; k < 3; ++k) off[k] += c * strides[k][d];
    }
  }
};

// Sorts (or selects the first `keep` of) every slice along dim of in into values/indices.
// keep == n sorts fully; keep < n keeps the first `keep` in order (a partial sort).
void sort_slices(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                 bool descending, int64_t keep) {
  const Tensor* const ts[3] = {&in, &values, &indices};
  const Slices sl(ts, dim);
  const int64_t n = in.dim() == 0 ? 1 : in.sizes()[dim];
  const int64_t in_st = in.dim() == 0 ? 0 : in.strides()[dim];
  const int64_t v_st = values.dim() == 0 ? 0 : values.strides()[dim];
  const int64_t i_st = indices.dim() == 0 ? 0 : indices.strides()[dim];
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using K = std::conditional_t<std::is_same_v<T, bool>, uint8_t, compute_t<T>>;
    const T* src = static_cast<const T*>(in.data_ptr());
    T* vout = static_cast<T*>(values.data_ptr());
    int64_t* iout = static_cast<int64_t*>(indices.data_ptr());
    const ItemOrder<K> order{descending};
    const int64_t grain = std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(n, 1));
    parallel_for(sl.count, grain, [&](int64_t b, int64_t e) {
      std::vector<Item<K>> buf(static_cast<size_t>(n));
      int64_t off[3];
      for (int64_t s = b; s < e; ++s) {
        sl.offsets(s, off);
        const T* ip = src + off[0];
        for (int64_t i = 0; i < n; ++i) buf[i] = {static_cast<K>(ip[i * in_st]), i};
        if (keep == n) {
          std::sort(buf.begin(), buf.end(), order);
        } else {
          std::partial_sort(buf.begin(), buf.begin() + keep, buf.end(), order);
        }
        T* vp = vout + off[1];
        int64_t* xp = iout + off[2];
        for (int64_t i = 0; i < keep; ++i) {
          vp[i * v_st] = cast<T>(buf[i].first);
          xp[i * i_st] = buf[i].second;
        }
      }
    });
  });
}

}  // namespace

void CpuBackend::sort(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t dim,
                      bool descending, bool stable) {
  // Ties always keep their input order, which satisfies both stable and unstable requests.
  (void)stable;
  if (in.numel() == 0) return;
  sort_slices(values, indices, in, dim, descending, in.dim() == 0 ? 1 : in.sizes()[dim]);
}

void CpuBackend::topk(const Tensor& values, const Tensor& indices, const Tensor& in, int64_t k,
                      int64_t dim, bool largest, bool sorted) {
  // The k selected elements always come out sorted, which is allowed when sorted is false.
  (void)sorted;
  if (values.numel() == 0) return;
  sort_slices(values, indices, in, dim, largest, k);
}

}  // namespace ember
