// The random ops that take an explicit Generator (the others, in ember/ops.h, use the device's
// default one), and the generators themselves (ember/generator.h).
#pragma once

#include <cstdint>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

// ---- random ops with an explicit generator (same semantics as the ops.h forms) ----------------
// The generator's device type must match the output's.
Tensor rand(const Shape& size, Generator& generator, TensorOptions options = {});
Tensor randn(const Shape& size, Generator& generator, TensorOptions options = {});
Tensor randint(int64_t low, int64_t high, const Shape& size, Generator& generator,
               TensorOptions options = {});
Tensor randint(int64_t high, const Shape& size, Generator& generator, TensorOptions options = {});
Tensor randperm(int64_t n, Generator& generator, TensorOptions options = {});
Tensor normal(double mean, double std, const Shape& size, Generator& generator,
              TensorOptions options = {});
Tensor bernoulli(const Tensor& p, Generator& generator);
Tensor bernoulli(const Tensor& input, double p, Generator& generator);
// In place, as Tensor::uniform_ / normal_ / bernoulli_ (t may be a temporary view); returns t.
const Tensor& uniform_(const Tensor& t, double from, double to, Generator& generator);
const Tensor& normal_(const Tensor& t, double mean, double std, Generator& generator);
const Tensor& bernoulli_(const Tensor& t, double p, Generator& generator);
// Integers uniform on [low, high) in place, any dtype (PyTorch's random_(from, to)).
const Tensor& random_(const Tensor& t, int64_t low, int64_t high);
const Tensor& random_(const Tensor& t, int64_t low, int64_t high, Generator& generator);

}  // namespace ember
