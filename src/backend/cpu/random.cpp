// CPU random number kernels.
#include "backend/cpu/cpu_backend.h"

namespace ember {
void CpuBackend::random(RandomOp, const Tensor&, uint64_t, uint64_t, const RandomParams&) { missing("random"); }
void CpuBackend::bernoulli(const Tensor&, const Tensor&, uint64_t, uint64_t) { missing("bernoulli"); }
}  // namespace ember
