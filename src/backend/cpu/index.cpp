// CPU indexing kernels: index_select, gather, scatter, advanced indexing, nonzero, tril/triu.
// Pure data movement dispatches on the element size, not the dtype; accumulation is typed.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "core/tensor_util.h"
#include "kernels/cast.h"

namespace ember {

using cpu::for_each_run;
using cpu::kGrain;

namespace {

// Calls fn(TypeTag<U>) with an unsigned integer type of the given byte width.
template <class Fn>
void visit_elem_size(size_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn(TypeTag<uint8_t>{});
    case 2:
      return fn(TypeTag<uint16_t>{});
    case 4:
      return fn(TypeTag<uint32_t>{});
    case 8:
      return fn(TypeTag<uint64_t>{});
  }
  throw Error("[index] unsupported element size " + std::to_string(bytes));
}

inline int64_t load_index(const char* p) { return *reinterpret_cast<const int64_t*>(p); }

// dst += src for one element, computed in the compute type and rounded once; bool is "or".
template <class T>
inline void accumulate_into(char* dst, const char* src) {
  T* d = reinterpret_cast<T*>(dst);
  const T s = *reinterpret_cast<const T*>(src);
  if constexpr (std::is_same_v<T, bool>) {
    *d = *d || s;
  } else {
    using C = compute_t<T>;
    *d = cast<T>(static_cast<C>(*d) + static_cast<C>(s));
  }
}

Shape drop_dim(const Shape& s, int64_t dim) {
  Shape out = s;
  out.erase(static_cast<size_t>(dim));
  return out;
}

// out[i] = src[i + idx[i] * step] for every element: src is a view with out's sizes whose
// indexed dim has stride 0, idx is an int64 view with out's sizes, step is in bytes.
void gather_runs(const Tensor& out, const Tensor& src, const Tensor& idx, int64_t step) {
  visit_elem_size(out.element_size(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    constexpr int64_t kE = sizeof(E);
    for_each_run<3>({&out, &src, &idx}, kGrain, [step](char** p, int64_t n, const int64_t* s) {
      if (s[2] == 0) {  // one index for the whole run: a plain (often contiguous) copy
        const char* from = p[1] + load_index(p[2]) * step;
        if (s[0] == kE && s[1] == kE) {
          std::memcpy(p[0], from, static_cast<size_t>(n) * kE);
        } else {
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<E*>(p[0] + i * s[0]) = *reinterpret_cast<const E*>(from + i * s[1]);
          }
        }
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        const char* from = p[1] + i * s[1] + load_index(p[2] + i * s[2]) * step;
        *reinterpret_cast<E*>(p[0] + i * s[0]) = *reinterpret_cast<const E*>(from);
      }
    });
  });
}

// Element offsets into `in` of the positions named by indices (all of one shape): a contiguous
// int64 tensor of that shape holding sum_j indices[j] * in.stride(j).
Tensor index_offsets(const Tensor& in, const TensorList& indices) {
  Tensor offs = make_empty(indices[0].sizes(), kInt64, Device(kCPU), false, "index");
  if (offs.numel() == 0) return offs;
  for (size_t j = 0; j < indices.size(); ++j) {
    const int64_t stride = in.strides()[j];
    const bool first = j == 0;
    for_each_run<2>({&offs, &indices[j]}, kGrain,
                    [stride, first](char** p, int64_t n, const int64_t* s) {
                      for (int64_t i = 0; i < n; ++i) {
                        int64_t* o = reinterpret_cast<int64_t*>(p[0] + i * s[0]);
                        int64_t v = load_index(p[1] + i * s[1]) * stride;
                        *o = first ? v : *o + v;
                      }
                    });
  }
  return offs;
}

}  // namespace

// ---- index_select and gather --------------------------------------------------------------------

void CpuBackend::index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                              const IndexCheck&) {
  if (out.numel() == 0) return;
  // in seen with out's sizes and stride 0 along dim; the index walks along dim only.
  Shape in_st = in.strides();
  in_st[dim] = 0;
  Tensor in_r = make_view(in, out.sizes(), in_st, in.storage_offset());
  Shape idx_st(out.sizes().size(), 0);
  idx_st[dim] = index.dim() == 0 ? 0 : index.strides()[0];
  Tensor idx_r = make_view(index, out.sizes(), idx_st, index.storage_offset());
  gather_runs(out, in_r, idx_r, in.strides()[dim] * static_cast<int64_t>(in.element_size()));
}

void CpuBackend::gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index,
                        const IndexCheck&) {
  if (out.numel() == 0) return;
  Shape in_st = in.strides();
  in_st[dim] = 0;
  Tensor in_r = make_view(in, index.sizes(), in_st, in.storage_offset());
  gather_runs(out, in_r, index, in.strides()[dim] * static_cast<int64_t>(in.element_size()));
}

// ---- scatter ------------------------------------------------------------------------------------

// Threads split the positions that differ off `dim`; each walks its positions along `dim` in
// order. Two positions that differ off `dim` never write the same element, so duplicates along
// `dim` accumulate without races and the last write wins, as in a serial loop.
void CpuBackend::scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src,
                         bool accumulate, const IndexCheck&) {
  if (index.numel() == 0) return;
  const int64_t k = index.sizes()[dim];
  Shape sizes = drop_dim(index.sizes(), dim);
  Tensor out_s = make_view(out, sizes, drop_dim(out.strides(), dim), out.storage_offset());
  Tensor src_s = make_view(src, sizes, drop_dim(src.strides(), dim), src.storage_offset());
  Tensor idx_s = make_view(index, sizes, drop_dim(index.strides(), dim), index.storage_offset());
  const int64_t esize = static_cast<int64_t>(out.element_size());
  const int64_t ostep = out.strides()[dim] * esize;
  const int64_t sstep = src.strides()[dim] * esize;
  const int64_t istep = index.strides()[dim] * static_cast<int64_t>(sizeof(int64_t));
  const int64_t grain = std::max<int64_t>(1, kGrain / k);
  auto run = [&](auto write) {
    for_each_run<3>({&out_s, &src_s, &idx_s}, grain, [&](char** p, int64_t n, const int64_t* s) {
      for (int64_t e = 0; e < n; ++e) {
        char* o = p[0] + e * s[0];
        const char* a = p[1] + e * s[1];
        const char* ix = p[2] + e * s[2];
        for (int64_t j = 0; j < k; ++j)
          write(o + load_index(ix + j * istep) * ostep, a + j * sstep);
      }
    });
  };
  if (accumulate) {
    visit_dtype(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run([](char* d, const char* v) { accumulate_into<T>(d, v); });
    });
  } else {
    visit_elem_size(out.element_size(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      run([](char* d, const char* v) {
        *reinterpret_cast<E*>(d) = *reinterpret_cast<const E*>(v);
      });
    });
  }
}

// ---- advanced indexing --------------------------------------------------------------------------

void CpuBackend::index(const Tensor& out, const Tensor& in, const TensorList& indices,
                       const IndexCheck&) {
  if (out.numel() == 0) return;
  const size_t k = indices.size();
  const size_t m = indices[0].sizes().size();
  Tensor offs = index_offsets(in, indices);
  // in and offs seen with out's sizes: (index dims..., rest of in's dims).
  Shape in_st(m, 0), off_st = offs.strides();
  for (size_t d = k; d < in.sizes().size(); ++d) {
    in_st.push_back(in.strides()[d]);
    off_st.push_back(0);
  }
  Tensor in_r = make_view(in, out.sizes(), in_st, in.storage_offset());
  Tensor off_r = make_view(offs, out.sizes(), off_st, 0);
  gather_runs(out, in_r, off_r, static_cast<int64_t>(in.element_size()));
}

// Threads split the trailing (non-indexed) positions; each visits the index positions in order,
// so repeated indices accumulate correctly and the last write wins without accumulate.
void CpuBackend::index_put(const Tensor& self, const TensorList& indices, const Tensor& values,
                           bool accumulate, const IndexCheck&) {
  const size_t k = indices.size();
  const Shape& ishape = indices[0].sizes();
  const size_t m = ishape.size();
  const int64_t count = ishape.numel();
  if (count == 0 || values.numel() == 0) return;
  std::vector<int64_t> offs = index_offsets(self, indices).to_vector<int64_t>();
  // Element offsets of the index part of values, in the same row-major order.
  std::vector<int64_t> voffs(static_cast<size_t>(count));
  {
    std::vector<int64_t> pos(m, 0);
    int64_t off = 0;
    for (int64_t i = 0; i < count; ++i) {
      voffs[static_cast<size_t>(i)] = off;
      for (size_t d = m; d-- > 0;) {
        off += values.strides()[d];
        if (++pos[d] < ishape[d]) break;
        off -= pos[d] * values.strides()[d];
        pos[d] = 0;
      }
    }
  }
  Shape rest, self_st, val_st;
  for (size_t d = k; d < self.sizes().size(); ++d) {
    rest.push_back(self.sizes()[d]);
    self_st.push_back(self.strides()[d]);
  }
  for (size_t d = m; d < values.sizes().size(); ++d) val_st.push_back(values.strides()[d]);
  Tensor self_r = make_view(self, rest, self_st, self.storage_offset());
  Tensor val_r = make_view(values, rest, val_st, values.storage_offset());
  const int64_t esize = static_cast<int64_t>(self.element_size());
  const int64_t grain = std::max<int64_t>(1, kGrain / count);
  auto run = [&](auto write) {
    for_each_run<2>({&self_r, &val_r}, grain, [&](char** p, int64_t n, const int64_t* s) {
      for (int64_t i = 0; i < count; ++i) {
        char* d = p[0] + offs[static_cast<size_t>(i)] * esize;
        const char* v = p[1] + voffs[static_cast<size_t>(i)] * esize;
        for (int64_t e = 0; e < n; ++e) write(d + e * s[0], v + e * s[1]);
      }
    });
  };
  if (accumulate) {
    visit_dtype(self.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      run([](char* d, const char* v) { accumulate_into<T>(d, v); });
    });
  } else {
    visit_elem_size(self.element_size(), [&](auto tag) {
      using E = typename decltype(tag)::type;
      run([](char* d, const char* v) {
        *reinterpret_cast<E*>(d) = *reinterpret_cast<const E*>(v);
      });
    });
  }
}

// ---- nonzero ------------------------------------------------------------------------------------

// Two passes over fixed chunks of the row-major order: count per chunk, then each chunk writes
// its coordinates from its prefix offset, so the result is in row-major order on any thread count.
Tensor CpuBackend::nonzero(const Tensor& in) {
  Tensor c = in.contiguous();
  const int64_t n = c.numel();
  const int64_t nd = c.dim();
  const Shape sizes = c.sizes();
  const int64_t chunk = kGrain;
  const int64_t nchunks = n == 0 ? 0 : (n + chunk - 1) / chunk;
  std::vector<int64_t> counts(static_cast<size_t>(nchunks) + 1, 0);
  Tensor out;
  visit_dtype(c.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(c.data_ptr());
    auto nonzero_at = [data](int64_t i) {
      if constexpr (std::is_same_v<T, bool>)
        return data[i];
      else
        return static_cast<compute_t<T>>(data[i]) != compute_t<T>(0);  // NaN counts
    };
    parallel_for(nchunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t ch = b; ch < e; ++ch) {
        int64_t cnt = 0;
        for (int64_t i = ch * chunk, end = std::min(n, i + chunk); i < end; ++i)
          cnt += nonzero_at(i);
        counts[static_cast<size_t>(ch) + 1] = cnt;
      }
    });
    for (int64_t ch = 0; ch < nchunks; ++ch) counts[ch + 1] += counts[ch];
    out = make_empty({counts[static_cast<size_t>(nchunks)], nd}, kInt64, Device(kCPU), false,
                     "nonzero");
    int64_t* o = static_cast<int64_t*>(out.data_ptr());
    parallel_for(nchunks, 1, [&](int64_t b, int64_t e) {
      int64_t pos[16];
      for (int64_t ch = b; ch < e; ++ch) {
        int64_t start = ch * chunk;
        int64_t rem = start;
        for (int64_t d = nd - 1; d >= 0; --d) {
          pos[d] = rem % sizes[d];
          rem /= sizes[d];
        }
        int64_t* w = o + counts[static_cast<size_t>(ch)] * nd;
        for (int64_t i = start, end = std::min(n, start + chunk); i < end; ++i) {
          if (nonzero_at(i)) {
            for (int64_t d = 0; d < nd; ++d) w[d] = pos[d];
            w += nd;
          }
          for (int64_t d = nd - 1; d >= 0; --d) {
            if (++pos[d] < sizes[d]) break;
            pos[d] = 0;
          }
        }
      }
    });
  });
  return out;
}

// ---- tril / triu --------------------------------------------------------------------------------

void CpuBackend::tril_triu(const Tensor& out, const Tensor& in, int64_t k, bool upper) {
  const int64_t nd = in.dim();
  const int64_t rows_n = in.sizes()[nd - 2], cols = in.sizes()[nd - 1];
  if (out.numel() == 0) return;
  const int64_t rows = out.numel() / cols;
  visit_elem_size(out.element_size(), [&](auto tag) {
    using E = typename decltype(tag)::type;
    const E* src = static_cast<const E*>(in.data_ptr());
    E* dst = static_cast<E*>(out.data_ptr());
    const int64_t is = in.strides()[nd - 1], os = out.strides()[nd - 1];
    parallel_for(rows, std::max<int64_t>(1, kGrain / cols), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        // Row-major row number -> element offsets of the row start in both tensors.
        int64_t rem = row, ioff = 0, ooff = 0;
        for (int64_t d = nd - 2; d >= 0; --d) {
          int64_t c = rem % in.sizes()[d];
          rem /= in.sizes()[d];
          ioff += c * in.strides()[d];
          ooff += c * out.strides()[d];
        }
        const int64_t r = row % rows_n;
        // Kept columns form one range [lo, hi); k is clamped by the op layer, so no overflow.
        int64_t lo = upper ? std::clamp<int64_t>(r + k, 0, cols) : 0;
        int64_t hi = upper ? cols : std::clamp<int64_t>(r + k + 1, 0, cols);
        if (hi < lo) hi = lo;
        const E* ip = src + ioff;
        E* op = dst + ooff;
        for (int64_t c = 0; c < cols; ++c) op[c * os] = (c >= lo && c < hi) ? ip[c * is] : E(0);
      }
    });
  });
}

}  // namespace ember
