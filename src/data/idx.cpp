// IDX reader and writer over zlib's gz* streams, which read plain and gzip files alike.
#include "ember/data/idx.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error("[idx] " + path + ": " + what);
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08X", v);
  return buf;
}

struct GzFile {
  gzFile f = nullptr;
  ~GzFile() {
    if (f) gzclose(f);
  }
};

// Reads exactly n bytes; false at end of file. Errors other than EOF throw.
bool read_exact(gzFile f, const std::string& path, void* dst, size_t n) {
  auto* p = static_cast<unsigned char*>(dst);
  while (n > 0) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n, 1u << 30));
    const int got = gzread(f, p, chunk);
    if (got < 0) {
      int err = 0;
      const char* msg = gzerror(f, &err);
      if (err == Z_BUF_ERROR) return false;  // a gzip stream cut short
      fail(path, std::string("read error: ") + msg);
    }
    if (got == 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

uint32_t big_endian32(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

// Byte-swaps `count` elements of `size` bytes in place (IDX data is big-endian).
void swap_elements(unsigned char* p, size_t count, size_t size) {
  if (size == 1) return;
  for (size_t i = 0; i < count; ++i, p += size) {
    for (size_t a = 0, b = size - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
  }
}

struct IdxType {
  uint8_t code;
  DType dtype;
  size_t file_size;  // bytes per element in the file
};

constexpr IdxType kTypes[] = {
    {0x08, kUInt8, 1}, {0x09, kInt8, 1},    {0x0B, kInt32, 2},
    {0x0C, kInt32, 4}, {0x0D, kFloat32, 4}, {0x0E, kFloat64, 8},
};

}  // namespace

Tensor read_idx(const std::string& path) {
  GzFile file;
  file.f = gzopen(path.c_str(), "rb");
  if (!file.f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  gzbuffer(file.f, 1 << 17);

  unsigned char head[4];
  if (!read_exact(file.f, path, head, 4)) fail(path, "truncated file: no 4-byte header");
  const uint32_t magic = big_endian32(head);
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (head[2] == t.code) type = &t;
  }
  const int rank = head[3];
  if (head[0] != 0 || head[1] != 0 || !type) {
    fail(path, "bad magic " + hex32(magic) +
                   " (expected 0x00000TRR: type 08/09/0B/0C/0D/0E, rank RR): not an IDX file");
  }

  std::vector<int64_t> dims(static_cast<size_t>(rank));
  uint64_t numel = 1;
  for (int d = 0; d < rank; ++d) {
    unsigned char b[4];
    if (!read_exact(file.f, path, b, 4)) {
      fail(path, "truncated file: header ends after " + std::to_string(d) + " of " +
                     std::to_string(rank) + " dims");
    }
    dims[static_cast<size_t>(d)] = big_endian32(b);
    numel *= big_endian32(b);
    if (numel > (uint64_t{1} << 40)) fail(path, "size mismatch: header dims are implausibly large");
  }

  const size_t elem = type->file_size;
  const size_t nbytes = static_cast<size_t>(numel) * elem;
  std::vector<unsigned char> raw;
  Tensor out = empty(Shape(dims), TensorOptions().dtype(type->dtype));
  // Elements of the file's width read straight into the output unless int16 must be widened.
  unsigned char* dst = static_cast<unsigned char*>(out.data_ptr());
  if (elem != element_size(type->dtype)) {
    raw.resize(nbytes);
    dst = raw.data();
  }
  if (nbytes > 0 && !read_exact(file.f, path, dst, nbytes)) {
    const z_off_t pos = gztell(file.f);
    fail(path, "truncated file: header says " + std::to_string(numel) + " elements (" +
                   std::to_string(nbytes) + " bytes of data), file ends at byte " +
                   std::to_string(static_cast<long long>(pos)));
  }
  unsigned char extra;
  if (read_exact(file.f, path, &extra, 1)) {
    fail(path, "size mismatch: trailing bytes after the " + std::to_string(numel) +
                   " elements the header announces");
  }
  swap_elements(dst, static_cast<size_t>(numel), elem);
  if (!raw.empty()) {
    int32_t* o = out.data_ptr<int32_t>();
    int16_t v;
    for (size_t i = 0; i < numel; ++i) {
      std::memcpy(&v, raw.data() + 2 * i, 2);
      o[i] = v;
    }
  }
  return out;
}

void write_idx(const std::string& path, const Tensor& tensor, bool compress) {
  const IdxType* type = nullptr;
  for (const IdxType& t : kTypes) {
    if (t.dtype == tensor.dtype() && t.file_size == element_size(t.dtype)) type = &t;
  }
  if (!type) {
    throw TypeError("[idx] " + path + ": cannot write dtype " +
                    std::string(dtype_name(tensor.dtype())) +
                    " (IDX holds uint8, int8, int32, float32, float64)");
  }
  if (tensor.dim() > 255) fail(path, "rank " + std::to_string(tensor.dim()) + " exceeds 255");
  Tensor t = tensor.cpu().contiguous();

  std::vector<unsigned char> bytes = {0, 0, type->code, static_cast<unsigned char>(t.dim())};
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) > std::numeric_limits<uint32_t>::max()) fail(path, "dim exceeds 2^32 - 1");
    const uint32_t s = static_cast<uint32_t>(t.size(d));
    for (int k = 3; k >= 0; --k) bytes.push_back(static_cast<unsigned char>(s >> (8 * k)));
  }
  const size_t head = bytes.size();
  bytes.resize(head + t.nbytes());
  if (t.nbytes() > 0) std::memcpy(bytes.data() + head, t.data_ptr(), t.nbytes());
  swap_elements(bytes.data() + head, static_cast<size_t>(t.numel()), type->file_size);

  GzFile file;
  file.f = gzopen(path.c_str(), compress ? "wb6" : "wbT");  // T: plain, no gzip wrapper
  if (!file.f) fail(path, std::string("cannot create: ") + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(bytes.size() - done, 1u << 30));
    if (gzwrite(file.f, bytes.data() + done, chunk) != static_cast<int>(chunk)) {
      fail(path, "write error");
    }
    done += chunk;
  }
  if (gzclose(file.f) != Z_OK) {
    file.f = nullptr;
    fail(path, "write error on close");
  }
  file.f = nullptr;
}

}  // namespace ember::data
