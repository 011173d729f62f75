// CPU sort and topk.
#include "backend/cpu/cpu_backend.h"

namespace ember {
void CpuBackend::sort(const Tensor&, const Tensor&, const Tensor&, int64_t, bool, bool) { missing("sort"); }
void CpuBackend::topk(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, bool, bool) { missing("topk"); }
}  // namespace ember
