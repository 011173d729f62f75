// CPU reductions, scans and softmax.
#include "backend/cpu/cpu_backend.h"

namespace ember {
void CpuBackend::reduce(ReduceOp, const Tensor&, const Tensor&, const ReduceParams&) { missing("reduce"); }
void CpuBackend::reduce_with_index(ReduceOp, const Tensor&, const Tensor&, const Tensor&, int64_t) { missing("max"); }
void CpuBackend::scan(ScanOp, const Tensor&, const Tensor&, int64_t) { missing("cumsum"); }
void CpuBackend::softmax(const Tensor&, const Tensor&, int64_t, bool) { missing("softmax"); }
}  // namespace ember
