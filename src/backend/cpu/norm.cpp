// CPU normalisation (batch/layer/group/rms norm) and dropout. Statistics: Welford per row, or per
// channel over blocks of channels so BatchNorm1d's (N, C) input is read row by row. Forward: one
// normalise + affine pass. Backward: one pass of per-row or per-channel sums, one element pass.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/cpu_features.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/philox_cpu.h"
#include "core/dispatch.h"
#include "kernels/norm_ops.h"

namespace ember {

namespace {

// Channels whose accumulators one task keeps while it walks the batch.
constexpr int64_t kChannelBlock = 64;

int64_t grain_for(int64_t work) {
  return std::max<int64_t>(1, cpu::kGrain / std::max<int64_t>(1, work));
}

template <class T>
const T* ptr(const Tensor& t) {
  return t.defined() ? static_cast<const T*>(t.data_ptr()) : nullptr;
}
template <class T>
T* mut(const Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// Runs fn(channel, plane pointer offset) for every (b, c) plane of inner elements of the channels
// [c0, c1), batch-major so consecutive planes are consecutive in memory.
template <class Fn>
void for_channel_planes(const NormParams& p, int64_t c0, int64_t c1, Fn&& fn) {
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t c = c0; c < c1; ++c) fn(c, (b * p.channels + c) * p.inner);
  }
}

template <class T>
void stats_kernel(const Tensor& mean_t, const Tensor& rstd_t, const Tensor& in_t,
                  const NormParams& p, const Tensor& rm_t, const Tensor& rv_t) {
  using A = nrm::acc_t<T>;
  using Acc = rd::WelfordAcc<A>;
  const nrm::Welford<A> op;
  const T* x = ptr<T>(in_t);
  A* mean = mut<A>(mean_t);
  A* rstd = mut<A>(rstd_t);
  T* rm = mut<T>(rm_t);
  T* rv = mut<T>(rv_t);
  if (!p.per_channel) {
    const int64_t len = p.stat_size();
    parallel_for(p.stats(), grain_for(len), [&](int64_t r0, int64_t r1) {
      constexpr int L = 8;  // interleaved accumulators, merged at the end
      for (int64_t r = r0; r < r1; ++r) {
        const T* row = x + r * len;
        Acc acc[L];
        for (auto& a : acc) a = op.init();
        int64_t i = 0;
        for (; i + L <= len; i += L) {
          for (int k = 0; k < L; ++k) {
            const A v = static_cast<A>(row[i + k]);
            acc[k] = op.reduce(acc[k], p.rms ? v * v : v);
          }
        }
        for (; i < len; ++i) {
          const A v = static_cast<A>(row[i]);
          acc[0] = op.reduce(acc[0], p.rms ? v * v : v);
        }
        for (int k = 1; k < L; ++k) acc[0] = op.combine(acc[0], acc[k]);
        nrm::finish_stats(acc[0], p.eps, p.rms, mean[r], rstd[r]);
      }
    });
    return;
  }
  const int64_t nblocks = (p.channels + kChannelBlock - 1) / kChannelBlock;
  parallel_for(nblocks, grain_for(p.batch * p.inner * kChannelBlock), [&](int64_t k0, int64_t k1) {
    for (int64_t blk = k0; blk < k1; ++blk) {
      const int64_t c0 = blk * kChannelBlock, c1 = std::min(p.channels, c0 + kChannelBlock);
      Acc acc[kChannelBlock];
      for (auto& a : acc) a = op.init();
      for_channel_planes(p, c0, c1, [&](int64_t c, int64_t off) {
        Acc& a = acc[c - c0];
        for (int64_t k = 0; k < p.inner; ++k) a = op.reduce(a, static_cast<A>(x[off + k]));
      });
      for (int64_t c = c0; c < c1; ++c) {
        const Acc& a = acc[c - c0];
        nrm::finish_stats(a, p.eps, false, mean[c], rstd[c]);
        if (rm) {
          A m = static_cast<A>(rm[c]), v = static_cast<A>(rv[c]);
          nrm::update_running<A>(a.mean, a.n > A(0) ? a.m2 / a.n : A(0), a.n, p.momentum, m, v);
          rm[c] = cast<T>(m);
          rv[c] = cast<T>(v);
        }
      }
    }
  });
}

// Calls fn(b, s, c_begin, c_end) for every run of channels of batch b sharing statistic s.
template <class Fn>
void for_stat_runs(const NormParams& p, int64_t b, Fn&& fn) {
  if (p.per_channel) {
    for (int64_t c = 0; c < p.channels; ++c) fn(c, c, c + 1);
  } else {
    const int64_t cpg = p.channels / p.groups;
    for (int64_t g = 0; g < p.groups; ++g) fn(b * p.groups + g, g * cpg, (g + 1) * cpg);
  }
}

template <class T>
void forward_kernel(const Tensor& out_t, const Tensor& in_t, const Tensor& mean_t,
                    const Tensor& rstd_t, const Tensor& w_t, const Tensor& b_t,
                    const NormParams& p) {
  using A = nrm::acc_t<T>;
  const T* x = ptr<T>(in_t);
  T* y = mut<T>(out_t);
  const A* mean = ptr<A>(mean_t);
  const A* rstd = ptr<A>(rstd_t);
  const T* w = ptr<T>(w_t);
  const T* bias = ptr<T>(b_t);
  if (p.inner == 1 && !p.per_channel && p.groups == 1) {
    // (rows, features) (layer norm): one statistic per row, the loop over features vectorises.
    parallel_for(p.batch, grain_for(p.channels), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const A m = mean[b], r = rstd[b];
        const T* xr = x + b * p.channels;
        T* yr = y + b * p.channels;
        for (int64_t c = 0; c < p.channels; ++c) {
          const A wc = w ? static_cast<A>(w[c]) : A(1);
          const A bc = bias ? static_cast<A>(bias[c]) : A(0);
          yr[c] = cast<T>(nrm::normalize<A>(static_cast<A>(xr[c]), m, r, wc, bc));
        }
      }
    });
    return;
  }
  parallel_for(p.batch, grain_for(p.channels * p.inner), [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      for_stat_runs(p, b, [&](int64_t s, int64_t c0, int64_t c1) {
        const A m = mean[s], r = rstd[s];
        for (int64_t c = c0; c < c1; ++c) {
          const A wc = w ? static_cast<A>(w[c]) : A(1);
          const A bc = bias ? static_cast<A>(bias[c]) : A(0);
          const int64_t off = (b * p.channels + c) * p.inner;
          for (int64_t k = 0; k < p.inner; ++k) {
            y[off + k] = cast<T>(nrm::normalize<A>(static_cast<A>(x[off + k]), m, r, wc, bc));
          }
        }
      });
    }
  });
}

// Per channel: sum(dy) and sum(dy * xhat) over (batch, inner).
template <class T>
void channel_sums(const T* dy, const T* x, const nrm::acc_t<T>* mean, const nrm::acc_t<T>* rstd,
                  const NormParams& p, std::vector<nrm::Sum2<nrm::acc_t<T>>>& sums) {
  using A = nrm::acc_t<T>;
  sums.assign(static_cast<size_t>(p.channels), {A(0), A(0)});
  const int64_t nblocks = (p.channels + kChannelBlock - 1) / kChannelBlock;
  if (p.inner == 1 && (p.per_channel || p.groups == 1)) {
    // (rows, channels): each row's block of channels is contiguous, so the loop over channels
    // vectorises; every channel still adds its rows in order, as the general loop below does.
    parallel_for(nblocks, grain_for(2 * p.batch * kChannelBlock), [&](int64_t k0, int64_t k1) {
      for (int64_t blk = k0; blk < k1; ++blk) {
        const int64_t c0 = blk * kChannelBlock;
        const int64_t nc = std::min(p.channels, c0 + kChannelBlock) - c0;
        A sd[kChannelBlock] = {}, sdx[kChannelBlock] = {};
        for (int64_t b = 0; b < p.batch; ++b) {
          const T* dyr = dy + b * p.channels + c0;
          const T* xr = x + b * p.channels + c0;
          if (p.per_channel) {
            for (int64_t c = 0; c < nc; ++c) {
              const A d = static_cast<A>(dyr[c]);
              sd[c] += d;
              sdx[c] += d * (static_cast<A>(xr[c]) - mean[c0 + c]) * rstd[c0 + c];
            }
          } else {
            const A m = mean[b], r = rstd[b];
            for (int64_t c = 0; c < nc; ++c) {
              const A d = static_cast<A>(dyr[c]);
              sd[c] += d;
              sdx[c] += d * (static_cast<A>(xr[c]) - m) * r;
            }
          }
        }
        for (int64_t c = 0; c < nc; ++c) sums[c0 + c] = {sd[c], sdx[c]};
      }
    });
    return;
  }
  parallel_for(nblocks, grain_for(2 * p.batch * p.inner * kChannelBlock),
               [&](int64_t k0, int64_t k1) {
                 for (int64_t blk = k0; blk < k1; ++blk) {
                   const int64_t c0 = blk * kChannelBlock;
                   const int64_t c1 = std::min(p.channels, c0 + kChannelBlock);
                   for_channel_planes(p, c0, c1, [&](int64_t c, int64_t off) {
                     const int64_t s = p.stat_of(off / (p.channels * p.inner), c);
                     const A m = mean[s], r = rstd[s];
                     A sd = 0, sdx = 0;
                     for (int64_t k = 0; k < p.inner; ++k) {
                       const A d = static_cast<A>(dy[off + k]);
                       sd += d;
                       sdx += d * (static_cast<A>(x[off + k]) - m) * r;
                     }
                     sums[c].a += sd;
                     sums[c].b += sdx;
                   });
                 }
               });
}

template <class T>
void backward_kernel(const Tensor& gin_t, const Tensor& gw_t, const Tensor& gb_t,
                     const Tensor& gout_t, const Tensor& in_t, const Tensor& mean_t,
                     const Tensor& rstd_t, const Tensor& w_t, const NormParams& p) {
  using A = nrm::acc_t<T>;
  const T* dy = ptr<T>(gout_t);
  const T* x = ptr<T>(in_t);
  const A* mean = ptr<A>(mean_t);
  const A* rstd = ptr<A>(rstd_t);
  const T* w = ptr<T>(w_t);
  T* dx = mut<T>(gin_t);
  // Channel sums feed grad_weight/grad_bias and batch norm's grad_input.
  std::vector<nrm::Sum2<A>> sums;
  if (gw_t.defined() || gb_t.defined() || (dx && p.per_channel && p.batch_stats)) {
    channel_sums<T>(dy, x, mean, rstd, p, sums);
    for (int64_t c = 0; c < p.channels; ++c) {
      if (gw_t.defined()) mut<T>(gw_t)[c] = cast<T>(sums[c].b);
      if (gb_t.defined()) mut<T>(gb_t)[c] = cast<T>(sums[c].a);
    }
  }
  if (!dx) return;
  auto wc = [&](int64_t c) { return w ? static_cast<A>(w[c]) : A(1); };
  if (p.per_channel) {
    const A n = static_cast<A>(p.stat_size());
    parallel_for(p.batch * p.channels, grain_for(p.inner), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t c = i % p.channels, off = i * p.inner;
        const A m = mean[c], r = rstd[c], wv = wc(c);
        const A mg = p.batch_stats ? wv * sums[c].a / n : A(0);
        const A mgx = p.batch_stats ? wv * sums[c].b / n : A(0);
        for (int64_t k = 0; k < p.inner; ++k) {
          const A xhat = (static_cast<A>(x[off + k]) - m) * r;
          dx[off + k] = cast<T>(nrm::grad_input<A>(static_cast<A>(dy[off + k]) * wv, xhat, r, mg,
                                                   mgx, false, p.batch_stats));
        }
      }
    });
    return;
  }
  // Row statistics: one pass for the row's two sums, one writing pass.
  const int64_t cpg = p.channels / p.groups, len = p.stat_size();
  if (p.inner == 1) {
    // Rows of contiguous features (layer norm, rms norm): the same sums in the same order without
    // the per-channel inner loop, and a writing pass that vectorises.
    parallel_for(p.stats(), grain_for(2 * len), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t base = r * len;
        const T* wr = w ? w + (r % p.groups) * cpg : nullptr;
        const T* dyr = dy + base;
        const T* xr = x + base;
        T* dxr = dx + base;
        const A m = mean[r], rs = rstd[r];
        A sg = 0, sgx = 0;
        for (int64_t c = 0; c < len; ++c) {
          const A g = static_cast<A>(dyr[c]) * (wr ? static_cast<A>(wr[c]) : A(1));
          sg += g;
          sgx += g * (static_cast<A>(xr[c]) - m) * rs;
        }
        // grad_input's rstd * (g - mean_g - xhat * mean_gx), mean_g = 0 for rms.
        const A mg = p.rms ? A(0) : sg / static_cast<A>(len), mgx = sgx / static_cast<A>(len);
        for (int64_t c = 0; c < len; ++c) {
          const A g = static_cast<A>(dyr[c]) * (wr ? static_cast<A>(wr[c]) : A(1));
          const A xhat = (static_cast<A>(xr[c]) - m) * rs;
          dxr[c] = cast<T>(rs * (g - mg - xhat * mgx));
        }
      }
    });
    return;
  }
  parallel_for(p.stats(), grain_for(2 * len), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c_first = (r % p.groups) * cpg, base = r * len;
      const A m = mean[r], rs = rstd[r];
      A sg = 0, sgx = 0;
      for (int64_t c = 0; c < cpg; ++c) {
        const A wv = wc(c_first + c);
        const int64_t off = base + c * p.inner;
        for (int64_t k = 0; k < p.inner; ++k) {
          const A g = static_cast<A>(dy[off + k]) * wv;
          sg += g;
          sgx += g * (static_cast<A>(x[off + k]) - m) * rs;
        }
      }
      const A mg = sg / static_cast<A>(len), mgx = sgx / static_cast<A>(len);
      for (int64_t c = 0; c < cpg; ++c) {
        const A wv = wc(c_first + c);
        const int64_t off = base + c * p.inner;
        for (int64_t k = 0; k < p.inner; ++k) {
          const A xhat = (static_cast<A>(x[off + k]) - m) * rs;
          dx[off + k] = cast<T>(
              nrm::grad_input<A>(static_cast<A>(dy[off + k]) * wv, xhat, rs, mg, mgx, p.rms, true));
        }
      }
    }
  });
}

// float: one Philox word per element. keep = (word >> 8) < threshold is bernoulli_unit's
// (word >> 8) * 2^-24 < keep_prob with threshold = ceil(keep_prob * 2^24), in integers so that the
// loop vectorises; one pass writes the mask and the output.
EMBER_CPU_CLONES_WIDE void dropout_float_run(const uint32_t* __restrict words,
                                             const float* __restrict x, float* __restrict y,
                                             bool* __restrict mask, int64_t n, int32_t threshold,
                                             float scale) {
  for (int64_t i = 0; i < n; ++i) {
    const bool k = static_cast<int32_t>(words[i] >> 8) < threshold;
    mask[i] = k;
    y[i] = rd::pick(k, x[i] * scale, 0.0f);
  }
}

template <class T>
void dropout_kernel(const Tensor& out_t, const Tensor& mask_t, const Tensor& in_t, double p,
                    uint64_t seed, uint64_t offset) {
  using C = compute_t<T>;
  constexpr int per = nrm::dropout_per_block<T>();
  const T* x = ptr<T>(in_t);
  T* y = mut<T>(out_t);
  bool* mask = mut<bool>(mask_t);
  const int64_t n = in_t.numel();
  const double keep = 1.0 - p;
  const C scale = static_cast<C>(1.0 / keep);
  const auto threshold = static_cast<int32_t>(std::ceil(keep * 16777216.0));  // 2^24
  parallel_for((n + per - 1) / per, grain_for(per * 8), [&](int64_t b0, int64_t b1) {
    cpu::for_each_philox_chunk(
        seed, offset, b0, b1, [&](int64_t c, int64_t m, const uint32_t* words) {
          const int64_t i0 = c * per, len = std::min(m * per, n - i0);
          if constexpr (std::is_same_v<T, float>) {
            dropout_float_run(words, x + i0, y + i0, mask + i0, len, threshold, scale);
          } else {
            for (int64_t b = 0; b * per < len; ++b) {
              philox::Words w;
              std::memcpy(w.v, words + 4 * b, sizeof w.v);
              const int64_t e0 = i0 + b * per;
              const int mb = static_cast<int>(std::min<int64_t>(per, len - b * per));
              for (int j = 0; j < mb; ++j) {
                const bool k = nrm::dropout_keep<T>(w, j, keep);
                mask[e0 + j] = k;
                y[e0 + j] = k ? cast<T>(static_cast<C>(x[e0 + j]) * scale) : cast<T>(C(0));
              }
            }
          }
        });
  });
}

}  // namespace

void CpuBackend::norm_stats(const Tensor& mean, const Tensor& rstd, const Tensor& in,
                            const NormParams& p, const Tensor& running_mean,
                            const Tensor& running_var) {
  visit_float_dtype(in.dtype(), "norm", [&](auto tag) {
    stats_kernel<typename decltype(tag)::type>(mean, rstd, in, p, running_mean, running_var);
  });
}

void CpuBackend::norm_forward(const Tensor& out, const Tensor& in, const Tensor& mean,
                              const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                              const NormParams& p) {
  if (out.numel() == 0) return;
  visit_float_dtype(in.dtype(), "norm", [&](auto tag) {
    forward_kernel<typename decltype(tag)::type>(out, in, mean, rstd, weight, bias, p);
  });
}

void CpuBackend::norm_backward(const Tensor& grad_in, const Tensor& grad_weight,
                               const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                               const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                               const NormParams& p) {
  visit_float_dtype(in.dtype(), "norm backward", [&](auto tag) {
    backward_kernel<typename decltype(tag)::type>(grad_in, grad_weight, grad_bias, grad_out, in,
                                                  mean, rstd, weight, p);
  });
}

void CpuBackend::dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p,
                         uint64_t seed, uint64_t offset) {
  if (out.numel() == 0) return;
  visit_float_dtype(in.dtype(), "dropout", [&](auto tag) {
    dropout_kernel<typename decltype(tag)::type>(out, mask, in, p, seed, offset);
  });
}

}  // namespace ember
