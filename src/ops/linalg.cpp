// Matrix products: mm, bmm, matmul, addmm, linear, dot, outer. Every one checks its arguments,
// brings the operands to (B, n, k) @ (B, k, m) views and hands them to the backend's gemm.
#include "autograd/function.h"
#include "core/record_scope.h"
#include "ops/autocast.h"
#include "ops/linalg_grad.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

// ---- messages -----------------------------------------------------------------------------------

// The C++ type names PyTorch prints in its matmul dtype checks ("float != double").
const char* cpp_type_name(DType t) {
  switch (t) {
    case kBool:
      return "bool";
    case kUInt8:
      return "unsigned char";
    case kInt8:
      return "signed char";
    case kInt32:
      return "int";
    case kInt64:
      return "long int";
    case kFloat16:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat32:
      return "float";
    case kFloat64:
      return "double";
  }
  return "unknown";
}

// PyTorch's ScalarType names ("Float", "Long"), used by dot's message.
const char* scalar_type_name(DType t) {
  switch (t) {
    case kBool:
      return "Bool";
    case kUInt8:
      return "Byte";
    case kInt8:
      return "Char";
    case kInt32:
      return "Int";
    case kInt64:
      return "Long";
    case kFloat16:
      return "Half";
    case kBFloat16:
      return "BFloat16";
    case kFloat32:
      return "Float";
    case kFloat64:
      return "Double";
  }
  return "Unknown";
}

// "2x3"
std::string dims_str(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (!t->defined()) throw ValueError(op_prefix(op) + "an input tensor is undefined");
  }
}

[[noreturn]] void not_multipliable(const char* op, int64_t n, int64_t k, int64_t k2, int64_t m) {
  throw ValueError(op_prefix(op) + "mat1 and mat2 shapes cannot be multiplied (" + dims_str(n, k) +
                   " and " + dims_str(k2, m) + ")");
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw TypeError(op_prefix(op) + "expected m1 and m2 to have the same dtype, but got: " +
                    cpp_type_name(a.dtype()) + " != " + cpp_type_name(b.dtype()));
  }
}

// Products are defined for every dtype but bool, as in PyTorch's CPU kernels.
void check_supported(const char* op, DType t) {
  if (t == kBool) {
    throw NotImplementedError(op_prefix(op) + "not implemented for dtype " +
                              std::string(dtype_name(t)));
  }
}

void check_matrix(const char* op, const char* what, const Tensor& t) {
  if (t.dim() != 2) {
    throw ValueError(op_prefix(op) + what + " must be a matrix, got " + std::to_string(t.dim()) +
                     "-D tensor of shape " + shape_str(t));
  }
}

// t must broadcast to target (as expand would), else PyTorch's expand message.
void check_broadcast_to(const char* op, const Tensor& t, const Shape& target) {
  const int64_t nd = t.dim(), nt = static_cast<int64_t>(target.size());
  if (nd > nt) {
    throw ValueError(op_prefix(op) + "the number of sizes provided (" + std::to_string(nt) +
                     ") must be greater or equal to the number of dimensions in the tensor (" +
                     std::to_string(nd) + "): cannot broadcast " + shape_str(t) + " to " +
                     shape_str(target));
  }
  for (int64_t i = 0; i < nd; ++i) {
    const int64_t have = t.size(i), want = target[nt - nd + i];
    if (have != 1 && have != want) {
      throw ValueError(op_prefix(op) + "The expanded size of the tensor (" + std::to_string(want) +
                       ") must match the existing size (" + std::to_string(have) +
                       ") at non-singleton dimension " + std::to_string(nt - nd + i) +
                       ".  Target sizes: " + shape_str(target) +
                       ".  Tensor sizes: " + shape_str(t));
    }
  }
}

// Product of the sizes before the last dim (the rows of t folded to 2-D).
int64_t leading_numel(const Tensor& t) {
  int64_t n = 1;
  for (int64_t i = 0; i + 1 < t.dim(); ++i) n *= t.size(i);
  return n;
}

// ---- the one path to the backend ----------------------------------------------------------------

// A bias that broadcasts to (*, m) by repeating one row of m values ((m), (1, m), ...): as that
// row it can be fused into the product. Undefined otherwise.
Tensor bias_row(const Tensor& bias, int64_t m) {
  if (!bias.defined() || bias.dim() == 0 || bias.size(-1) != m || bias.numel() != m) return {};
  return bias.reshape({m});
}

// out (n, m) = alpha * a (n, k) @ b (k, m) + row (m) added to every row, fused into the product
// when the backend can; false (out untouched) otherwise.
bool gemm_bias_2d(Device dev, const Tensor& out, const Tensor& a, const Tensor& b,
                  const Tensor& row, double alpha) {
  if (!row.defined()) return false;
  return backend(dev).gemm_bias(out.view({1, out.size(0), out.size(1)}), a.unsqueeze(0),
                                b.unsqueeze(0), row, alpha);
}

// out (n, m) = alpha * a (n, k) @ b (k, m) + beta * input, input broadcast to (n, m). With no
// input, or beta == 0, out is not read (so NaN in input does not leak, as in PyTorch).
Tensor gemm_2d(const char* op, Device dev, const Tensor& a, const Tensor& b, const Tensor& input,
               double alpha, double beta, const Shape& out_shape) {
  Tensor out = make_empty(out_shape, a.dtype(), dev, false, op);
  if (out.numel() == 0) return out;
  Tensor a2 = to_operand(a, a.dtype(), dev), b2 = to_operand(b, b.dtype(), dev);
  // beta == 1 with a broadcast row is a bias the product's epilogue can add.
  if (beta == 1.0 && out.dim() == 2 &&
      gemm_bias_2d(dev, out, a2, b2, bias_row(input, out.size(1)), alpha)) {
    return out;
  }
  const bool use_input = input.defined() && beta != 0.0;
  if (use_input) out.copy_(input);
  backend(dev).gemm(out.view({1, a.size(0), b.size(1)}), a2.unsqueeze(0), b2.unsqueeze(0), alpha,
                    use_input ? beta : 0.0);
  return out;
}

// (B, n, k) @ (B, k, m) -> (B, n, m), operands already 3-D on dev.
Tensor gemm_3d(const char* op, Device dev, const Tensor& a, const Tensor& b) {
  Tensor out = make_empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), dev, false, op);
  if (out.numel() > 0) backend(dev).gemm(out, a, b, 1.0, 0.0);
  return out;
}

// Common checks of the two-operand products; returns the device they run on.
Device check_pair(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(op, {&a, &b});
  Device dev = common_device(op, {&a, &b});
  check_same_dtype(op, a, b);
  check_supported(op, a.dtype());
  return dev;
}

Tensor dot_impl(const char* op, const Tensor& a, const Tensor& b, Device dev) {
  if (a.numel() != b.numel()) {
    throw ValueError(op_prefix(op) + "inconsistent tensor size, expected tensor " + shape_str(a) +
                     " and src " + shape_str(b) + " to have the same number of elements, but got " +
                     std::to_string(a.numel()) + " and " + std::to_string(b.numel()) +
                     " elements respectively");
  }
  Tensor out = make_empty(Shape{}, a.dtype(), dev, false, op);
  backend(dev).gemm(out.view({1, 1, 1}), a.unsqueeze(0).unsqueeze(0), b.unsqueeze(0).unsqueeze(2),
                    1.0, 0.0);
  return out;
}

// matmul with a 3-D or higher operand: broadcast the batch dims, run one batched gemm.
Tensor matmul_batched(Device dev, const Tensor& a, const Tensor& b) {
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;  // (k) -> (1, k)
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;  // (k) -> (k, 1)
  const int64_t n = a2.size(-2), k = a2.size(-1), k2 = b2.size(-2), m = b2.size(-1);
  if (k != k2) {
    throw ValueError("[matmul] shapes " + shape_str(a) + " and " + shape_str(b) +
                     " cannot be multiplied (" + std::to_string(k) + " columns against " +
                     std::to_string(k2) + " rows)");
  }
  // Batch dims broadcast from the right.
  const int64_t na = a2.dim() - 2, nb = b2.dim() - 2, nbatch = std::max(na, nb);
  Shape batch(static_cast<size_t>(nbatch), 1);
  for (int64_t i = 0; i < nbatch; ++i) {
    const int64_t ia = i - (nbatch - na), ib = i - (nbatch - nb);
    const int64_t sa = ia >= 0 ? a2.size(ia) : 1, sb = ib >= 0 ? b2.size(ib) : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      throw ValueError("[matmul] The size of tensor a (" + std::to_string(sa) +
                       ") must match the size of tensor b (" + std::to_string(sb) +
                       ") at non-singleton dimension " + std::to_string(i) + " (shapes " +
                       shape_str(a) + " and " + shape_str(b) + ")");
    }
    batch[i] = sa == 1 ? sb : sa;
  }
  const int64_t nbatches = batch.numel();
  Shape ea = batch, eb = batch;
  ea.push_back(n);
  ea.push_back(k);
  eb.push_back(k);
  eb.push_back(m);
  // reshape keeps views where the broadcast allows and copies otherwise (as PyTorch does).
  Tensor a3 = to_operand(a2, a2.dtype(), dev).expand(ea).reshape({nbatches, n, k});
  Tensor b3 = to_operand(b2, b2.dtype(), dev).expand(eb).reshape({nbatches, k, m});
  Tensor out = gemm_3d("matmul", dev, a3, b3);
  Shape shape = batch;
  if (a.dim() > 1) shape.push_back(n);
  if (b.dim() > 1) shape.push_back(m);
  return out.view(shape);
}

}  // namespace

// ---- ops ----------------------------------------------------------------------------------------

Tensor mm(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_OP("mm", &a, &b);
  if (autocast::active(autocast::Op::mm, a)) {
    autocast::Scope s(autocast::Op::mm, a, {a, b});
    return mm(s[0], s[1]);
  }
  if (autograd::needs_grad({&a, &b})) return grad_ops::mm(a, b);
  Device dev = check_pair("mm", a, b);
  check_matrix("mm", "self", a);
  check_matrix("mm", "mat2", b);
  if (a.size(1) != b.size(0)) not_multipliable("mm", a.size(0), a.size(1), b.size(0), b.size(1));
  return gemm_2d("mm", dev, a, b, Tensor(), 1.0, 0.0, {a.size(0), b.size(1)});
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_OP("bmm", &a, &b);
  if (autocast::active(autocast::Op::bmm, a)) {
    autocast::Scope s(autocast::Op::bmm, a, {a, b});
    return bmm(s[0], s[1]);
  }
  if (autograd::needs_grad({&a, &b})) return grad_ops::bmm(a, b);
  Device dev = check_pair("bmm", a, b);
  if (a.dim() != 3) {
    throw ValueError("[bmm] batch1 must be a 3D tensor, got shape " + shape_str(a));
  }
  if (b.dim() != 3) {
    throw ValueError("[bmm] batch2 must be a 3D tensor, got shape " + shape_str(b));
  }
  if (b.size(0) != a.size(0) || b.size(1) != a.size(2)) {
    throw ValueError("[bmm] Expected size for first two dimensions of batch2 tensor to be: [" +
                     std::to_string(a.size(0)) + ", " + std::to_string(a.size(2)) + "] but got: [" +
                     std::to_string(b.size(0)) + ", " + std::to_string(b.size(1)) + "] (shapes " +
                     shape_str(a) + " and " + shape_str(b) + ")");
  }
  return gemm_3d("bmm", dev, to_operand(a, a.dtype(), dev), to_operand(b, b.dtype(), dev));
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_RECORD_OP("matmul", &a, &b);
  if (autocast::active(autocast::Op::matmul, a)) {
    autocast::Scope s(autocast::Op::matmul, a, {a, b});
    return matmul(s[0], s[1]);
  }
  if (autograd::needs_grad({&a, &b})) return grad_ops::matmul(a, b);
  check_defined("matmul", {&a, &b});
  const int64_t da = a.dim(), db = b.dim();
  if (da == 0 || db == 0) {
    throw ValueError("[matmul] both arguments to matmul need to be at least 1D, but they are " +
                     std::to_string(da) + "D and " + std::to_string(db) + "D");
  }
  Device dev = check_pair("matmul", a, b);
  if (da == 1 && db == 1) return dot_impl("matmul", a, b, dev);
  if (da == 2 && db == 1) {
    if (a.size(1) != b.size(0)) {
      throw ValueError("[matmul] size mismatch, got input (" + std::to_string(a.size(0)) +
                       "), mat (" + dims_str(a.size(0), a.size(1)) + "), vec (" +
                       std::to_string(b.size(0)) + ")");
    }
    return gemm_2d("matmul", dev, a, b.unsqueeze(1), Tensor(), 1.0, 0.0, {a.size(0)});
  }
  if (da == 1 && db == 2) {
    if (a.size(0) != b.size(0)) not_multipliable("matmul", 1, a.size(0), b.size(0), b.size(1));
    return gemm_2d("matmul", dev, a.unsqueeze(0), b, Tensor(), 1.0, 0.0, {b.size(1)});
  }
  if (da == 2 && db == 2) {
    if (a.size(1) != b.size(0)) {
      not_multipliable("matmul", a.size(0), a.size(1), b.size(0), b.size(1));
    }
    return gemm_2d("matmul", dev, a, b, Tensor(), 1.0, 0.0, {a.size(0), b.size(1)});
  }
  if (da >= 3 && db <= 2) {
    // A shared right operand: fold the batch into the rows, one (rows, k) @ (k, m) gemm.
    const int64_t k = a.size(-1), rows = leading_numel(a);
    const Tensor b2 = db == 1 ? b.unsqueeze(1) : b;
    if (b2.size(0) != k) {
      if (db == 1) {
        throw ValueError("[matmul] size mismatch, got input (" + std::to_string(rows) + "), mat (" +
                         dims_str(rows, k) + "), vec (" + std::to_string(b.size(0)) + ")");
      }
      not_multipliable("matmul", rows, k, b.size(0), b.size(1));
    }
    Shape shape(a.sizes().begin(), a.sizes().end() - 1);
    if (db == 2) shape.push_back(b.size(1));
    return gemm_2d("matmul", dev, a.reshape({rows, k}), b2, Tensor(), 1.0, 0.0, {rows, b2.size(1)})
        .view(shape);
  }
  return matmul_batched(dev, a, b);
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  EMBER_RECORD_OP("addmm", &input, &a, &b);
  if (autocast::active(autocast::Op::addmm, a)) {
    autocast::Scope s(autocast::Op::addmm, a, {input, a, b});
    return addmm(s[0], s[1], s[2], beta, alpha);
  }
  if (autograd::needs_grad({&input, &a, &b})) return grad_ops::addmm(input, a, b, beta, alpha);
  check_defined("addmm", {&input, &a, &b});
  Device dev = common_device("addmm", {&input, &a, &b});
  check_matrix("addmm", "mat1", a);
  check_matrix("addmm", "mat2", b);
  if (a.size(1) != b.size(0)) not_multipliable("addmm", a.size(0), a.size(1), b.size(0), b.size(1));
  check_same_dtype("addmm", a, b);
  if (input.dtype() != a.dtype()) {
    throw TypeError("[addmm] self and mat2 must have the same dtype, but got " +
                    std::string(cpp_type_name(input.dtype())) + " and " + cpp_type_name(b.dtype()));
  }
  check_supported("addmm", a.dtype());
  if (!is_floating_point(a.dtype()) && (beta.is_floating_point() || alpha.is_floating_point())) {
    throw TypeError(std::string("[addmm] For integral input tensors, argument ") +
                    (beta.is_floating_point() ? "beta" : "alpha") +
                    " must not be a floating point number (dtype " +
                    std::string(dtype_name(a.dtype())) + ")");
  }
  const Shape shape{a.size(0), b.size(1)};
  check_broadcast_to("addmm", input, shape);
  return gemm_2d("addmm", dev, a, b, input, alpha.to_double(), beta.to_double(), shape);
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  EMBER_RECORD_OP("linear", &x, &weight, &bias);
  if (autocast::active(autocast::Op::linear, x)) {
    autocast::Scope s(autocast::Op::linear, x, {x, weight, bias});
    return linear(s[0], s[1], s[2]);
  }
  if (autograd::needs_grad({&x, &weight, &bias})) return grad_ops::linear(x, weight, bias);
  check_defined("linear", {&x, &weight});
  if (x.dim() == 0 || weight.dim() == 0) {
    throw ValueError("[linear] both arguments to linear need to be at least 1D, but they are " +
                     std::to_string(x.dim()) + "D and " + std::to_string(weight.dim()) + "D");
  }
  if (weight.dim() > 2) {
    throw ValueError("[linear] weight must be 1-D or 2-D, got shape " + shape_str(weight));
  }
  Device dev = bias.defined() ? common_device("linear", {&x, &weight, &bias})
                              : common_device("linear", {&x, &weight});
  check_same_dtype("linear", x, weight);
  if (bias.defined() && bias.dtype() != x.dtype()) {
    throw TypeError("[linear] bias must have the input's dtype, but got " +
                    std::string(cpp_type_name(bias.dtype())) + " and " + cpp_type_name(x.dtype()));
  }
  check_supported("linear", x.dtype());
  // x (*, in) folds to (rows, in); weight (out, in) is read transposed in place.
  const int64_t in = x.size(-1), rows = leading_numel(x);
  const Tensor wt = weight.dim() == 2 ? weight.t() : weight.unsqueeze(1);  // (in, out)
  if (wt.size(0) != in) not_multipliable("linear", rows, in, wt.size(0), wt.size(1));
  Shape shape(x.sizes().begin(), x.sizes().end() - 1);
  if (weight.dim() == 2) shape.push_back(weight.size(0));
  if (bias.defined()) check_broadcast_to("linear", bias, shape);
  Tensor out = make_empty(shape, x.dtype(), dev, false, "linear");
  if (out.numel() == 0) return out;
  const Tensor x2 = to_operand(x, x.dtype(), dev).reshape({rows, in});
  const Tensor wt2 = to_operand(wt, wt.dtype(), dev);
  const Tensor out2 = out.view({rows, wt.size(1)});
  // A bias over the output features goes into the product's epilogue where the backend has one.
  if (weight.dim() == 2 && gemm_bias_2d(dev, out2, x2, wt2, bias_row(bias, wt.size(1)), 1.0)) {
    return out;
  }
  if (bias.defined()) out.copy_(bias);
  backend(dev).gemm(out2.unsqueeze(0), x2.unsqueeze(0), wt2.unsqueeze(0), 1.0,
                    bias.defined() ? 1.0 : 0.0);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  if (autocast::active(autocast::Op::dot, a)) {
    autocast::Scope s(autocast::Op::dot, a, {a, b});
    return dot(s[0], s[1]);
  }
  if (autograd::needs_grad({&a, &b})) return grad_ops::dot(a, b);
  check_defined("dot", {&a, &b});
  Device dev = common_device("dot", {&a, &b});
  if (a.dim() != 1 || b.dim() != 1) {
    throw ValueError("[dot] 1D tensors expected, but got " + std::to_string(a.dim()) + "D and " +
                     std::to_string(b.dim()) + "D tensors");
  }
  if (a.dtype() != b.dtype()) {
    throw TypeError(std::string("[dot] expected both vectors to have same dtype, but found ") +
                    scalar_type_name(a.dtype()) + " and " + scalar_type_name(b.dtype()));
  }
  check_supported("dot", a.dtype());
  return dot_impl("dot", a, b, dev);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  check_defined("outer", {&a, &b});
  common_device("outer", {&a, &b});
  if (a.dim() != 1) {
    throw ValueError("[outer] Expected 1-D argument self, but got " + std::to_string(a.dim()) +
                     "-D");
  }
  if (b.dim() != 1) {
    throw ValueError("[outer] Expected 1-D argument vec2, but got " + std::to_string(b.dim()) +
                     "-D");
  }
  // An element-wise product, so dtypes promote and bool works, as in PyTorch.
  return mul(a.unsqueeze(1), b);
}

Tensor Tensor::mm(const Tensor& other) const { return ember::mm(*this, other); }
Tensor Tensor::bmm(const Tensor& other) const { return ember::bmm(*this, other); }
Tensor Tensor::matmul(const Tensor& other) const { return ember::matmul(*this, other); }

}  // namespace ember
