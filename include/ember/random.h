// Random number generators: a Philox4x32-10 stream per device, its state a (seed, offset) pair,
// and the random ops that take an explicit Generator (the others use the device's default one).
#pragma once

#include <cstdint>
#include <memory>

#include "ember/device.h"
#include "ember/tensor.h"

namespace ember {

// PyTorch's default seed, used until manual_seed is called.
inline constexpr uint64_t kDefaultSeed = 67280421310721ull;

// A generator's whole state: element i of the call that takes `offset` depends only on
// (seed, offset, i), so saving and restoring these two numbers replays a stream exactly.
struct GeneratorState {
  uint64_t seed = kDefaultSeed;
  uint64_t offset = 0;
  friend bool operator==(const GeneratorState&, const GeneratorState&) = default;
};

struct GeneratorImpl;

// A handle to a random stream for one device. Copies share the stream (like torch.Generator);
// every method is thread-safe.
class Generator {
 public:
  // A new, independent stream for `device`.
  explicit Generator(Device device = Device(kCPU), uint64_t seed = kDefaultSeed);
  explicit Generator(std::shared_ptr<GeneratorImpl> impl) : impl_(std::move(impl)) {}

  Device device() const;
  // Restarts the stream from `seed` (offset 0).
  Generator& manual_seed(uint64_t seed);
  // Restarts the stream from a non-deterministic seed and returns it.
  uint64_t seed();
  // The seed the stream was last started from.
  uint64_t initial_seed() const;
  GeneratorState get_state() const;
  void set_state(const GeneratorState& state);
  // Takes `count` consecutive offsets (each random call takes one) and returns the state before:
  // the caller's first offset is the returned state's offset.
  GeneratorState reserve(uint64_t count = 1);

  bool is_same(const Generator& o) const { return impl_ == o.impl_; }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

// The default generator of a device: the CPU's, or one per CUDA device ("cuda" means the
// current one). manual_seed (ops.h) seeds all of them.
Generator default_generator(Device device = Device(kCPU));
// The seed the CPU default generator was last started from.
uint64_t initial_seed();
// Seeds every default generator from a non-deterministic source and returns the seed.
uint64_t seed();

// ---- random ops with an explicit generator (same semantics as the ops.h forms)
// ------------------- The generator's device type must match the output's.
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
