// Host-side geometry every backend derives from tensors: the layout of a reduction and the
// (outer, n, inner) split of a contiguous tensor around one dim.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/reduce_layout.h"

namespace ember {

// Dims with out.size == 1 (and in.size != 1) are reduced; with only_dim >= 0 only that one is.
inline ReduceLayout make_reduce_layout(const char* op, const Tensor& out, const Tensor& in,
                                       int64_t only_dim = -1) {
  const int64_t nd = in.dim();
  if (nd > kMaxReduceDims) {
    throw NotImplementedError(std::string("[") + op + "] tensors with more than " +
                              std::to_string(kMaxReduceDims) + " dims are not supported");
  }
  struct D {
    int64_t size, sin, sout;
    bool red;
  };
  D d[kMaxReduceDims];
  int m = 0;
  for (int64_t i = 0; i < nd; ++i) {
    if (in.size(i) == 1) continue;
    const bool red = only_dim >= 0 ? i == only_dim : out.size(i) == 1;
    d[m++] = {in.size(i), in.stride(i), red ? 0 : out.stride(i), red};
  }
  // Broadcast (stride 0) dims go outermost so the smallest real stride ends up innermost.
  auto key = [](const D& x) { return x.sin == 0 ? INT64_MAX : x.sin; };
  std::stable_sort(d, d + m, [&](const D& a, const D& b) { return key(a) > key(b); });
  ReduceLayout l;
  for (int i = 0; i < m; ++i) {
    const D& x = d[i];
    if (x.red) {
      if (l.nr > 0 && l.rin[l.nr - 1] == x.sin * x.size) {
        l.rs[l.nr - 1] *= x.size;
        l.rin[l.nr - 1] = x.sin;
      } else {
        l.rs[l.nr] = x.size;
        l.rin[l.nr++] = x.sin;
      }
      l.n_red *= x.size;
    } else {
      if (l.nk > 0 && l.kin[l.nk - 1] == x.sin * x.size && l.kout[l.nk - 1] == x.sout * x.size) {
        l.ks[l.nk - 1] *= x.size;
        l.kin[l.nk - 1] = x.sin;
        l.kout[l.nk - 1] = x.sout;
      } else {
        l.ks[l.nk] = x.size;
        l.kin[l.nk] = x.sin;
        l.kout[l.nk++] = x.sout;
      }
      l.n_out *= x.size;
    }
  }
  if (l.nr == 0) {  // nothing to fold: one element per output
    l.rs[0] = 1;
    l.rin[0] = 0;
    l.nr = 1;
  }
  return l;
}

// (outer, n, inner) of a contiguous shape around dim (a 0-dim tensor is one row of one).
struct DimSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
inline DimSplit split_at_dim(const Shape& sizes, int64_t dim) {
  DimSplit s;
  for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
    if (d < dim)
      s.outer *= sizes[d];
    else if (d == dim)
      s.n = sizes[d];
    else
      s.inner *= sizes[d];
  }
  return s;
}

}  // namespace ember
