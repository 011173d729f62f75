// Batched-matmul operand geometry shared by the BLAS backends: a (batch, rows, cols) view of a
// tensor and how a BLAS library can read one matrix of it in place.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ember/tensor.h"

namespace ember {

// One operand of a batched matmul, (batch, rows, cols), strides in elements.
struct Mat {
  char* base = nullptr;
  int64_t bs = 0, rs = 0, cs = 0, rows = 0, cols = 0;

  template <class T>
  T* at(int64_t b) const {
    return reinterpret_cast<T*>(base) + b * bs;
  }
};

inline Mat mat_of(const Tensor& t) {
  return {static_cast<char*>(t.data_ptr()),
          t.stride(0),
          t.stride(1),
          t.stride(2),
          t.size(1),
          t.size(2)};
}

// Folds the batch into the rows when consecutive matrices follow each other row after row,
// so (B, n, k) reads as (B*n, k). Returns false when the layout does not allow it.
inline bool fold_rows(Mat& m, int64_t batch) {
  if (m.rows != 1 && m.bs != m.rows * m.rs) return false;
  if (m.rows == 1) m.rs = m.bs;
  m.rows *= batch;
  m.bs = 0;
  return true;
}

// How BLAS reads a (rows, cols) matrix in place: row-major (trans = false) or column-major
// (trans = true), with its leading dimension. The stride of a size-1 dim never matters.
struct BlasLayout {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

inline BlasLayout blas_layout(const Mat& m) {
  BlasLayout l;
  const int64_t rows1 = std::max<int64_t>(m.rows, 1), cols1 = std::max<int64_t>(m.cols, 1);
  if ((m.cols == 1 || m.cs == 1) && (m.rows == 1 || m.rs >= cols1)) {
    l = {true, false, m.rows == 1 ? cols1 : m.rs};
  } else if ((m.rows == 1 || m.rs == 1) && (m.cols == 1 || m.cs >= rows1)) {
    l = {true, true, m.cols == 1 ? rows1 : m.cs};
  }
  return l;
}

}  // namespace ember
