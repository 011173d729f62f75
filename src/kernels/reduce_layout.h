// The geometry of a reduction, shared by every backend: (outputs x reduced positions) after
// dropping size-1 dims, ordering dims by input stride (outer to inner) and merging dims that walk
// memory as one. Plain types with EMBER_HD offset helpers, so device kernels take it by value.
#pragma once

#include <cstdint>

#include "ember/macros.h"

namespace ember {

inline constexpr int kMaxReduceDims = 16;

// Kept dims with their input and output strides and reduced dims with their input strides, in
// elements. Output o and reduced position r read in[kept_in(o) + reduced_in(r)] and write
// out[kept_out(o)].
struct ReduceLayout {
  int nk = 0, nr = 0;
  int64_t ks[kMaxReduceDims], kin[kMaxReduceDims], kout[kMaxReduceDims];
  int64_t rs[kMaxReduceDims], rin[kMaxReduceDims];
  int64_t n_out = 1, n_red = 1;

  EMBER_HD void kept_offsets(int64_t o, int64_t& in_off, int64_t& out_off) const {
    in_off = out_off = 0;
    for (int d = nk - 1; d >= 0; --d) {
      const int64_t c = o % ks[d];
      o /= ks[d];
      in_off += c * kin[d];
      out_off += c * kout[d];
    }
  }
  EMBER_HD int64_t reduced_offset(int64_t r) const {
    if (nr == 1) return r * rin[0];
    int64_t off = 0;
    for (int d = nr - 1; d >= 0; --d) {
      off += (r % rs[d]) * rin[d];
      r /= rs[d];
    }
    return off;
  }
};

}  // namespace ember
