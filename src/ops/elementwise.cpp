// Element-wise ops: type promotion, broadcasting, in-place rules; the math is in kernels/.
#include <cmath>

#include "autograd/function.h"
#include "core/record_scope.h"
#include "ops/autocast.h"
#include "ops/elementwise_grad.h"
#include "ops/op_utils.h"

namespace ember {

// ---- type promotion -----------------------------------------------------------------------------

namespace {

// PyTorch's result_type: tensors with dims decide, 0-dim tensors and then Python-style scalars
// only raise the result when they are of a higher category (bool < integer < float).
struct ResultTypeState {
  std::optional<DType> dim, zero, wrapped;

  static void merge(std::optional<DType>& slot, DType t) {
    slot = slot ? promote_types(*slot, t) : t;
  }
  void add(const Tensor& t) {
    if (!t.defined()) return;
    merge(t.dim() > 0 ? dim : zero, t.dtype());
  }
  void add(Scalar s) { merge(wrapped, s.is_floating_point() ? default_dtype() : s.dtype()); }
  static std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_floating_point(*higher)) return higher;
    if (*higher == kBool || is_floating_point(*lower)) return promote_types(*higher, *lower);
    return higher;
  }
  DType result() const { return combine(dim, combine(zero, wrapped)).value_or(default_dtype()); }
};

bool can_cast(DType from, DType to) {
  // PyTorch: no float -> integral, no non-bool -> bool.
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

DType result_type(const Tensor& a, Scalar b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

// ---- dtype classes ------------------------------------------------------------------------------

namespace {

[[noreturn]] void dtype_error(const char* op, DType t) {
  throw TypeError(op_prefix(op) + "not implemented for dtype " + std::string(dtype_name(t)));
}

// The dtype the kernel computes in when the operands' common dtype is t (the op table's dtypes
// column); the kernels exist for exactly these.
DType compute_dtype(const char* op, DTypeClass dtypes, DType t) {
  switch (dtypes) {
    case DTypeClass::Float:
      return is_floating_point(t) ? t : default_dtype();
    case DTypeClass::FloatOnly:
      if (!is_floating_point(t)) dtype_error(op, t);
      return t;
    case DTypeClass::Numeric:
      if (t == kBool) dtype_error(op, t);
      return t;
    case DTypeClass::Integral:
      if (is_floating_point(t)) dtype_error(op, t);
      return t;
    case DTypeClass::IntegerOnly:
      if (is_floating_point(t) || t == kBool) dtype_error(op, t);
      return t;
    case DTypeClass::Any:
    case DTypeClass::Division:
      return t;
  }
  return t;
}

// Whether an op's derivative reads its inputs: in place, autograd then hands it a clone of self.
bool grad_reads_inputs(const ElementwiseOpInfo& info) {
  return info.saved == Saved::Inputs || info.saved == Saved::InputsAndOutput;
}

}  // namespace

// ---- unary --------------------------------------------------------------------------------------

namespace {

Tensor unary_op(const char* name, UnaryOp op, const Tensor& x, ElementwiseParams p = {}) {
  EMBER_RECORD_OP(name, &x);
  if (!x.defined()) throw ValueError(op_prefix(name) + "the input tensor is undefined");
  DType ct = compute_dtype(name, op_info(op).dtypes, x.dtype());
  DType out_t = returns_bool(op) ? kBool : ct;
  Tensor in = to_operand(x, ct, x.device());
  Tensor out = make_empty(x.sizes(), out_t, x.device(), false, name);
  if (out.numel() > 0) backend(x.device()).unary(op, out, in, p);
  if (autograd::needs_grad({&x})) record_unary(op, x, out, p);
  return out;
}

Tensor& unary_inplace(const char* name, UnaryOp op, Tensor& x, ElementwiseParams p = {}) {
  EMBER_RECORD_OP(name, &x);
  check_no_internal_overlap(name, x);
  DType ct = compute_dtype(name, op_info(op).dtypes, x.dtype());
  if (ct != x.dtype()) {
    throw TypeError(op_prefix(name) + "result type " + std::string(dtype_name(ct)) +
                    " can't be cast to the desired output type " +
                    std::string(dtype_name(x.dtype())));
  }
  return autograd::inplace(
      name, x, {},
      [&] {
        if (x.storage()) x.storage()->bump_version();
        if (x.numel() > 0) backend(x.device()).unary(op, x, x, p);
      },
      [&](const Tensor& s) { return unary_op(name, op, s, p); }, grad_reads_inputs(op_info(op)));
}

}  // namespace

namespace {

// The autocast row of a unary op, where autocast has one (ops/autocast_ops.def).
std::optional<autocast::Op> autocast_row(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
      return autocast::Op::exp;
    case UnaryOp::Expm1:
      return autocast::Op::expm1;
    case UnaryOp::Log:
      return autocast::Op::log;
    case UnaryOp::Log2:
      return autocast::Op::log2;
    case UnaryOp::Log1p:
      return autocast::Op::log1p;
    case UnaryOp::Reciprocal:
      return autocast::Op::reciprocal;
    case UnaryOp::Rsqrt:
      return autocast::Op::rsqrt;
    case UnaryOp::Tan:
      return autocast::Op::tan;
    case UnaryOp::Softplus:
      return autocast::Op::softplus;
    default:
      return std::nullopt;
  }
}

// A public unary function: autocast's cast (when its row applies), then the op.
Tensor unary_public(const char* name, UnaryOp op, const Tensor& x, ElementwiseParams p = {}) {
  const std::optional<autocast::Op> row = autocast_row(op);
  if (row && autocast::active(*row, x)) {
    autocast::Scope s(*row, x, {x});
    return unary_op(name, op, s[0], p);
  }
  return unary_op(name, op, x, p);
}

}  // namespace

// The public function of every row whose api is Fn: `Tensor name(const Tensor& x)`.
#define EMBER_UNARY_API_Fn(Enum, name) \
  Tensor name(const Tensor& x) { return unary_public(#name, UnaryOp::Enum, x); }
#define EMBER_UNARY_API_Custom(Enum, name)
#define EMBER_UNARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_UNARY_API_##api(Enum, name)
#include "kernels/elementwise_ops.def"
#undef EMBER_UNARY_API_Fn
#undef EMBER_UNARY_API_Custom

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "none") return unary_op("gelu", UnaryOp::Gelu, x);
  if (approximate == "tanh") return unary_op("gelu", UnaryOp::GeluTanh, x);
  throw ValueError("[gelu] approximate must be 'none' or 'tanh', got '" + approximate + "'");
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  return unary_public("softplus", UnaryOp::Softplus, x, {beta, threshold});
}

Tensor elu(const Tensor& x, double alpha) { return unary_op("elu", UnaryOp::Elu, x, {alpha}); }

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return unary_op("leaky_relu", UnaryOp::LeakyRelu, x, {negative_slope});
}

// ---- binary -------------------------------------------------------------------------------------

namespace {

struct BinaryPlan {
  DType compute;
  DType out;
  Device device;
  Shape shape;
};

BinaryPlan plan_binary(const char* name, BinaryOp op, const Tensor& a, const Tensor& b,
                       DType common) {
  BinaryPlan pl;
  pl.device = common_device(name, {&a, &b});
  pl.shape = broadcast_shapes(name, a.sizes(), b.sizes());
  DType ct = compute_dtype(name, op_info(op).dtypes, common);
  if (op == BinaryOp::Sub && ct == kBool) {
    throw TypeError(op_prefix(name) +
                    "Subtraction, the `-` operator, with two bool tensors is not supported. "
                    "Use the `^` or `logical_xor()` operator instead.");
  }
  pl.compute = ct;
  pl.out = returns_bool(op) ? kBool : ct;
  return pl;
}

// True when any element of a bool tensor is set (one scalar comes back from the device).
bool any_true(const Tensor& mask) { return mask.numel() > 0 && mask.any().item<bool>(); }

void check_integer_divisor(const char* name, BinaryOp op, DType ct, const Tensor& b) {
  bool int_div = is_integral(ct, true) && op_info(op).dtypes == DTypeClass::Division;
  if (int_div && b.is_cpu() && b.numel() > 0 && any_true(eq(b, 0))) {
    throw ValueError(op_prefix(name) + "ZeroDivisionError: integer division by zero");
  }
}

Tensor binary_into(const char* name, BinaryOp op, const BinaryPlan& pl, const Tensor& a,
                   const Tensor& b, const ElementwiseParams& p, Tensor out) {
  Tensor x = to_operand(a, pl.compute, pl.device).expand(pl.shape);
  Tensor y = to_operand(b, pl.compute, pl.device).expand(pl.shape);
  check_integer_divisor(name, op, pl.compute, y);
  if (out.numel() > 0) backend(pl.device).binary(op, out, x, y, p);
  return out;
}

Tensor binary_planned(const char* name, BinaryOp op, const BinaryPlan& pl, const Tensor& a,
                      const Tensor& b, const ElementwiseParams& p) {
  if (!autograd::needs_grad({&a, &b})) {
    return binary_into(name, op, pl, a, b, p, make_empty(pl.shape, pl.out, pl.device, false, name));
  }
  Tensor out = autograd::no_grad([&] {
    return binary_into(name, op, pl, a, b, p, make_empty(pl.shape, pl.out, pl.device, false, name));
  });
  record_binary(op, a, b, out, p);
  return out;
}

Tensor binary_op(const char* name, BinaryOp op, const Tensor& a, const Tensor& b,
                 ElementwiseParams p = {1.0}) {
  EMBER_RECORD_OP(name, &a, &b);
  if (!a.defined() || !b.defined())
    throw ValueError(op_prefix(name) + "an input tensor is undefined");
  BinaryPlan pl = plan_binary(name, op, a, b, result_type(a, b));
  return binary_planned(name, op, pl, a, b, p);
}

Tensor binary_op(const char* name, BinaryOp op, const Tensor& a, Scalar s,
                 ElementwiseParams p = {1.0}) {
  EMBER_RECORD_OP(name, &a);
  if (!a.defined()) throw ValueError(op_prefix(name) + "the input tensor is undefined");
  DType common = result_type(a, s);
  Tensor b = scalar_tensor(s, TensorOptions().dtype(common).device(a.device()));
  BinaryPlan pl = plan_binary(name, op, a, b, common);
  return binary_planned(name, op, pl, a, b, p);
}

// In place: self is the output; the broadcast shape must be self's and the result dtype must be
// castable to self's dtype.
Tensor& binary_inplace_raw(const char* name, BinaryOp op, Tensor& self, const Tensor& other,
                           DType common, ElementwiseParams p) {
  BinaryPlan pl = plan_binary(name, op, self, other, common);
  if (pl.shape != self.sizes()) {
    throw ValueError(op_prefix(name) + "output with shape " + shape_str(self) +
                     " doesn't match the broadcast shape " + shape_str(pl.shape));
  }
  if (pl.device != self.device()) {
    throw Error(op_prefix(name) +
                "Expected all tensors to be on the same device, but found at least two devices, " +
                self.device().str() + " and " + pl.device.str() + "!");
  }
  if (!can_cast(pl.out, self.dtype())) {
    throw TypeError(op_prefix(name) + "result type " + std::string(dtype_name(pl.out)) +
                    " can't be cast to the desired output type " +
                    std::string(dtype_name(self.dtype())));
  }
  if (pl.out == self.dtype() && !other.is_same_storage(self)) {
    if (self.storage()) self.storage()->bump_version();
    binary_into(name, op, pl, self, other, p, self);
  } else {
    self.copy_(binary_into(name, op, pl, self, other, p,
                           make_empty(pl.shape, pl.out, pl.device, false, name)));
  }
  return self;
}

Tensor& binary_inplace(const char* name, BinaryOp op, Tensor& self, const Tensor& other,
                       DType common, ElementwiseParams p) {
  check_no_internal_overlap(name, self);
  return autograd::inplace(
      name, self, {&other}, [&] { binary_inplace_raw(name, op, self, other, common, p); },
      [&](const Tensor& s) {
        BinaryPlan pl = plan_binary(name, op, s, other, common);
        return binary_planned(name, op, pl, s, other, p);
      },
      grad_reads_inputs(op_info(op)));
}

Tensor& binary_inplace(const char* name, BinaryOp op, Tensor& self, const Tensor& other,
                       ElementwiseParams p = {1.0}) {
  return binary_inplace(name, op, self, other, result_type(self, other), p);
}

Tensor& binary_inplace(const char* name, BinaryOp op, Tensor& self, Scalar s,
                       ElementwiseParams p = {1.0}) {
  DType common = result_type(self, s);
  Tensor b = scalar_tensor(s, TensorOptions().dtype(common).device(self.device()));
  return binary_inplace(name, op, self, b, common, p);
}

BinaryOp div_op(const std::string& mode) {
  if (mode.empty()) return BinaryOp::Div;
  if (mode == "trunc") return BinaryOp::DivTrunc;
  if (mode == "floor") return BinaryOp::DivFloor;
  throw ValueError(
      "[div] expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + mode +
      "'");
}

void check_alpha(const char* name, DType t, Scalar alpha) {
  if (!is_floating_point(t) && alpha.is_floating_point()) {
    throw TypeError(op_prefix(name) +
                    "for integral input tensors, argument alpha must not be a "
                    "floating point number.");
  }
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  check_alpha("add", result_type(a, b), alpha);
  return binary_op("add", BinaryOp::Add, a, b, {alpha.to_double()});
}
Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  check_alpha("add", result_type(a, b), alpha);
  return binary_op("add", BinaryOp::Add, a, b, {alpha.to_double()});
}
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  check_alpha("sub", result_type(a, b), alpha);
  return binary_op("sub", BinaryOp::Sub, a, b, {alpha.to_double()});
}
Tensor sub(const Tensor& a, Scalar b, Scalar alpha) {
  check_alpha("sub", result_type(a, b), alpha);
  return binary_op("sub", BinaryOp::Sub, a, b, {alpha.to_double()});
}
Tensor rsub(const Tensor& a, Scalar b, Scalar alpha) {
  DType t = result_type(a, b);
  check_alpha("rsub", t, alpha);
  Tensor s = scalar_tensor(b, TensorOptions().dtype(t).device(a.device()));
  return binary_op("rsub", BinaryOp::Sub, s, a, {alpha.to_double()});
}
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op("mul", BinaryOp::Mul, a, b); }
Tensor mul(const Tensor& a, Scalar b) { return binary_op("mul", BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b, const std::string& mode) {
  return binary_op("div", div_op(mode), a, b);
}
Tensor div(const Tensor& a, Scalar b, const std::string& mode) {
  return binary_op("div", div_op(mode), a, b);
}
Tensor div(Scalar a, const Tensor& b, const std::string& mode) {
  Tensor s = scalar_tensor(a, TensorOptions().dtype(result_type(b, a)).device(b.device()));
  return binary_op("div", div_op(mode), s, b);
}
Tensor pow(const Tensor& a, const Tensor& b) {
  if (autocast::active(autocast::Op::pow, a)) {
    autocast::Scope s(autocast::Op::pow, a, {a, b});
    return binary_op("pow", BinaryOp::Pow, s[0], s[1]);
  }
  return binary_op("pow", BinaryOp::Pow, a, b);
}
Tensor pow(const Tensor& a, Scalar e) {
  if (autocast::active(autocast::Op::pow, a)) {
    autocast::Scope s(autocast::Op::pow, a, {a});
    return pow(s[0], e);
  }
  DType t = result_type(a, e);
  if (!is_floating_point(t) && e.to_long() < 0) {
    throw ValueError("[pow] Integers to negative integer powers are not allowed.");
  }
  if (t == kBool) t = kInt64;
  Tensor in = to_operand(a, t, a.device());
  Tensor out = make_empty(a.sizes(), t, a.device(), false, "pow");
  if (out.numel() > 0) backend(a.device()).unary(UnaryOp::PowScalar, out, in, {e.to_double()});
  if (autograd::needs_grad({&a})) record_unary(UnaryOp::PowScalar, a, out, {e.to_double()});
  return out;
}
Tensor pow(Scalar a, const Tensor& b) {
  if (autocast::active(autocast::Op::pow, b)) {
    autocast::Scope s(autocast::Op::pow, b, {b});
    return pow(a, s[0]);
  }
  Tensor s = scalar_tensor(a, TensorOptions().dtype(result_type(b, a)).device(b.device()));
  return binary_op("pow", BinaryOp::Pow, s, b);
}

namespace {

// A public binary function: autocast's promotion (atan2, the one binary row with a policy).
Tensor binary_public(const char* name, BinaryOp op, const Tensor& a, const Tensor& b) {
  if (op == BinaryOp::Atan2 && autocast::active(autocast::Op::atan2, a)) {
    autocast::Scope s(autocast::Op::atan2, a, {a, b});
    return binary_op(name, op, s[0], s[1]);
  }
  return binary_op(name, op, a, b);
}

}  // namespace

// The public functions of every row whose api is Fn (`Tensor name(const Tensor&, const Tensor&)`)
// or FnScalar (also `Tensor name(const Tensor&, Scalar)`).
#define EMBER_BINARY_API_Fn(Enum, name)                \
  Tensor name(const Tensor& a, const Tensor& b) {      \
    return binary_public(#name, BinaryOp::Enum, a, b); \
  }
#define EMBER_BINARY_API_FnScalar(Enum, name)                              \
  EMBER_BINARY_API_Fn(Enum, name) Tensor name(const Tensor& a, Scalar b) { \
    return binary_op(#name, BinaryOp::Enum, a, b);                         \
  }
#define EMBER_BINARY_API_Custom(Enum, name)
#define EMBER_BINARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_BINARY_API_##api(Enum, name)
#include "kernels/elementwise_ops.def"
#undef EMBER_BINARY_API_Fn
#undef EMBER_BINARY_API_FnScalar
#undef EMBER_BINARY_API_Custom

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  if (a.dtype() != b.dtype()) {
    throw TypeError("[isclose] expected both tensors to have the same dtype, got " +
                    std::string(dtype_name(a.dtype())) + " and " +
                    std::string(dtype_name(b.dtype())));
  }
  if (!is_floating_point(a.dtype())) return eq(a, b);
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  Tensor close = le(abs(sub(x, y)), add(abs(y).mul(rtol), atol));
  close = logical_or(close, eq(x, y));  // equal infinities
  if (equal_nan) close = logical_or(close, logical_and(isnan(x), isnan(y)));
  return close;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return !any_true(logical_not(isclose(a, b, rtol, atol, equal_nan)));
}

bool equal(const Tensor& a, const Tensor& b) {
  common_device("equal", {&a, &b});
  if (a.sizes() != b.sizes()) return false;
  if (a.numel() == 0) return true;
  return !any_true(ne(a, b));
}

// ---- ternary ------------------------------------------------------------------------------------

namespace {

Tensor ternary_raw(const char* name, TernaryOp op, const Tensor& a, const Tensor& b,
                   const Tensor& c, DType ct, ElementwiseParams p) {
  Device dev = common_device(name, {&a, &b, &c});
  ct = compute_dtype(name, op_info(op).dtypes, ct);
  Shape shape = broadcast_shapes(name, broadcast_shapes(name, a.sizes(), b.sizes()), c.sizes());
  Tensor x = to_operand(a, ct, dev).expand(shape);
  Tensor y = to_operand(b, ct, dev).expand(shape);
  Tensor z = to_operand(c, ct, dev).expand(shape);
  Tensor out = make_empty(shape, ct, dev, false, name);
  if (out.numel() > 0) backend(dev).ternary(op, out, x, y, z, p);
  return out;
}

Tensor ternary_op(const char* name, TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c,
                  DType ct, ElementwiseParams p) {
  if (!autograd::needs_grad({&a, &b, &c})) return ternary_raw(name, op, a, b, c, ct, p);
  Tensor out = autograd::no_grad([&] { return ternary_raw(name, op, a, b, c, ct, p); });
  record_ternary(op, a, b, c, out, p);
  return out;
}

DType result_type3(const Tensor& a, const Tensor& b, const Tensor& c) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  s.add(c);
  return s.result();
}

}  // namespace

// The public function of every row whose api is Fn (`Tensor name(x, y, z)`).
#define EMBER_TERNARY_API_Fn(Enum, name)                                           \
  Tensor name(const Tensor& x, const Tensor& y, const Tensor& z) {                 \
    return ternary_op(#name, TernaryOp::Enum, x, y, z, result_type3(x, y, z), {}); \
  }
#define EMBER_TERNARY_API_Custom(Enum, name)
#define EMBER_TERNARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_TERNARY_API_##api(Enum, name)
#include "kernels/elementwise_ops.def"
#undef EMBER_TERNARY_API_Fn
#undef EMBER_TERNARY_API_Custom

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  if (autograd::needs_grad({&a, &b})) {
    Tensor out = autograd::no_grad([&] { return where(cond, a, b); });
    record_where(cond, a, b, out);
    return out;
  }
  if (cond.dtype() != kBool && cond.dtype() != kUInt8) {
    throw TypeError(
        "[where] expected condition to be a boolean tensor, but got a tensor with dtype " +
        std::string(dtype_name(cond.dtype())));
  }
  Device dev = common_device("where", {&cond, &a, &b});
  DType ct = result_type(a, b);
  Shape shape =
      broadcast_shapes("where", broadcast_shapes("where", cond.sizes(), a.sizes()), b.sizes());
  Tensor c = to_operand(cond, kBool, dev).expand(shape);
  Tensor x = to_operand(a, ct, dev).expand(shape);
  Tensor y = to_operand(b, ct, dev).expand(shape);
  Tensor out = make_empty(shape, ct, dev, false, "where");
  if (out.numel() > 0) backend(dev).where(out, c, x, y);
  return out;
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  return where(cond, a,
               scalar_tensor(b, TensorOptions().dtype(result_type(a, b)).device(a.device())));
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  return where(cond, scalar_tensor(a, TensorOptions().dtype(result_type(b, a)).device(b.device())),
               b);
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  if (!min && !max) throw ValueError("[clamp] At least one of 'min' or 'max' must not be None");
  ResultTypeState s;
  s.add(x);
  if (min) s.add(*min);
  if (max) s.add(*max);
  DType ct = s.result();
  if (ct == kBool) dtype_error("clamp", ct);
  ElementwiseParams p{min ? min->to_double() : 0.0, max ? max->to_double() : 0.0, min.has_value(),
                      max.has_value()};
  Tensor in = to_operand(x, ct, x.device());
  Tensor out = make_empty(x.sizes(), ct, x.device(), false, "clamp");
  if (out.numel() > 0) backend(x.device()).unary(UnaryOp::Clamp, out, in, p);
  if (autograd::needs_grad({&x})) record_unary(UnaryOp::Clamp, x, out, p);
  return out;
}

Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  if (!min && !max) throw ValueError("[clamp] At least one of 'min' or 'max' must not be None");
  Tensor lo = min ? *min : x, hi = max ? *max : x;
  ElementwiseParams p{0.0, 0.0, min.has_value(), max.has_value()};
  return ternary_op("clamp", TernaryOp::Clamp, x, lo, hi, result_type3(x, lo, hi), p);
}

Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  Tensor w = scalar_tensor(weight, TensorOptions().dtype(start.dtype()).device(start.device()));
  return lerp(start, end, w);
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  if (!is_floating_point(start.dtype()) || start.dtype() != end.dtype()) {
    throw TypeError("[lerp] expected start and end to be floating tensors of the same dtype, got " +
                    std::string(dtype_name(start.dtype())) + " and " +
                    std::string(dtype_name(end.dtype())));
  }
  return ternary_op("lerp", TernaryOp::Lerp, start, end, weight, start.dtype(), {});
}

Tensor addcmul(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  if (autocast::active(autocast::Op::addcmul, x)) {
    autocast::Scope s(autocast::Op::addcmul, x, {x, t1, t2});
    return addcmul(s[0], s[1], s[2], value);
  }
  return ternary_op("addcmul", TernaryOp::Addcmul, x, t1, t2, result_type3(x, t1, t2),
                    {value.to_double()});
}

Tensor addcdiv(const Tensor& x, const Tensor& t1, const Tensor& t2, Scalar value) {
  if (autocast::active(autocast::Op::addcdiv, x)) {
    autocast::Scope s(autocast::Op::addcdiv, x, {x, t1, t2});
    return addcdiv(s[0], s[1], s[2], value);
  }
  DType ct = result_type3(x, t1, t2);
  if (!is_floating_point(t1.dtype()) && !is_floating_point(t2.dtype())) {
    throw TypeError(
        "[addcdiv] Integer division with addcdiv is no longer supported; use "
        "addcmul(input, tensor1, reciprocal(tensor2)) or floats");
  }
  return ternary_op("addcdiv", TernaryOp::Addcdiv, x, t1, t2, ct, {value.to_double()});
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  return masked_fill(x, mask,
                     scalar_tensor(value, TensorOptions().dtype(x.dtype()).device(x.device())));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  if (mask.dtype() != kBool) {
    throw TypeError("[masked_fill] expected a bool mask, got dtype " +
                    std::string(dtype_name(mask.dtype())));
  }
  if (value.dim() != 0) {
    throw ValueError(
        "[masked_fill] only supports a 0-dimensional value tensor, but got tensor with " +
        std::to_string(value.dim()) + " dimension(s).");
  }
  Shape s = broadcast_shapes("masked_fill", x.sizes(), mask.sizes());
  if (s != x.sizes()) {
    throw ValueError("[masked_fill] mask of shape " + shape_str(mask) +
                     " cannot be broadcast to the input's shape " + shape_str(x));
  }
  return where(mask, value.to(x.dtype()), x);
}

// ---- Tensor members -----------------------------------------------------------------------------

namespace {
// In-place ops built from their out-of-place form: the result must keep self's shape and be
// castable to self's dtype.
void check_inplace_result(const char* name, const Tensor& self, const Tensor& result) {
  if (result.sizes() != self.sizes()) {
    throw ValueError(op_prefix(name) + "output with shape " + shape_str(self) +
                     " doesn't match the broadcast shape " + shape_str(result));
  }
  if (!can_cast(result.dtype(), self.dtype())) {
    throw TypeError(op_prefix(name) + "result type " + std::string(dtype_name(result.dtype())) +
                    " can't be cast to the desired output type " +
                    std::string(dtype_name(self.dtype())));
  }
}

// f(self) is the op out of place; its formula may read self, so autograd hands it a clone.
template <class F>
Tensor& copy_checked_inplace(const char* name, Tensor& self,
                             std::initializer_list<const Tensor*> others, F&& f) {
  check_no_internal_overlap(name, self);
  return autograd::inplace(
      name, self, others,
      [&] {
        Tensor r = f(self);
        check_inplace_result(name, self, r);
        self.copy_(r);
      },
      [&](const Tensor& s) {
        Tensor r = f(s);
        check_inplace_result(name, self, r);
        return r;
      },
      true);
}
}  // namespace

#define EMBER_MEMBER0(fn) \
  Tensor Tensor::fn() const { return ember::fn(*this); }
EMBER_MEMBER0(neg)
EMBER_MEMBER0(abs)
EMBER_MEMBER0(sign)
EMBER_MEMBER0(exp)
EMBER_MEMBER0(exp2)
EMBER_MEMBER0(log)
EMBER_MEMBER0(log2)
EMBER_MEMBER0(log1p)
EMBER_MEMBER0(expm1)
EMBER_MEMBER0(sqrt)
EMBER_MEMBER0(rsqrt)
EMBER_MEMBER0(reciprocal)
EMBER_MEMBER0(sin)
EMBER_MEMBER0(cos)
EMBER_MEMBER0(tan)
EMBER_MEMBER0(tanh)
EMBER_MEMBER0(sigmoid)
EMBER_MEMBER0(erf)
EMBER_MEMBER0(relu)
EMBER_MEMBER0(floor)
EMBER_MEMBER0(ceil)
EMBER_MEMBER0(round)
EMBER_MEMBER0(trunc)
EMBER_MEMBER0(logical_not)
EMBER_MEMBER0(bitwise_not)
#undef EMBER_MEMBER0

Tensor Tensor::add(const Tensor& o, Scalar alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::add(Scalar o, Scalar alpha) const { return ember::add(*this, o, alpha); }
Tensor Tensor::sub(const Tensor& o, Scalar alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::sub(Scalar o, Scalar alpha) const { return ember::sub(*this, o, alpha); }
Tensor Tensor::mul(const Tensor& o) const { return ember::mul(*this, o); }
Tensor Tensor::mul(Scalar o) const { return ember::mul(*this, o); }
Tensor Tensor::div(const Tensor& o, const std::string& m) const { return ember::div(*this, o, m); }
Tensor Tensor::div(Scalar o, const std::string& m) const { return ember::div(*this, o, m); }
Tensor Tensor::pow(const Tensor& e) const { return ember::pow(*this, e); }
Tensor Tensor::pow(Scalar e) const { return ember::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return ember::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return ember::minimum(*this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return ember::fmod(*this, o); }
Tensor Tensor::fmod(Scalar o) const { return ember::fmod(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return ember::remainder(*this, o); }
Tensor Tensor::remainder(Scalar o) const { return ember::remainder(*this, o); }
Tensor Tensor::atan2(const Tensor& o) const { return ember::atan2(*this, o); }
Tensor Tensor::logaddexp(const Tensor& o) const { return ember::logaddexp(*this, o); }
Tensor Tensor::logaddexp2(const Tensor& o) const { return ember::logaddexp2(*this, o); }
#define EMBER_MEMBER_CMP(fn)                                               \
  Tensor Tensor::fn(const Tensor& o) const { return ember::fn(*this, o); } \
  Tensor Tensor::fn(Scalar o) const { return ember::fn(*this, o); }
EMBER_MEMBER_CMP(eq)
EMBER_MEMBER_CMP(ne)
EMBER_MEMBER_CMP(lt)
EMBER_MEMBER_CMP(le)
EMBER_MEMBER_CMP(gt)
EMBER_MEMBER_CMP(ge)
#undef EMBER_MEMBER_CMP
Tensor Tensor::logical_and(const Tensor& o) const { return ember::logical_and(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return ember::logical_or(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return ember::logical_xor(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return ember::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return ember::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return ember::bitwise_xor(*this, o); }
Tensor Tensor::clamp(std::optional<Scalar> mn, std::optional<Scalar> mx) const {
  return ember::clamp(*this, mn, mx);
}
Tensor Tensor::lerp(const Tensor& e, Scalar w) const { return ember::lerp(*this, e, w); }
Tensor Tensor::lerp(const Tensor& e, const Tensor& w) const { return ember::lerp(*this, e, w); }
Tensor Tensor::addcmul(const Tensor& a, const Tensor& b, Scalar v) const {
  return ember::addcmul(*this, a, b, v);
}
Tensor Tensor::addcdiv(const Tensor& a, const Tensor& b, Scalar v) const {
  return ember::addcdiv(*this, a, b, v);
}
Tensor Tensor::masked_fill(const Tensor& m, Scalar v) const {
  return ember::masked_fill(*this, m, v);
}
Tensor Tensor::masked_fill(const Tensor& m, const Tensor& v) const {
  return ember::masked_fill(*this, m, v);
}

// In place.
Tensor& Tensor::add_(const Tensor& o, Scalar alpha) {
  check_alpha("add_", dtype(), alpha);
  return binary_inplace("add_", BinaryOp::Add, *this, o, {alpha.to_double()});
}
Tensor& Tensor::add_(Scalar o, Scalar alpha) {
  check_alpha("add_", dtype(), alpha);
  return binary_inplace("add_", BinaryOp::Add, *this, o, {alpha.to_double()});
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha) {
  check_alpha("sub_", dtype(), alpha);
  return binary_inplace("sub_", BinaryOp::Sub, *this, o, {alpha.to_double()});
}
Tensor& Tensor::sub_(Scalar o, Scalar alpha) {
  check_alpha("sub_", dtype(), alpha);
  return binary_inplace("sub_", BinaryOp::Sub, *this, o, {alpha.to_double()});
}
Tensor& Tensor::mul_(const Tensor& o) { return binary_inplace("mul_", BinaryOp::Mul, *this, o); }
Tensor& Tensor::mul_(Scalar o) { return binary_inplace("mul_", BinaryOp::Mul, *this, o); }
Tensor& Tensor::div_(const Tensor& o, const std::string& m) {
  return binary_inplace("div_", div_op(m), *this, o);
}
Tensor& Tensor::div_(Scalar o, const std::string& m) {
  return binary_inplace("div_", div_op(m), *this, o);
}
Tensor& Tensor::pow_(Scalar e) {
  return copy_checked_inplace("pow_", *this, {}, [&](const Tensor& s) { return ember::pow(s, e); });
}
Tensor& Tensor::neg_() { return unary_inplace("neg_", UnaryOp::Neg, *this); }
Tensor& Tensor::abs_() { return unary_inplace("abs_", UnaryOp::Abs, *this); }
Tensor& Tensor::exp_() { return unary_inplace("exp_", UnaryOp::Exp, *this); }
Tensor& Tensor::log_() { return unary_inplace("log_", UnaryOp::Log, *this); }
Tensor& Tensor::sqrt_() { return unary_inplace("sqrt_", UnaryOp::Sqrt, *this); }
Tensor& Tensor::relu_() { return unary_inplace("relu_", UnaryOp::Relu, *this); }
Tensor& Tensor::sigmoid_() { return unary_inplace("sigmoid_", UnaryOp::Sigmoid, *this); }
Tensor& Tensor::tanh_() { return unary_inplace("tanh_", UnaryOp::Tanh, *this); }
Tensor& Tensor::clamp_(std::optional<Scalar> mn, std::optional<Scalar> mx) {
  return copy_checked_inplace("clamp_", *this, {},
                              [&](const Tensor& s) { return ember::clamp(s, mn, mx); });
}
Tensor& Tensor::lerp_(const Tensor& e, Scalar w) {
  return copy_checked_inplace("lerp_", *this, {&e},
                              [&](const Tensor& s) { return ember::lerp(s, e, w); });
}
Tensor& Tensor::addcmul_(const Tensor& a, const Tensor& b, Scalar v) {
  return copy_checked_inplace("addcmul_", *this, {&a, &b},
                              [&](const Tensor& s) { return ember::addcmul(s, a, b, v); });
}
Tensor& Tensor::addcdiv_(const Tensor& a, const Tensor& b, Scalar v) {
  return copy_checked_inplace("addcdiv_", *this, {&a, &b},
                              [&](const Tensor& s) { return ember::addcdiv(s, a, b, v); });
}
Tensor& Tensor::masked_fill_(const Tensor& m, Scalar v) {
  return copy_checked_inplace("masked_fill_", *this, {},
                              [&](const Tensor& s) { return ember::masked_fill(s, m, v); });
}

// ---- operators ----------------------------------------------------------------------------------

Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator-(Scalar a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator/(Scalar a, const Tensor& b) { return div(a, b); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, Scalar b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, Scalar b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, Scalar b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, Scalar b) { return a.div_(b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator==(const Tensor& a, Scalar b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator!=(const Tensor& a, Scalar b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<(const Tensor& a, Scalar b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator<=(const Tensor& a, Scalar b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>(const Tensor& a, Scalar b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator>=(const Tensor& a, Scalar b) { return ge(a, b); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }

}  // namespace ember
