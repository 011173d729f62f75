// CPU matmul through BLAS.
#include "backend/cpu/cpu_backend.h"

namespace ember {
void CpuBackend::gemm(const Tensor&, const Tensor&, const Tensor&, double, double) { missing("matmul"); }
}  // namespace ember
