// Fused scaled dot-product attention: the geometry and the per-score math (scale, causal and
// explicit masks), written once for host and device (EMBER_HD) so the CPU and CUDA kernels agree.
//
// The op layer hands the kernels contiguous q (B, L, E), k (B, S, E), v (B, S, Ev), out (B, L, Ev)
// and lse (B, L), B the flattened batch dims. lse holds each query row's log-sum-exp of its
// scaled, masked scores in the accumulation dtype (float32, float64 for float64 inputs); a row
// whose every key is masked has lse = -inf, output 0 and zero gradients (PyTorch's rule).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/macros.h"

namespace ember {

struct AttentionParams {
  int64_t batch = 1, l = 0, s = 0, e = 0, ev = 0;
  double scale = 1.0;
  bool causal = false;  // query i attends to keys j <= i (top-left aligned)
  // Explicit mask (bool: true = attend; else additive in q's dtype) seen as (B, L, S) with these
  // element strides (0 where it broadcasts); none when has_mask is false.
  bool has_mask = false;
  bool mask_bool = false;
  int64_t mask_sb = 0, mask_sl = 0, mask_ss = 0;

  EMBER_HD int64_t mask_offset(int64_t b, int64_t i, int64_t j) const {
    return b * mask_sb + i * mask_sl + j * mask_ss;
  }
};

namespace attn {

// The accumulation type of element type T's kernels: double for double, float otherwise.
template <class T>
struct acc_type {
  using type = float;
};
template <>
struct acc_type<double> {
  using type = double;
};
template <class T>
using acc_t = typename acc_type<T>::type;

// Score of (b, i, j) from the raw dot product: scaled, then masked (-inf) or shifted. mask is the
// explicit mask's base pointer (bool or T), or null.
template <class A, class T>
EMBER_HD inline A score(A dot, const AttentionParams& p, const void* mask, int64_t b, int64_t i,
                        int64_t j) {
  if (p.causal && j > i) return -INFINITY;
  A sc = dot * static_cast<A>(p.scale);
  if (mask != nullptr) {
    const int64_t off = p.mask_offset(b, i, j);
    if (p.mask_bool) {
      if (!static_cast<const bool*>(mask)[off]) return -INFINITY;
    } else {
      sc += static_cast<A>(static_cast<const T*>(mask)[off]);
    }
  }
  return sc;
}

// exp(s - lse), 0 for a masked score or a fully masked row.
template <class A>
EMBER_HD inline A prob(A s, A lse) {
  return (s == -INFINITY || lse == -INFINITY) ? A(0) : static_cast<A>(exp(s - lse));
}

// Keys [0, end) that query i may see under the causal mask (all of them without it).
EMBER_HD inline int64_t key_end(const AttentionParams& p, int64_t i) {
  if (!p.causal) return p.s;
  return i + 1 < p.s ? i + 1 : p.s;
}

}  // namespace attn

}  // namespace ember
