// Normalize, RandomCrop, RandomHorizontalFlip, Compose, and the per-thread generator they draw
// from.
#include "ember/data/transforms.h"

#include <sstream>
#include <string>

#include "data/worker_context.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "kernels/philox.h"

namespace ember::data {

namespace {
thread_local detail::WorkerContext* t_context = nullptr;

// Four random words from one offset of `g`.
philox::Words draw(Generator& g) {
  const GeneratorState s = g.reserve(1);
  return philox::block(s.seed, s.offset, 0);
}
// Uniform integer in [0, n) from one 32-bit word.
int64_t below(uint32_t word, int64_t n) {
  return static_cast<int64_t>((static_cast<uint64_t>(word) * static_cast<uint64_t>(n)) >> 32);
}

std::string shape_str(const Tensor& x) {
  std::ostringstream os;
  os << x.sizes();
  return os.str();
}

void check_image(const char* op, const Tensor& x) {
  if (!x.defined() || x.dim() < 2) {
    throw ValueError(std::string("[") + op + "] expected an image tensor (..., H, W), got " +
                     (x.defined() ? "shape " + shape_str(x) : std::string("undefined")));
  }
}
}  // namespace

namespace detail {
WorkerContextGuard::WorkerContextGuard(WorkerContext* ctx) : previous_(t_context) {
  t_context = ctx;
}
WorkerContextGuard::~WorkerContextGuard() { t_context = previous_; }
}  // namespace detail

Generator& generator() {
  if (t_context) return t_context->generator;
  thread_local Generator fallback = default_generator(Device(kCPU));
  return fallback;
}

std::optional<WorkerInfo> get_worker_info() {
  if (!t_context) return std::nullopt;
  return t_context->info;
}

Normalize::Normalize(std::vector<double> mean, std::vector<double> std)
    : mean_(std::move(mean)), std_(std::move(std)) {
  if (mean_.empty() || mean_.size() != std_.size()) {
    throw ValueError("[Normalize] mean and std need the same, non-zero number of values, got " +
                     std::to_string(mean_.size()) + " and " + std::to_string(std_.size()));
  }
  for (double s : std_) {
    if (s == 0.0) throw ValueError("[Normalize] std is 0, which would divide by zero");
  }
}

Tensor Normalize::operator()(const Tensor& x) const {
  if (!x.defined() || !x.is_floating_point() || x.dim() < 1) {
    throw TypeError("[Normalize] expected a floating-point tensor (C, ...)");
  }
  const int64_t c = x.size(0);
  if (mean_.size() != 1 && static_cast<int64_t>(mean_.size()) != c) {
    throw ValueError("[Normalize] " + std::to_string(mean_.size()) + " means for " +
                     std::to_string(c) + " channels (input shape " + shape_str(x) + ")");
  }
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[0] = static_cast<int64_t>(mean_.size());
  const TensorOptions opts = TensorOptions().dtype(x.dtype()).device(x.device());
  const Tensor mean = tensor(mean_, Shape(shape), opts);
  const Tensor std = tensor(std_, Shape(shape), opts);
  return (x - mean) / std;
}

RandomCrop::RandomCrop(int64_t height, int64_t width, int64_t padding)
    : height_(height), width_(width), padding_(padding) {
  if (height <= 0 || width <= 0 || padding < 0) {
    throw ValueError("[RandomCrop] size must be positive and padding non-negative, got size (" +
                     std::to_string(height) + ", " + std::to_string(width) + "), padding " +
                     std::to_string(padding));
  }
}

Tensor RandomCrop::operator()(const Tensor& x) const {
  check_image("RandomCrop", x);
  const int64_t hdim = x.dim() - 2, wdim = x.dim() - 1;
  Tensor padded = x;
  if (padding_ > 0) {
    Shape s = x.sizes();
    s[hdim] += 2 * padding_;
    s[wdim] += 2 * padding_;
    padded = zeros(s, x.options());
    padded.narrow(hdim, padding_, x.size(hdim)).narrow(wdim, padding_, x.size(wdim)).copy_(x);
  }
  const int64_t h = padded.size(hdim), w = padded.size(wdim);
  if (h < height_ || w < width_) {
    throw ValueError("[RandomCrop] crop size (" + std::to_string(height_) + ", " +
                     std::to_string(width_) + ") is larger than the padded input (" +
                     std::to_string(h) + ", " + std::to_string(w) + ")");
  }
  const philox::Words r = draw(generator());
  const int64_t top = below(r.v[0], h - height_ + 1);
  const int64_t left = below(r.v[1], w - width_ + 1);
  return padded.narrow(hdim, top, height_).narrow(wdim, left, width_).contiguous();
}

RandomHorizontalFlip::RandomHorizontalFlip(double p) : p_(p) {
  if (p < 0.0 || p > 1.0) {
    throw ValueError("[RandomHorizontalFlip] p must be in [0, 1], got " + std::to_string(p));
  }
}

Tensor RandomHorizontalFlip::operator()(const Tensor& x) const {
  check_image("RandomHorizontalFlip", x);
  const philox::Words r = draw(generator());
  const double u = static_cast<double>(r.v[0] >> 8) * (1.0 / 16777216.0);  // [0, 1)
  if (u >= p_) return x;
  const int64_t w = x.size(-1);
  return x.index_select(x.dim() - 1,
                        arange(w - 1, -1, -1, TensorOptions(kInt64).device(x.device())));
}

Tensor Compose::operator()(const Tensor& x) const {
  Tensor y = x;
  for (const Transform& t : transforms_) y = t(y);
  return y;
}

}  // namespace ember::data
