#include "ember/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "ember/ops.h"
#include "io/json.h"
#include "io/safetensors_format.h"

namespace ember::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; big-endian hosts would need byte swapping");

namespace detail {

namespace {

struct DTypeName {
  DType dtype;
  const char* name;
  int rank;  // position in safetensors' Dtype enum, which orders the data (largest rank first)
};

// Ranks follow the relative order of safetensors' Dtype enum:
// BOOL < U8 < I8 < (F8, I16, U16) < F16 < BF16 < I32 < U32 < F32 < F64 < I64 < U64.
constexpr DTypeName kDTypes[] = {
    {kBool, "BOOL", 0},   {kUInt8, "U8", 1},      {kInt8, "I8", 2},
    {kFloat16, "F16", 3}, {kBFloat16, "BF16", 4}, {kInt32, "I32", 5},
    {kFloat32, "F32", 6}, {kFloat64, "F64", 7},   {kInt64, "I64", 8},
};

// Dtypes of the format that ember has no equivalent for.
constexpr const char* kForeignDTypes[] = {
    "I16", "U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64"};

const DTypeName& info(DType t) {
  for (const DTypeName& d : kDTypes) {
    if (d.dtype == t) return d;
  }
  throw TypeError("[safetensors] unsupported dtype");
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

const char* safetensors_dtype(DType t) { return info(t).name; }

Header read_header(const InputFile& file, const char* op) {
  std::string where = "[";
  where.append(op).append("] '").append(file.path()).append("': ");
  auto fail = [&](const std::string& what) -> void { throw Error(where + what); };
  const uint64_t size = file.size();
  if (size < 8) {
    fail("truncated: " + std::to_string(size) +
         " bytes is too short for a safetensors file (8-byte header length first)");
  }
  unsigned char len_bytes[8];
  file.read_at(len_bytes, 8, 0);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > kMaxHeaderBytes) {
    fail("header length " + std::to_string(n) + " exceeds the limit of " +
         std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (n > size - 8) {
    fail("truncated: header length says " + std::to_string(n) + " bytes, file has " +
         std::to_string(size - 8) + " after the length");
  }
  std::string text(n, '\0');
  file.read_at(text.data(), n, 8);

  json::Value root;
  try {
    json::Limits limits;
    limits.max_keys = kMaxHeaderKeys;
    root = json::parse(text, limits);
  } catch (const std::invalid_argument& e) {
    fail(std::string("invalid JSON header: ") + e.what() + " of the header");
  }
  if (!root.is_object())
    fail("header is " + std::string(json::kind_name(root.kind)) + ", not an object");

  Header h;
  h.data_start = 8 + n;
  for (const auto& [name, v] : root.object) {
    if (name == "__metadata__") {
      if (!v.is_object())
        fail("__metadata__ is " + std::string(json::kind_name(v.kind)) + ", not an object");
      for (const auto& [k, s] : v.object) {
        if (!s.is_string()) {
          fail("__metadata__ value of '" + k + "' is " + json::kind_name(s.kind) +
               ", not a string");
        }
        h.metadata.emplace(k, s.text);
      }
      continue;
    }
    const std::string t = "tensor '" + name + "'";
    if (!v.is_object()) fail(t + " is described by " + json::kind_name(v.kind) + ", not an object");
    Entry e;
    e.name = name;
    const json::Value *dt = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto& [k, f] : v.object) {
      if (k == "dtype")
        dt = &f;
      else if (k == "shape")
        shape = &f;
      else if (k == "data_offsets")
        offsets = &f;
      else
        fail(t + " has unknown field '" + k + "'");
    }
    if (!dt || !shape || !offsets) {
      fail(t + " lacks '" + std::string(!dt ? "dtype" : !shape ? "shape" : "data_offsets") + "'");
    }
    if (!dt->is_string()) fail(t + ": dtype is " + json::kind_name(dt->kind) + ", not a string");
    bool found = false;
    for (const DTypeName& d : kDTypes) {
      if (dt->text == d.name) {
        e.dtype = d.dtype;
        found = true;
      }
    }
    if (!found) {
      for (const char* f : kForeignDTypes) {
        if (dt->text == f) fail(t + " has dtype " + f + ", which ember does not support");
      }
      fail(t + " has unknown dtype '" + dt->text + "'");
    }
    if (!shape->is_array())
      fail(t + ": shape is " + json::kind_name(shape->kind) + ", not an array");
    uint64_t numel = 1;
    bool overflow = false;
    for (const json::Value& d : shape->array) {
      const auto dim = d.as_uint64();
      if (!dim || *dim > static_cast<uint64_t>(INT64_MAX)) {
        fail(t + ": shape entries must be non-negative integers, got " +
             (d.is_number() ? d.text : std::string(json::kind_name(d.kind))));
      }
      e.shape.push_back(static_cast<int64_t>(*dim));
      if (*dim != 0 && numel > UINT64_MAX / *dim) overflow = true;
      numel *= *dim;
    }
    if (!offsets->is_array() || offsets->array.size() != 2 || !offsets->array[0].as_uint64() ||
        !offsets->array[1].as_uint64()) {
      fail(t + ": data_offsets must be two non-negative integers");
    }
    e.begin = *offsets->array[0].as_uint64();
    e.end = *offsets->array[1].as_uint64();
    const std::string range =
        "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
    if (e.end < e.begin) fail(t + ": " + range + " end before they begin");
    const uint64_t es = element_size(e.dtype);
    overflow = overflow || (numel != 0 && numel > UINT64_MAX / es);
    if (overflow || numel * es != e.end - e.begin) {
      fail(t + ": shape " + shape_str(e.shape) + " of " + dt->text + " needs " +
           (overflow ? std::string("more than 2^64") : std::to_string(numel * es)) + " bytes but " +
           range + " hold " + std::to_string(e.end - e.begin));
    }
    h.entries.push_back(std::move(e));
  }

  // The byte ranges must tile the data region exactly, in order.
  h.data_order.resize(h.entries.size());
  std::iota(h.data_order.begin(), h.data_order.end(), size_t{0});
  std::stable_sort(h.data_order.begin(), h.data_order.end(), [&](size_t a, size_t b) {
    const Entry &x = h.entries[a], &y = h.entries[b];
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  uint64_t covered = 0;
  const Entry* prev = nullptr;
  for (size_t i : h.data_order) {
    const Entry& e = h.entries[i];
    if (e.begin < covered) {
      fail("tensors '" + prev->name + "' [" + std::to_string(prev->begin) + ", " +
           std::to_string(prev->end) + "] and '" + e.name + "' [" + std::to_string(e.begin) + ", " +
           std::to_string(e.end) + "] overlap");
    }
    if (e.begin > covered) {
      fail("bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
           ") of the data region belong to no tensor");
    }
    covered = e.end;
    prev = &e;
  }
  const uint64_t data_size = size - h.data_start;
  if (covered > data_size) {
    fail("truncated: header says " + std::to_string(h.data_start + covered) + " bytes, file has " +
         std::to_string(size));
  }
  if (covered < data_size) {
    fail(std::to_string(data_size - covered) +
         " bytes after the last tensor's data (tensors cover " + std::to_string(covered) + " of " +
         std::to_string(data_size) + " data bytes)");
  }
  return h;
}

Tensor read_tensor(const InputFile& file, const Header& h, const Entry& e, const char* op,
                   bool pinned) {
  std::string where = "[";  // appended, not "[" + ...: gcc 12 warns falsely (-Wrestrict) on that
  where.append(op).append("] '").append(file.path()).append("': tensor '").append(e.name);
  Tensor t;
  try {
    t = empty(e.shape, TensorOptions(e.dtype).pinned_memory(pinned));
  } catch (const OutOfMemoryError& err) {
    throw OutOfMemoryError(where + "': " + err.what());
  } catch (const Error& err) {  // a shape ember cannot represent (strides beyond int64)
    throw Error(where + "': " + err.what());
  }
  file.read_at(t.data_ptr(), e.end - e.begin, h.data_start + e.begin);
  if (e.dtype == kBool) {
    const auto* p = static_cast<const unsigned char*>(t.data_ptr());
    for (uint64_t i = 0; i < e.end - e.begin; ++i) {
      if (p[i] > 1) {
        throw Error(where + "': BOOL element " + std::to_string(i) + " is byte " +
                    std::to_string(p[i]) + ", not 0 or 1");
      }
    }
  }
  return t;
}

Tensor to_device(const Tensor& t, Device device, const std::string& path, const char* op) {
  if (device.is_cpu()) return t;
  try {
    return t.to(device);
  } catch (const Error& err) {
    throw Error("[" + std::string(op) + "] '" + path + "': cannot move the tensors to " +
                device.str() + ": " + err.what());
  }
}

std::vector<HostTensor> to_host(const OrderedDict<std::string, Tensor>& tensors, const char* op) {
  std::vector<HostTensor> out;
  out.reserve(tensors.size());
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") {
      throw ValueError("[" + std::string(op) + "] '__metadata__' cannot name a tensor");
    }
    if (!t.defined())
      throw ValueError("[" + std::string(op) + "] tensor '" + name + "' is undefined");
    Tensor h = t.detach().contiguous();
    if (!h.is_cpu()) h = h.cpu();
    out.push_back({name, h});
  }
  std::sort(out.begin(), out.end(), [](const HostTensor& a, const HostTensor& b) {
    const int ra = info(a.data.dtype()).rank, rb = info(b.data.dtype()).rank;
    return ra != rb ? ra > rb : a.name < b.name;
  });
  return out;
}

std::string make_header(const std::vector<HostTensor>& tensors,
                        const std::map<std::string, std::string>& metadata) {
  std::string j = "{";
  if (!metadata.empty()) {
    j += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      if (!first) j += ',';
      first = false;
      json::append_string(j, k);
      j += ':';
      json::append_string(j, v);
    }
    j += '}';
  }
  uint64_t offset = 0;
  for (const HostTensor& t : tensors) {
    if (j.size() > 1) j += ',';
    json::append_string(j, t.name);
    j += ":{\"dtype\":\"";
    j += safetensors_dtype(t.data.dtype());
    j += "\",\"shape\":[";
    for (int64_t d = 0; d < t.data.dim(); ++d) {
      if (d) j += ',';
      j += std::to_string(t.data.size(d));
    }
    const uint64_t end = offset + t.data.nbytes();
    j += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  j += '}';
  j.append((8 - j.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = j.size();
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + j;
}

}  // namespace detail

void save_safetensors(const std::string& path, const OrderedDict<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const char* op = "save_safetensors";
  const std::vector<detail::HostTensor> host = detail::to_host(tensors, op);
  const std::string header = detail::make_header(host, metadata);
  detail::AtomicFile f(path, op);
  f.write(header.data(), header.size());
  for (const detail::HostTensor& t : host) f.write(t.data.data_ptr(), t.data.nbytes());
  f.commit();
}

OrderedDict<std::string, Tensor> load_safetensors(const std::string& path, Device device) {
  const char* op = "load_safetensors";
  detail::InputFile f(path, op);
  const detail::Header h = detail::read_header(f, op);
  OrderedDict<std::string, Tensor> out;
  if (!device.is_cpu()) {
    // The device is checked before any data is read (an empty tensor makes the backend say why
    // it is unusable).
    detail::to_device(empty({0}), device, path, op);
  }
  for (const detail::Entry& e : h.entries) {
    // Staged in pinned memory when the tensor goes to a device (a direct DMA copy).
    Tensor t = detail::read_tensor(f, h, e, op, !device.is_cpu());
    out.insert(e.name, detail::to_device(t, device, path, op));
  }
  return out;
}

std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  const char* op = "load_safetensors_metadata";
  detail::InputFile f(path, op);
  return detail::read_header(f, op).metadata;
}

}  // namespace ember::io
