// The IDX format of MNIST and Fashion-MNIST: a big-endian header (magic 0x0000TTRR: element type
// TT, rank RR; then RR uint32 dims) followed by the elements, big-endian, row-major.
#pragma once

#include <string>

#include "ember/tensor.h"

namespace ember::data {

// Reads an IDX file, plain or gzip-compressed (detected from its content), into a CPU tensor of
// the file's shape. Element types: 0x08 uint8, 0x09 int8, 0x0B int16 (read as int32), 0x0C int32,
// 0x0D float32, 0x0E float64. Throws ember::Error "[idx] <path>: ..." for a missing file, a bad
// magic number, a truncated file or trailing bytes.
Tensor read_idx(const std::string& path);

// Writes a tensor (uint8, int8, int32, float32 or float64; any rank up to 255) as an IDX file,
// gzip-compressed when `compress`.
void write_idx(const std::string& path, const Tensor& tensor, bool compress = false);

}  // namespace ember::data
