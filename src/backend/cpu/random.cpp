// CPU random kernels: Philox blocks mapped onto the output's row-major element order (see
// kernels/random_ops.h), split across threads by block, so the thread count never changes a value.
// The blocks come in chunks from the SIMD generator (philox_cpu.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "backend/cpu/philox_cpu.h"
#include "core/dispatch.h"
#include "kernels/philox.h"
#include "kernels/random_ops.h"

namespace ember {

namespace {

// Blocks per thread chunk: a Philox block costs about as much as a few dozen simple
// element-wise operations, so a chunk of 2048 blocks is worth a thread.
constexpr int64_t kBlockGrain = 2048;

// Walks the operands of a strided layout in row-major logical order from element `start`.
template <int N>
struct Cursor {
  const cpu::StridedLayout<N>& L;
  int64_t idx[16];
  char* ptr[N];

  Cursor(const cpu::StridedLayout<N>& layout, int64_t start) : L(layout) {
    for (int d = L.ndim - 1; d >= 0; --d) {
      idx[d] = start % L.sizes[d];
      start /= L.sizes[d];
    }
    for (int k = 0; k < N; ++k) {
      ptr[k] = L.base[k];
      for (int d = 0; d < L.ndim; ++d) ptr[k] += idx[d] * L.strides[k][d];
    }
  }

  void next() {
    int d = L.ndim - 1;
    for (int k = 0; k < N; ++k) ptr[k] += L.strides[k][d];
    ++idx[d];
    while (d > 0 && idx[d] == L.sizes[d]) {
      for (int k = 0; k < N; ++k) ptr[k] += L.strides[k][d - 1] - L.sizes[d] * L.strides[k][d];
      idx[d] = 0;
      ++idx[--d];
    }
  }
};

template <RandomOp Op, class T>
void fill_random(const Tensor& out, uint64_t seed, uint64_t offset, const RandomParams& p) {
  constexpr int per = rnd::per_block<Op, T>();
  const int64_t n = out.numel();
  if (n == 0) return;
  const int64_t nblocks = (n + per - 1) / per;
  if (out.is_contiguous()) {
    T* o = static_cast<T*>(out.data_ptr());
    parallel_for(nblocks, kBlockGrain, [&](int64_t b0, int64_t b1) {
      cpu::for_each_philox_block(seed, offset, b0, b1, [&](int64_t b, const philox::Words& w) {
        T v[per];
        rnd::generate<Op, T>(w, p, v);
        const int64_t i0 = b * per;
        const int m = static_cast<int>(std::min<int64_t>(per, n - i0));
        for (int j = 0; j < m; ++j) o[i0 + j] = v[j];
      });
    });
    return;
  }
  const cpu::StridedLayout<1> L = cpu::make_layout<1>({&out});
  parallel_for(nblocks, kBlockGrain, [&](int64_t b0, int64_t b1) {
    Cursor<1> c(L, b0 * per);
    cpu::for_each_philox_block(seed, offset, b0, b1, [&](int64_t b, const philox::Words& w) {
      T v[per];
      rnd::generate<Op, T>(w, p, v);
      const int m = static_cast<int>(std::min<int64_t>(per, n - b * per));
      for (int j = 0; j < m; ++j, c.next()) *reinterpret_cast<T*>(c.ptr[0]) = v[j];
    });
  });
}

// out = (u < p) elementwise; u as for RandomOp::Bernoulli with out's dtype. A p outside [0, 1]
// (or NaN) is reported after the pass: kernels do not throw midway.
template <class T, class P>
bool bernoulli_tensor(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) {
  constexpr int per = rnd::per_block<RandomOp::Bernoulli, T>();
  const int64_t n = out.numel();
  const int64_t nblocks = (n + per - 1) / per;
  std::atomic<bool> bad{false};
  auto draw = [](const philox::Words& w, int j, P pv, bool& ok) {
    const double q = static_cast<double>(static_cast<compute_t<P>>(pv));
    ok = ok && q >= 0.0 && q <= 1.0;
    return cast<T>(rnd::bernoulli_unit<T>(w, j) < q);
  };
  if (out.is_contiguous() && p.is_contiguous()) {
    T* o = static_cast<T*>(out.data_ptr());
    const P* q = static_cast<const P*>(p.data_ptr());
    parallel_for(nblocks, kBlockGrain, [&](int64_t b0, int64_t b1) {
      bool ok = true;
      cpu::for_each_philox_block(seed, offset, b0, b1, [&](int64_t b, const philox::Words& w) {
        const int64_t i0 = b * per;
        const int m = static_cast<int>(std::min<int64_t>(per, n - i0));
        for (int j = 0; j < m; ++j) o[i0 + j] = draw(w, j, q[i0 + j], ok);
      });
      if (!ok) bad = true;
    });
    return !bad;
  }
  const cpu::StridedLayout<2> L = cpu::make_layout<2>({&out, &p});
  parallel_for(nblocks, kBlockGrain, [&](int64_t b0, int64_t b1) {
    bool ok = true;
    Cursor<2> c(L, b0 * per);
    cpu::for_each_philox_block(seed, offset, b0, b1, [&](int64_t b, const philox::Words& w) {
      const int m = static_cast<int>(std::min<int64_t>(per, n - b * per));
      for (int j = 0; j < m; ++j, c.next()) {
        *reinterpret_cast<T*>(c.ptr[0]) = draw(w, j, *reinterpret_cast<const P*>(c.ptr[1]), ok);
      }
    });
    if (!ok) bad = true;
  });
  return !bad;
}

// The first p value outside [0, 1], for the error message (slow path, runs only on error).
template <class P>
double first_bad_p(const Tensor& p) {
  for (P v : p.to_vector<P>()) {
    const double q = static_cast<double>(static_cast<compute_t<P>>(v));
    if (!(q >= 0.0 && q <= 1.0)) return q;
  }
  return 0.0;
}

}  // namespace

void CpuBackend::random(RandomOp op, const Tensor& out, uint64_t seed, uint64_t offset,
                        const RandomParams& p) {
  switch (op) {
    case RandomOp::Uniform:
      visit_float_dtype(out.dtype(), "uniform_", [&](auto tag) {
        fill_random<RandomOp::Uniform, typename decltype(tag)::type>(out, seed, offset, p);
      });
      return;
    case RandomOp::Normal:
      visit_float_dtype(out.dtype(), "normal_", [&](auto tag) {
        fill_random<RandomOp::Normal, typename decltype(tag)::type>(out, seed, offset, p);
      });
      return;
    case RandomOp::RandInt:
      visit_dtype(out.dtype(), [&](auto tag) {
        fill_random<RandomOp::RandInt, typename decltype(tag)::type>(out, seed, offset, p);
      });
      return;
    case RandomOp::Bernoulli:
      visit_dtype(out.dtype(), [&](auto tag) {
        fill_random<RandomOp::Bernoulli, typename decltype(tag)::type>(out, seed, offset, p);
      });
      return;
    case RandomOp::Bits64:
      if (out.dtype() != kInt64) missing("random bits");
      fill_random<RandomOp::Bits64, int64_t>(out, seed, offset, p);
      return;
  }
  missing("random");
}

void CpuBackend::bernoulli(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) {
  if (out.numel() == 0) return;
  visit_dtype(out.dtype(), [&](auto ot) {
    using T = typename decltype(ot)::type;
    visit_float_dtype(p.dtype(), "bernoulli", [&](auto pt) {
      using P = typename decltype(pt)::type;
      if (!bernoulli_tensor<T, P>(out, p, seed, offset)) {
        std::ostringstream os;
        os << "[bernoulli] expects all elements of p to be in [0, 1], but got p="
           << first_bad_p<P>(p);
        throw ValueError(os.str());
      }
    });
  });
}

}  // namespace ember
