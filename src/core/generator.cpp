// Generator state and the per-device default generators behind manual_seed.
#include "ember/generator.h"

#include <chrono>
#include <mutex>
#include <random>
#include <vector>

#include "core/tensor_util.h"

namespace ember {

struct GeneratorImpl {
  explicit GeneratorImpl(Device d, uint64_t s) : device(d), state{s, 0} {}
  const Device device;
  mutable std::mutex mu;  // random calls from several threads each get distinct offsets
  GeneratorState state;
};

namespace {

// One generator per device, created on first use so that CUDA devices need no registration.
struct Registry {
  std::mutex mu;
  uint64_t seed = kDefaultSeed;  // what a generator created from now on starts from
  std::vector<std::shared_ptr<GeneratorImpl>> generators;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: usable from static destructors
  return *r;
}

Device canonical(Device d) { return d.is_cpu() ? Device(kCPU) : resolve_device(d); }

uint64_t nondeterministic_seed() {
  std::random_device rd;
  uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  return s ^ static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

Generator::Generator(Device device, uint64_t seed)
    : impl_(std::make_shared<GeneratorImpl>(canonical(device), seed)) {}

Device Generator::device() const { return impl_->device; }

Generator& Generator::manual_seed(uint64_t seed) {
  std::lock_guard lock(impl_->mu);
  impl_->state = {seed, 0};
  return *this;
}

uint64_t Generator::seed() {
  uint64_t s = nondeterministic_seed();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard lock(impl_->mu);
  return impl_->state.seed;
}

GeneratorState Generator::get_state() const {
  std::lock_guard lock(impl_->mu);
  return impl_->state;
}

void Generator::set_state(const GeneratorState& state) {
  std::lock_guard lock(impl_->mu);
  impl_->state = state;
}

GeneratorState Generator::reserve(uint64_t count) {
  std::lock_guard lock(impl_->mu);
  GeneratorState before = impl_->state;
  impl_->state.offset += count;
  return before;
}

Generator default_generator(Device device) {
  device = canonical(device);
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  for (const auto& g : r.generators) {
    if (g->device == device) return Generator(g);
  }
  r.generators.push_back(std::make_shared<GeneratorImpl>(device, r.seed));
  return Generator(r.generators.back());
}

void manual_seed(uint64_t seed) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.seed = seed;
  for (const auto& g : r.generators) {
    std::lock_guard glock(g->mu);
    g->state = {seed, 0};
  }
}

uint64_t initial_seed() { return default_generator(Device(kCPU)).initial_seed(); }

uint64_t seed() {
  uint64_t s = nondeterministic_seed();
  manual_seed(s);
  return s;
}

}  // namespace ember
