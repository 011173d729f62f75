#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ember/cuda.h"
#include "ember/io/checkpoint.h"
#include "ember/ops.h"
#include "ember/random.h"
#include "io/safetensors_format.h"

namespace ember::io {

namespace {

constexpr const char* kChecksumKey = "ember.checksum";
constexpr const char* kFormatKey = "ember.checkpoint";
constexpr const char* kFormatVersion = "1";

// CRC32 over everything a checkpoint holds: each tensor's name, dtype, shape and bytes (in data
// order) and every metadata entry but the checksum itself.
class Crc {
 public:
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const Bytef*>(p);
    while (n > 0) {
      const uInt chunk = n > (1u << 30) ? (1u << 30) : static_cast<uInt>(n);
      crc_ = crc32(crc_, b, chunk);
      b += chunk;
      n -= chunk;
    }
  }
  void str(const std::string& s) { bytes(s.c_str(), s.size() + 1); }
  void describe(const std::string& name, DType dtype, const Shape& shape) {
    str(name);
    str(detail::safetensors_dtype(dtype));
    for (int64_t d : shape) str(std::to_string(d));
    str("");
  }
  void metadata(const std::map<std::string, std::string>& m) {
    for (const auto& [k, v] : m) {
      if (k == kChecksumKey) continue;
      str(k);
      str(v);
    }
  }
  std::string hex() const {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08lx", static_cast<unsigned long>(crc_));
    return "crc32:" + std::string(buf);
  }

 private:
  uLong crc_ = crc32(0L, Z_NULL, 0);
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw CheckpointError("[load_checkpoint] '" + path + "': " + what);
}

}  // namespace

void Checkpoint::put(const std::string& prefix, const OrderedDict<std::string, Tensor>& section) {
  for (const auto& [name, t] : section) {
    if (tensors.contains(prefix + name)) {
      throw ValueError("[Checkpoint::put] '" + prefix + name + "' is in the checkpoint already");
    }
    tensors.insert(prefix + name, t);
  }
}

OrderedDict<std::string, Tensor> Checkpoint::get(const std::string& prefix) const {
  OrderedDict<std::string, Tensor> out;
  for (const auto& [name, t] : tensors) {
    if (name.compare(0, prefix.size(), prefix) == 0) out.insert(name.substr(prefix.size()), t);
  }
  return out;
}

void Checkpoint::set_int(const std::string& key, int64_t value) {
  metadata[key] = std::to_string(value);
}

void Checkpoint::set_double(const std::string& key, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  metadata[key] = buf;
}

int64_t Checkpoint::get_int(const std::string& key) const {
  auto it = metadata.find(key);
  if (it == metadata.end())
    throw CheckpointError("[Checkpoint::get_int] no metadata key '" + key + "'");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (it->second.empty() || *end != '\0' || errno == ERANGE) {
    throw CheckpointError("[Checkpoint::get_int] metadata '" + key + "' = '" + it->second +
                          "' is not an integer");
  }
  return v;
}

double Checkpoint::get_double(const std::string& key) const {
  auto it = metadata.find(key);
  if (it == metadata.end())
    throw CheckpointError("[Checkpoint::get_double] no metadata key '" + key + "'");
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0') {
    throw CheckpointError("[Checkpoint::get_double] metadata '" + key + "' = '" + it->second +
                          "' is not a number");
  }
  return v;
}

void save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  const char* op = "save_checkpoint";
  for (const auto& [k, v] : checkpoint.metadata) {
    if (k == kChecksumKey || k == kFormatKey) {
      throw ValueError("[save_checkpoint] metadata key '" + k + "' is reserved");
    }
  }
  const std::vector<detail::HostTensor> host = detail::to_host(checkpoint.tensors, op);
  std::map<std::string, std::string> metadata = checkpoint.metadata;
  metadata.insert_or_assign(kFormatKey, std::string(kFormatVersion));
  Crc crc;
  crc.metadata(metadata);
  for (const detail::HostTensor& t : host) crc.describe(t.name, t.data.dtype(), t.data.sizes());
  for (const detail::HostTensor& t : host) crc.bytes(t.data.data_ptr(), t.data.nbytes());
  metadata[kChecksumKey] = crc.hex();

  const std::string header = detail::make_header(host, metadata);
  detail::AtomicFile f(path, op);
  f.write(header.data(), header.size());
  for (const detail::HostTensor& t : host) f.write(t.data.data_ptr(), t.data.nbytes());
  f.commit();
}

Checkpoint load_checkpoint(const std::string& path, Device device) {
  const char* op = "load_checkpoint";
  detail::Header h;
  std::vector<Tensor> data;
  try {
    detail::InputFile f(path, op);
    h = detail::read_header(f, op);
    data.resize(h.entries.size());
    for (size_t i : h.data_order) {
      const detail::Entry& e = h.entries[i];
      data[i] = detail::read_tensor(f, h, e, op);
    }
  } catch (const CheckpointError&) {
    throw;
  } catch (const Error& e) {
    throw CheckpointError(e.what());
  }
  auto stored = h.metadata.find(kChecksumKey);
  if (stored == h.metadata.end() || !h.metadata.count(kFormatKey)) {
    fail(path, "not an ember checkpoint (its metadata has no " + std::string(kChecksumKey) + ")");
  }
  if (h.metadata.at(kFormatKey) != kFormatVersion) {
    fail(path, "checkpoint format version " + h.metadata.at(kFormatKey) + " is not supported");
  }
  Crc crc;
  crc.metadata(h.metadata);
  for (size_t i : h.data_order)
    crc.describe(h.entries[i].name, h.entries[i].dtype, h.entries[i].shape);
  for (size_t i : h.data_order) crc.bytes(data[i].data_ptr(), data[i].nbytes());
  if (crc.hex() != stored->second) {
    fail(path, "checksum mismatch: stored " + stored->second + ", contents give " + crc.hex() +
                   " (the file is corrupted)");
  }

  Checkpoint c;
  for (size_t i = 0; i < h.entries.size(); ++i) {
    c.tensors.insert(h.entries[i].name,
                     detail::to_device(data[i], device, path, "load_checkpoint"));
  }
  c.metadata = std::move(h.metadata);
  c.metadata.erase(kChecksumKey);
  c.metadata.erase(kFormatKey);
  return c;
}

OrderedDict<std::string, Tensor> capture_rng_state() {
  OrderedDict<std::string, Tensor> out;
  auto put = [&](const std::string& name, Device d) {
    const GeneratorState s = default_generator(d).get_state();
    out.insert(name, tensor(std::vector<int64_t>{static_cast<int64_t>(s.seed),
                                                 static_cast<int64_t>(s.offset)}));
  };
  put("cpu", Device(kCPU));
  for (int i = 0; i < cuda::device_count(); ++i) {
    put("cuda:" + std::to_string(i), Device(kCUDA, i));
  }
  return out;
}

void restore_rng_state(const OrderedDict<std::string, Tensor>& state) {
  const int devices = cuda::device_count();
  for (const auto& [name, t] : state) {
    if (!t.defined() || t.dtype() != kInt64 || t.dim() != 1 || t.numel() != 2) {
      throw ValueError("[restore_rng_state] '" + name +
                       "' must be an int64 tensor of 2 elements "
                       "{seed, offset}");
    }
    Device d(kCPU);
    if (name != "cpu") {
      int index = -1;
      if (name.compare(0, 5, "cuda:") == 0 && name.size() > 5 && name.size() < 12 &&
          name.find_first_not_of("0123456789", 5) == std::string::npos) {
        index = std::stoi(name.substr(5));
      }
      if (index < 0) {
        throw ValueError("[restore_rng_state] unknown generator '" + name +
                         "' (expected 'cpu' or 'cuda:N')");
      }
      if (index >= devices) continue;
      d = Device(kCUDA, index);
    }
    const std::vector<int64_t> v = t.to_vector<int64_t>();
    default_generator(d).set_state({static_cast<uint64_t>(v[0]), static_cast<uint64_t>(v[1])});
  }
}

}  // namespace ember::io
