// Random number generators: a Philox4x32-10 stream per device, its state a (seed, offset) pair;
// the default generator of each device and manual_seed.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>

#include "ember/device.h"

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
// current one). manual_seed seeds all of them.
Generator default_generator(Device device = Device(kCPU));
// The seed the CPU default generator was last started from.
uint64_t initial_seed();
// Seeds every default generator from a non-deterministic source and returns the seed.
uint64_t seed();
// Seeds the CPU generator and every CUDA device's generator.
void manual_seed(uint64_t seed);

}  // namespace ember
