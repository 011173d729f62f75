// Autocast in the op layer: the policy table (autocast_ops.def) and the scope an op's entry point
// opens when autocast applies to it. The state it reads is core's (core/switches.h).
//
//   Tensor mm(const Tensor& a, const Tensor& b) {
//     if (autocast::active(autocast::Op::mm, a)) {
//       autocast::Scope s(autocast::Op::mm, a, {a, b});
//       return mm(s[0], s[1]);           // autocast is off inside the scope: no second cast
//     }
//     ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/switches.h"
#include "ember/tensor.h"

namespace ember::autocast {

enum class Policy : uint8_t { None, LowerPrecision, Float32, Promote, Banned };

enum class Op : uint8_t {
#define EMBER_AUTOCAST_OP(name, cuda, cpu) name,
#include "ops/autocast_ops.def"
#undef EMBER_AUTOCAST_OP
};

struct OpInfo {
  const char* name;
  Policy cuda;
  Policy cpu;
};

inline constexpr OpInfo kOps[] = {
#define EMBER_AUTOCAST_OP(name, cuda, cpu) {#name, Policy::cuda, Policy::cpu},
#include "ops/autocast_ops.def"
#undef EMBER_AUTOCAST_OP
};
inline constexpr size_t kNumOps = sizeof(kOps) / sizeof(kOps[0]);

constexpr Policy policy(Op op, DeviceType type) {
  const OpInfo& i = kOps[static_cast<size_t>(op)];
  return type == kCUDA ? i.cuda : i.cpu;
}

// Whether autocast applies to op now, judged by the tensor that gives the op's device (the first
// defined input); one thread-local load when autocast is off.
inline bool active(Op op, const Tensor& t) {
  if (!t.defined()) return false;
  const DeviceType type = t.device().type();
  return autocast_on(type) && policy(op, type) != Policy::None;
}

// Casts the inputs per op's policy on device's type, then keeps autocast off on this thread until
// destroyed. Only floating tensors of that device type other than float64 are cast; undefined and
// other tensors pass unchanged. A Banned op raises. Inputs are read back in the order given.
class Scope {
 public:
  Scope(Op op, const Tensor& device, std::vector<Tensor> inputs);
  const Tensor& operator[](size_t i) const { return inputs_[i]; }
  const std::vector<Tensor>& inputs() const { return inputs_; }

 private:
  std::vector<Tensor> inputs_;
  AutocastExcludeGuard exclude_;
};

// The dtype op's policy gives float32 inputs now (for a test or a caller that passes a dtype).
DType target_dtype(Op op, DeviceType type, const std::vector<Tensor>& inputs);

// Tensors cast by autocast on this thread so far (cache hits not counted), and the cache's size.
uint64_t cast_count();
size_t cache_size();

}  // namespace ember::autocast
