// CPU indexing kernels.
#include "backend/cpu/cpu_backend.h"

namespace ember {
void CpuBackend::index_select(const Tensor&, const Tensor&, int64_t, const Tensor&) { missing("index_select"); }
void CpuBackend::gather(const Tensor&, const Tensor&, int64_t, const Tensor&) { missing("gather"); }
void CpuBackend::scatter(const Tensor&, int64_t, const Tensor&, const Tensor&, bool) { missing("scatter"); }
void CpuBackend::index(const Tensor&, const Tensor&, const TensorList&) { missing("index"); }
void CpuBackend::index_put(const Tensor&, const TensorList&, const Tensor&, bool) { missing("index_put_"); }
Tensor CpuBackend::nonzero(const Tensor&) { missing("nonzero"); }
void CpuBackend::tril_triu(const Tensor&, const Tensor&, int64_t, bool) { missing("tril"); }
}  // namespace ember
