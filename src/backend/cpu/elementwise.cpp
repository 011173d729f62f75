// CPU element-wise kernels: copy/cast, fill, unary, binary, ternary, where.
#include <cstring>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/loops.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember {

using cpu::for_each_run;
using cpu::kGrain;

// ---- copy / cast --------------------------------------------------------------------------------

void CpuBackend::copy(const Tensor& dst, const Tensor& src) {
  visit_dtype(dst.dtype(), [&](auto dt) {
    using D = typename decltype(dt)::type;
    visit_dtype(src.dtype(), [&](auto st) {
      using S = typename decltype(st)::type;
      for_each_run<2>({&dst, &src}, kGrain, [](char** p, int64_t n, const int64_t* s) {
        if constexpr (std::is_same_v<D, S>) {
          if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
            std::memcpy(p[0], p[1], static_cast<size_t>(n) * sizeof(D));
            return;
          }
        }
        if (s[0] == sizeof(D) && s[1] == sizeof(S)) {
          D* o = reinterpret_cast<D*>(p[0]);
          const S* a = reinterpret_cast<const S*>(p[1]);
          for (int64_t i = 0; i < n; ++i) o[i] = cast<D>(a[i]);
        } else {
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<D*>(p[0] + i * s[0]) =
                cast<D>(*reinterpret_cast<const S*>(p[1] + i * s[1]));
          }
        }
      });
    });
  });
}

void CpuBackend::fill(const Tensor& dst, Scalar value) {
  visit_dtype(dst.dtype(), [&](auto dt) {
    using D = typename decltype(dt)::type;
    const D v = value.is_floating_point()
                    ? cast<D>(value.to_double())
                    : (value.is_bool() ? cast<D>(value.to_bool()) : cast<D>(value.to_long()));
    for_each_run<1>({&dst}, kGrain, [v](char** p, int64_t n, const int64_t* s) {
      if (s[0] == sizeof(D)) {
        D* o = reinterpret_cast<D*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<D*>(p[0] + i * s[0]) = v;
      }
    });
  });
}

// ---- unary --------------------------------------------------------------------------------------

void CpuBackend::unary(UnaryOp op, const Tensor& out, const Tensor& in,
                       const ElementwiseParams& prm) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    visit_unary(op, [&](auto opc) {
      constexpr UnaryOp O = decltype(opc)::value;
      if constexpr (!unary_supports<O, C>) {
        missing("unary");
      } else {
        using R = std::conditional_t<returns_bool(O), bool, T>;
        const ElementwiseParams p = prm;
        for_each_run<2>({&out, &in}, kGrain, [&p](char** ptr, int64_t n, const int64_t* s) {
          if (s[0] == sizeof(R) && s[1] == sizeof(T)) {
            R* o = reinterpret_cast<R*>(ptr[0]);
            const T* a = reinterpret_cast<const T*>(ptr[1]);
            for (int64_t i = 0; i < n; ++i) o[i] = cast<R>(ew::unary<O>(static_cast<C>(a[i]), p));
          } else {
            for (int64_t i = 0; i < n; ++i) {
              C x = static_cast<C>(*reinterpret_cast<const T*>(ptr[1] + i * s[1]));
              *reinterpret_cast<R*>(ptr[0] + i * s[0]) = cast<R>(ew::unary<O>(x, p));
            }
          }
        });
      }
    });
  });
}

// ---- binary -------------------------------------------------------------------------------------

void CpuBackend::binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                        const ElementwiseParams& prm) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    visit_binary(op, [&](auto opc) {
      constexpr BinaryOp O = decltype(opc)::value;
      if constexpr (!binary_supports<O, C>) {
        missing("binary");
      } else {
        using R = std::conditional_t<returns_bool(O), bool, T>;
        const ElementwiseParams p = prm;
        auto f = [&p](T x, T y) {
          return cast<R>(ew::binary<O>(static_cast<C>(x), static_cast<C>(y), p));
        };
        for_each_run<3>({&out, &a, &b}, kGrain, [&f](char** ptr, int64_t n, const int64_t* s) {
          R* o = reinterpret_cast<R*>(ptr[0]);
          const T* x = reinterpret_cast<const T*>(ptr[1]);
          const T* y = reinterpret_cast<const T*>(ptr[2]);
          if (s[0] == sizeof(R)) {
            // Separate loops let the compiler vectorise each common layout.
            if (s[1] == sizeof(T) && s[2] == sizeof(T)) {
              for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], y[i]);
              return;
            }
            if (s[1] == sizeof(T) && s[2] == 0) {
              const T yv = *y;
              for (int64_t i = 0; i < n; ++i) o[i] = f(x[i], yv);
              return;
            }
            if (s[1] == 0 && s[2] == sizeof(T)) {
              const T xv = *x;
              for (int64_t i = 0; i < n; ++i) o[i] = f(xv, y[i]);
              return;
            }
          }
          for (int64_t i = 0; i < n; ++i) {
            *reinterpret_cast<R*>(ptr[0] + i * s[0]) =
                f(*reinterpret_cast<const T*>(ptr[1] + i * s[1]),
                  *reinterpret_cast<const T*>(ptr[2] + i * s[2]));
          }
        });
      }
    });
  });
}

// ---- ternary and where --------------------------------------------------------------------------

void CpuBackend::ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                         const Tensor& c, const ElementwiseParams& prm) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    visit_ternary(op, [&](auto opc) {
      constexpr TernaryOp O = decltype(opc)::value;
      if constexpr (!ternary_supports<O, C>) {
        missing("ternary");
      } else {
        const ElementwiseParams p = prm;
        for_each_run<4>({&out, &a, &b, &c}, kGrain, [&p](char** ptr, int64_t n, const int64_t* s) {
          for (int64_t i = 0; i < n; ++i) {
            C x = static_cast<C>(*reinterpret_cast<const T*>(ptr[1] + i * s[1]));
            C y = static_cast<C>(*reinterpret_cast<const T*>(ptr[2] + i * s[2]));
            C z = static_cast<C>(*reinterpret_cast<const T*>(ptr[3] + i * s[3]));
            *reinterpret_cast<T*>(ptr[0] + i * s[0]) = cast<T>(ew::ternary<O>(x, y, z, p));
          }
        });
      }
    });
  });
}

void CpuBackend::where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_run<4>({&out, &cond, &a, &b}, kGrain, [](char** ptr, int64_t n, const int64_t* s) {
      T* o = reinterpret_cast<T*>(ptr[0]);
      const bool* c = reinterpret_cast<const bool*>(ptr[1]);
      const T* x = reinterpret_cast<const T*>(ptr[2]);
      const T* y = reinterpret_cast<const T*>(ptr[3]);
      // Contiguous operands, or a scalar on either side (masked_fill, dropout's backward): the
      // bit-mask select vectorises where a branch would not.
      if (s[0] == sizeof(T) && s[1] == sizeof(bool) && (s[2] == sizeof(T) || s[2] == 0) &&
          (s[3] == sizeof(T) || s[3] == 0)) {
        if (s[2] == sizeof(T) && s[3] == sizeof(T)) {
          for (int64_t i = 0; i < n; ++i) o[i] = rd::pick(c[i], x[i], y[i]);
          return;
        }
        if (s[2] == sizeof(T)) {
          const T yv = *y;
          for (int64_t i = 0; i < n; ++i) o[i] = rd::pick(c[i], x[i], yv);
          return;
        }
        if (s[3] == sizeof(T)) {
          const T xv = *x;
          for (int64_t i = 0; i < n; ++i) o[i] = rd::pick(c[i], xv, y[i]);
          return;
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        *reinterpret_cast<T*>(ptr[0] + i * s[0]) =
            ew::where(c[i * s[1]], *reinterpret_cast<const T*>(ptr[2] + i * s[2]),
                      *reinterpret_cast<const T*>(ptr[3] + i * s[3]));
      }
    });
  });
}

}  // namespace ember
