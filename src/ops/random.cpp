// Random ops: argument checks, one generator offset per call, then the backend's Philox kernels.
// Values depend only on (seed, offset, element index), never on strides, threads or device.
#include "ember/random.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "autograd/function.h"
#include "kernels/random_ops.h"
#include "ops/op_utils.h"

namespace ember {

namespace {

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string dt(DType t) { return std::string(dtype_name(t)); }

Generator generator_for(const char* op, Generator* g, Device device) {
  if (g == nullptr) return default_generator(device);
  if (g->device().type() != device.type()) {
    throw ValueError(op_prefix(op) + "expected a generator for device " + device.str() +
                     ", but got one for " + g->device().str());
  }
  return *g;
}

// Takes the call's offset and runs the kernel; every call advances the generator, even when
// the output is empty, so a stream's position depends only on how many calls were made.
void run(const char* op, RandomOp rop, const Tensor& out, const RandomParams& p, Generator* g) {
  // In place on a tensor in the graph: its history is replaced by a constant.
  const bool tracked = is_grad_enabled() && autograd::requires_grad(out);
  if (tracked) autograd::check_inplace(op, out);
  GeneratorState s = generator_for(op, g, out.device()).reserve(1);
  if (out.storage()) out.storage()->bump_version();
  if (out.numel() > 0) backend(out.device()).random(rop, out, s.seed, s.offset, p);
  if (tracked) {
    Tensor r = out.detach();
    autograd::record_constant("RandomBackward0", out, r);
    autograd::rebase_history(out, r);
  }
}

void check_defined(const char* op, const Tensor& t) {
  if (!t.defined()) throw ValueError(op_prefix(op) + "the tensor is undefined");
}

void check_float(const char* op, DType t) {
  if (!is_floating_point(t)) throw TypeError(op_prefix(op) + "not implemented for dtype " + dt(t));
}

double float_max(DType t) {
  switch (t) {
    case kFloat16:
      return 65504.0;
    case kBFloat16:
      return 3.3895313892515355e38;
    case kFloat32:
      return 3.4028234663852886e38;
    default:
      return std::numeric_limits<double>::max();
  }
}

// The integers a dtype holds exactly, as PyTorch's random_ bounds: [-2^digits, 2^digits] for
// floating dtypes.
std::pair<double, double> int_bounds(DType t) {
  switch (t) {
    case kBool:
      return {0.0, 1.0};
    case kUInt8:
      return {0.0, 255.0};
    case kInt8:
      return {-128.0, 127.0};
    case kInt32:
      return {-2147483648.0, 2147483647.0};
    case kInt64:
      return {-9223372036854775808.0, 9223372036854775807.0};
    case kFloat16:
      return {-2048.0, 2048.0};
    case kBFloat16:
      return {-256.0, 256.0};
    case kFloat32:
      return {-16777216.0, 16777216.0};
    default:
      return {-9007199254740992.0, 9007199254740992.0};
  }
}

// ---- checks, then fills ------------------------------------------------------------------------

void check_uniform(const char* op, DType t, double from, double to) {
  check_float(op, t);
  if (!std::isfinite(from) || !std::isfinite(to)) {
    throw ValueError(op_prefix(op) + "expects finite bounds, but got from=" + num(from) +
                     " and to=" + num(to));
  }
  if (from > to) {
    throw ValueError(op_prefix(op) +
                     "uniform_ expects to return a [from, to) range, but found from=" + num(from) +
                     " > to=" + num(to));
  }
  const double max = float_max(t);
  if (std::fabs(from) > max || std::fabs(to) > max) {
    throw ValueError(op_prefix(op) + "from=" + num(from) + " or to=" + num(to) +
                     " is out of bounds for dtype " + dt(t));
  }
  if (to - from > max) {
    throw ValueError(op_prefix(op) + "uniform_ expects to-from <= " + num(max) + " for dtype " +
                     dt(t) + ", but found to=" + num(to) + " and from=" + num(from));
  }
}

void check_normal(const char* op, DType t, double std) {
  check_float(op, t);
  if (!(std >= 0.0)) {
    throw ValueError(op_prefix(op) + "expects std >= 0.0, but found std=" + num(std));
  }
}

void check_bernoulli_p(const char* op, double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError(op_prefix(op) + "expects p to be in [0, 1], but got p=" + num(p));
  }
}

RandomParams randint_params(const char* op, DType t, int64_t low, int64_t high) {
  if (low >= high) {
    throw ValueError(op_prefix(op) + "random_ expects 'from' to be less than 'to', but got from=" +
                     std::to_string(low) + " >= to=" + std::to_string(high));
  }
  const auto [lo, hi] = int_bounds(t);
  // Structured bindings captured by copy: clang before 16 cannot capture them by reference.
  auto check = [&, lo = lo, hi = hi](const char* what, int64_t v) {
    if (static_cast<double>(v) < lo || static_cast<double>(v) > hi) {
      throw ValueError(op_prefix(op) + "random_ expects '" + what + "' to be in [" + num(lo) +
                       ", " + num(hi) + "] for dtype " + dt(t) + ", but got " + what + "=" +
                       std::to_string(v));
    }
  };
  // The int64 bounds are not exact as doubles; every int64 is in range for int64.
  if (t != kInt64) {
    check("from", low);
    check("to - 1", high - 1);
  }
  RandomParams p;
  p.low = low;
  p.range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  return p;
}

const Tensor& uniform_impl(const char* op, const Tensor& t, double from, double to, Generator* g) {
  check_defined(op, t);
  check_uniform(op, t.dtype(), from, to);
  check_no_internal_overlap(op, t);
  RandomParams p;
  p.a = from;
  p.b = to;
  run(op, RandomOp::Uniform, t, p, g);
  return t;
}

const Tensor& normal_impl(const char* op, const Tensor& t, double mean, double std, Generator* g) {
  check_defined(op, t);
  check_normal(op, t.dtype(), std);
  check_no_internal_overlap(op, t);
  RandomParams p;
  p.a = mean;
  p.b = std;
  run(op, RandomOp::Normal, t, p, g);
  return t;
}

const Tensor& bernoulli_impl(const char* op, const Tensor& t, double prob, Generator* g) {
  check_defined(op, t);
  check_bernoulli_p(op, prob);
  check_no_internal_overlap(op, t);
  RandomParams p;
  p.a = prob;
  run(op, RandomOp::Bernoulli, t, p, g);
  return t;
}

const Tensor& random_impl(const char* op, const Tensor& t, int64_t low, int64_t high,
                          Generator* g) {
  check_defined(op, t);
  RandomParams p = randint_params(op, t.dtype(), low, high);
  check_no_internal_overlap(op, t);
  run(op, RandomOp::RandInt, t, p, g);
  return t;
}

// ---- factories ----------------------------------------------------------------------------------

Tensor rand_impl(const Shape& size, TensorOptions o, Generator* g) {
  check_uniform("rand", o.dtype(), 0.0, 1.0);
  Tensor t = empty(size, o.requires_grad(false));
  uniform_impl("rand", t, 0.0, 1.0, g);
  return as_leaf(t, o);
}

Tensor normal_factory(const char* op, double mean, double std, const Shape& size, TensorOptions o,
                      Generator* g) {
  check_normal(op, o.dtype(), std);
  Tensor t = empty(size, o.requires_grad(false));
  normal_impl(op, t, mean, std, g);
  return as_leaf(t, o);
}

Tensor randint_impl(int64_t low, int64_t high, const Shape& size, TensorOptions o, Generator* g) {
  if (!o.has_dtype()) o = o.dtype(kInt64);
  randint_params("randint", o.dtype(), low, high);
  Tensor t = empty(size, o);
  random_impl("randint", t, low, high, g);
  return t;
}

// Sorts by one random 64-bit key per index (signed order, ties by index): the permutation is the
// argsort a stable device sort of the same keys gives, so a GPU can reproduce it without a host
// round trip. Only the sort runs on the host here.
Tensor randperm_impl(int64_t n, TensorOptions o, Generator* g) {
  if (!o.has_dtype()) o = o.dtype(kInt64);
  const DType t = o.dtype();
  if (n < 0) throw ValueError("[randperm] n must be non-negative, got " + std::to_string(n));
  if (n > 0 && static_cast<double>(n - 1) > int_bounds(t).second) {
    throw ValueError("[randperm] n=" + std::to_string(n) + " is too large for dtype " + dt(t));
  }
  const Device device = resolve_device(o.device());
  Tensor keys = make_empty({n}, kInt64, device, false, "randperm");
  run("randperm", RandomOp::Bits64, keys, RandomParams{}, g);
  const std::vector<int64_t> k = keys.to_vector<int64_t>();
  std::vector<std::pair<int64_t, int64_t>> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = {k[static_cast<size_t>(i)], i};
  std::sort(order.begin(), order.end());
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = order[i].second;
  return tensor(perm, Shape{n}, TensorOptions().dtype(t).device(device));
}

}  // namespace

// ---- public ops ---------------------------------------------------------------------------------

Tensor rand(const Shape& size, TensorOptions o) { return rand_impl(size, o, nullptr); }
Tensor rand(const Shape& size, Generator& g, TensorOptions o) { return rand_impl(size, o, &g); }

Tensor randn(const Shape& size, TensorOptions o) {
  return normal_factory("randn", 0.0, 1.0, size, o, nullptr);
}
Tensor randn(const Shape& size, Generator& g, TensorOptions o) {
  return normal_factory("randn", 0.0, 1.0, size, o, &g);
}

Tensor normal(double mean, double std, const Shape& size, TensorOptions o) {
  return normal_factory("normal", mean, std, size, o, nullptr);
}
Tensor normal(double mean, double std, const Shape& size, Generator& g, TensorOptions o) {
  return normal_factory("normal", mean, std, size, o, &g);
}

Tensor randint(int64_t low, int64_t high, const Shape& size, TensorOptions o) {
  return randint_impl(low, high, size, o, nullptr);
}
Tensor randint(int64_t high, const Shape& size, TensorOptions o) {
  return randint_impl(0, high, size, o, nullptr);
}
Tensor randint(int64_t low, int64_t high, const Shape& size, Generator& g, TensorOptions o) {
  return randint_impl(low, high, size, o, &g);
}
Tensor randint(int64_t high, const Shape& size, Generator& g, TensorOptions o) {
  return randint_impl(0, high, size, o, &g);
}

Tensor randperm(int64_t n, TensorOptions o) { return randperm_impl(n, o, nullptr); }
Tensor randperm(int64_t n, Generator& g, TensorOptions o) { return randperm_impl(n, o, &g); }

namespace {
Tensor bernoulli_tensor_impl(const Tensor& p, Generator* g) {
  check_defined("bernoulli", p);
  check_float("bernoulli", p.dtype());
  Tensor out = make_empty(p.sizes(), p.dtype(), p.device(), false, "bernoulli");
  GeneratorState s = generator_for("bernoulli", g, p.device()).reserve(1);
  if (out.numel() > 0) backend(p.device()).bernoulli(out, p, s.seed, s.offset);
  return out;
}

Tensor bernoulli_scalar_impl(const Tensor& input, double p, Generator* g) {
  check_defined("bernoulli", input);
  check_bernoulli_p("bernoulli", p);
  Tensor out = make_empty(input.sizes(), input.dtype(), input.device(), false, "bernoulli");
  bernoulli_impl("bernoulli", out, p, g);
  return out;
}
}  // namespace

Tensor bernoulli(const Tensor& p) { return bernoulli_tensor_impl(p, nullptr); }
Tensor bernoulli(const Tensor& p, Generator& g) { return bernoulli_tensor_impl(p, &g); }
Tensor bernoulli(const Tensor& input, double p) { return bernoulli_scalar_impl(input, p, nullptr); }
Tensor bernoulli(const Tensor& input, double p, Generator& g) {
  return bernoulli_scalar_impl(input, p, &g);
}

Tensor rand_like(const Tensor& t, std::optional<TensorOptions> o) {
  return rand(t.sizes(), like_options(t, o));
}
Tensor randn_like(const Tensor& t, std::optional<TensorOptions> o) {
  return randn(t.sizes(), like_options(t, o));
}

const Tensor& uniform_(const Tensor& t, double from, double to, Generator& g) {
  return uniform_impl("uniform_", t, from, to, &g);
}
const Tensor& normal_(const Tensor& t, double mean, double std, Generator& g) {
  return normal_impl("normal_", t, mean, std, &g);
}
const Tensor& bernoulli_(const Tensor& t, double p, Generator& g) {
  return bernoulli_impl("bernoulli_", t, p, &g);
}
const Tensor& random_(const Tensor& t, int64_t low, int64_t high) {
  return random_impl("random_", t, low, high, nullptr);
}
const Tensor& random_(const Tensor& t, int64_t low, int64_t high, Generator& g) {
  return random_impl("random_", t, low, high, &g);
}

Tensor& Tensor::uniform_(double from, double to) {
  uniform_impl("uniform_", *this, from, to, nullptr);
  return *this;
}
Tensor& Tensor::normal_(double mean, double std) {
  normal_impl("normal_", *this, mean, std, nullptr);
  return *this;
}
Tensor& Tensor::bernoulli_(double p) {
  bernoulli_impl("bernoulli_", *this, p, nullptr);
  return *this;
}

}  // namespace ember
