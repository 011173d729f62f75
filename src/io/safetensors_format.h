// The safetensors layout shared by save/load_safetensors and the checkpoint files built on it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"
#include "io/file_util.h"

namespace ember::io::detail {

// One tensor of a file: its byte range [begin, end) in the data region.
struct Entry {
  std::string name;
  DType dtype = kFloat32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;      // in the order the header lists them
  std::vector<size_t> data_order;  // indices into entries by ascending offset
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // 8 + header length
};

// Limits on a header, checked before it is read (the length) and while it is parsed (the keys):
// the reference implementation's 100 MB header cap, and at most 2^22 object keys in all (four per
// tensor: its name, dtype, shape and data_offsets), besides json::Limits' cap on values.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr size_t kMaxHeaderKeys = size_t{1} << 22;

// Reads and validates the header of file (every check but the data itself).
Header read_header(const InputFile& file, const char* op);

// Reads entry e of file into a new CPU tensor (page-locked when pinned). Raises "[op] 'path': ..."
// when it cannot be allocated, and when a BOOL tensor holds a byte other than 0 or 1 (such bytes
// are refused, not normalised: a bool is one of two byte values in ember as in PyTorch).
Tensor read_tensor(const InputFile& file, const Header& h, const Entry& e, const char* op,
                   bool pinned = false);

// t moved to device; a failure (no such device, no GPU) raises "[op] 'path': ..." with the reason.
Tensor to_device(const Tensor& t, Device device, const std::string& path, const char* op);

// A tensor's data on the host, contiguous, ready to write.
struct HostTensor {
  std::string name;
  Tensor data;
};

// Host copies of tensors in safetensors' storage order (by dtype, largest alignment first, then
// by name). Tensors already contiguous on the CPU are not copied.
std::vector<HostTensor> to_host(const OrderedDict<std::string, Tensor>& tensors, const char* op);

// The header bytes (length prefix included, padded with spaces to a multiple of 8) for tensors
// in this order.
std::string make_header(const std::vector<HostTensor>& tensors,
                        const std::map<std::string, std::string>& metadata);

// "F32", "BF16", ...
const char* safetensors_dtype(DType t);

}  // namespace ember::io::detail
