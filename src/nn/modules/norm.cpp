#include "ember/nn/modules/norm.h"

#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

#include "ember/autograd.h"
#include "ember/nn/functional/norm.h"
#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

namespace F = functional;

namespace {

// Python's repr of a float: the shortest round-trip digits ("1e-05", "0.1", "1.0").
std::string py_float(double v) {
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";  // "inf"/"nan" contain 'n'
  return s;
}

const char* py_bool(bool b) { return b ? "True" : "False"; }

// "(16,)" or "(4, 8)": a Python tuple.
std::string py_tuple(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

}  // namespace

// ---- batch norm ---------------------------------------------------------------------------------

BatchNormImplBase::BatchNormImplBase(const BatchNormOptions& options, std::string name)
    : Module(std::move(name)), options(options) {
  const int64_t c = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, TensorOptions(kInt64)));
  }
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard ng;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  check_input_dim(input);
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    {
      NoGradGuard ng;
      num_batches_tracked.add_(1);
    }
    if (!options.momentum())
      factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, and also in evaluation when no running statistics are kept.
  const bool use_batch = is_training() || !running_mean.defined();
  const bool pass_running = !is_training() || options.track_running_stats();
  return F::batch_norm(input, pass_running ? running_mean : Tensor(),
                       pass_running ? running_var : Tensor(), weight, bias, use_batch, factor,
                       options.eps());
}

void BatchNormImplBase::pretty_print(std::ostream& out) const {
  out << name() << "(" << options.num_features() << ", eps=" << py_float(options.eps())
      << ", momentum=" << (options.momentum() ? py_float(*options.momentum()) : "None")
      << ", affine=" << py_bool(options.affine())
      << ", track_running_stats=" << py_bool(options.track_running_stats()) << ")";
}

void BatchNorm1dImpl::check_input_dim(const Tensor& input) const {
  if (input.dim() != 2 && input.dim() != 3) {
    throw ValueError("[BatchNorm1d] expected 2D or 3D input (got " + std::to_string(input.dim()) +
                     "D input)");
  }
}

void BatchNorm2dImpl::check_input_dim(const Tensor& input) const {
  if (input.dim() != 4) {
    throw ValueError("[BatchNorm2d] expected 4D input (got " + std::to_string(input.dim()) +
                     "D input)");
  }
}

// ---- layer, group and RMS norm ------------------------------------------------------------------

namespace {
Shape shape_of(const std::vector<int64_t>& v) { return Shape(v); }
}  // namespace

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options)
    : Module("LayerNorm"), options(options) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", empty(shape_of(options.normalized_shape())));
    if (options.bias())
      bias = register_parameter("bias", empty(shape_of(options.normalized_shape())));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return F::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& out) const {
  out << "LayerNorm(" << py_tuple(options.normalized_shape()) << ", eps=" << py_float(options.eps())
      << ", elementwise_affine=" << py_bool(options.elementwise_affine()) << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& options)
    : Module("GroupNorm"), options(options) {
  if (options.num_groups() <= 0 || options.num_channels() % options.num_groups() != 0) {
    throw ValueError("[GroupNorm] num_channels must be divisible by num_groups, got " +
                     std::to_string(options.num_channels()) + " channels and " +
                     std::to_string(options.num_groups()) + " groups");
  }
  if (options.affine()) {
    weight = register_parameter("weight", empty({options.num_channels()}));
    bias = register_parameter("bias", empty({options.num_channels()}));
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return F::group_norm(input, options.num_groups(), weight, bias, options.eps());
}

void GroupNormImpl::pretty_print(std::ostream& out) const {
  out << "GroupNorm(" << options.num_groups() << ", " << options.num_channels()
      << ", eps=" << py_float(options.eps()) << ", affine=" << py_bool(options.affine()) << ")";
}

RMSNormImpl::RMSNormImpl(const RMSNormOptions& options) : Module("RMSNorm"), options(options) {
  if (options.elementwise_affine()) {
    weight = register_parameter("weight", empty(shape_of(options.normalized_shape())));
  }
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& input) {
  return F::rms_norm(input, options.normalized_shape(), weight, options.eps());
}

void RMSNormImpl::pretty_print(std::ostream& out) const {
  out << "RMSNorm(" << py_tuple(options.normalized_shape())
      << ", eps=" << (options.eps() ? py_float(*options.eps()) : "None")
      << ", elementwise_affine=" << py_bool(options.elementwise_affine()) << ")";
}

// ---- dropout ------------------------------------------------------------------------------------

namespace {
void check_p(const char* name, double p) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw ValueError(std::string("[") + name +
                     "] dropout probability has to be between 0 and 1, but got " + py_float(p));
  }
}
}  // namespace

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("Dropout"), options(options) {
  check_p("Dropout", options.p());
}

Tensor DropoutImpl::forward(const Tensor& input) {
  Tensor out = F::dropout(input, options.p(), is_training());
  if (options.inplace() && !out.is_same(input)) {
    Tensor(input).copy_(out);
    return input;
  }
  return out;
}

void DropoutImpl::pretty_print(std::ostream& out) const {
  out << "Dropout(p=" << py_float(options.p()) << ", inplace=" << py_bool(options.inplace()) << ")";
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& options)
    : Module("Dropout2d"), options(options) {
  check_p("Dropout2d", options.p());
}

Tensor Dropout2dImpl::forward(const Tensor& input) {
  Tensor out = F::dropout2d(input, options.p(), is_training());
  if (options.inplace() && !out.is_same(input)) {
    Tensor(input).copy_(out);
    return input;
  }
  return out;
}

void Dropout2dImpl::pretty_print(std::ostream& out) const {
  out << "Dropout2d(p=" << py_float(options.p()) << ", inplace=" << py_bool(options.inplace())
      << ")";
}

// ---- embedding ----------------------------------------------------------------------------------

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options)
    : Module("Embedding"), options(options) {
  const int64_t num = options.num_embeddings();
  if (num < 0 || options.embedding_dim() < 0) {
    throw ValueError("[Embedding] num_embeddings and embedding_dim must be non-negative");
  }
  if (auto pad = options.padding_idx()) {
    if (*pad < -num || *pad >= num) {
      throw ValueError("[Embedding] padding_idx must be within num_embeddings, got " +
                       std::to_string(*pad) + " for " + std::to_string(num) + " embeddings");
    }
    if (*pad < 0) this->options.padding_idx(*pad + num);
  }
  weight = register_parameter("weight", empty({num, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (auto pad = options.padding_idx()) {
    NoGradGuard ng;
    weight.narrow(0, *pad, 1).zero_();
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return F::embedding(indices, weight, options.padding_idx());
}

void EmbeddingImpl::pretty_print(std::ostream& out) const {
  out << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) out << ", padding_idx=" << *options.padding_idx();
  out << ")";
}

}  // namespace ember::nn
