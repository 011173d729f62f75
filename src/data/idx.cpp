// IDX reader and writer over zlib's gz* streams, which read plain and gzip files alike.
#include "ember/data/idx.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
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

// The bytes of an IDX file, plain or gzip-compressed (gzip magic 1f 8b first). The file is opened
// without blocking and must be a regular file, so a FIFO or a device is refused, not waited on.
// A gzip file is inflated here rather than through gzread, which silently ignores trailing bytes
// after the last gzip member: those are refused like the trailing bytes of a plain file.
class Source {
 public:
  explicit Source(const std::string& path) : path_(path) {
    fd_.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd_.fd < 0) fail(path_, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_.fd, &st) != 0) fail(path_, std::string("cannot stat: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) fail(path_, "not a regular file");
    file_size_ = static_cast<uint64_t>(st.st_size);
    const int flags = ::fcntl(fd_.fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd_.fd, F_SETFL, flags & ~O_NONBLOCK);
    fill();
    gzip_ = in_end_ >= 2 && in_[0] == 0x1F && in_[1] == 0x8B;
    if (gzip_) {
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) fail(path_, "cannot start gzip decoding");
      zinit_ = true;
    }
  }
  ~Source() {
    if (zinit_) inflateEnd(&zs_);
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  bool gzip() const { return gzip_; }
  uint64_t file_size() const { return file_size_; }

  // Reads up to n bytes; fewer only at the end of the data.
  size_t read(void* dst, size_t n) {
    auto* out = static_cast<unsigned char*>(dst);
    size_t done = 0;
    while (done < n) {
      const size_t got =
          gzip_ ? inflate_some(out + done, n - done) : copy_some(out + done, n - done);
      if (got == 0) break;
      done += got;
    }
    return done;
  }

 private:
  // Refills the input buffer once it is used up; false at the end of the file.
  bool fill() {
    if (in_pos_ < in_end_) return true;
    in_pos_ = in_end_ = 0;
    for (;;) {
      const ssize_t got = ::read(fd_.fd, in_, sizeof in_);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(path_, std::string("read error: ") + std::strerror(errno));
      in_end_ = static_cast<size_t>(got);
      return got > 0;
    }
  }

  size_t copy_some(unsigned char* out, size_t n) {
    if (!fill()) return 0;
    const size_t k = std::min(n, in_end_ - in_pos_);
    std::memcpy(out, in_ + in_pos_, k);
    in_pos_ += k;
    return k;
  }

  size_t inflate_some(unsigned char* out, size_t n) {
    for (;;) {
      if (!fill()) {
        // Bytes after a complete member that are too short to be one are trailing garbage; a
        // first member cut short is a truncated file (the caller finds the data short).
        if (next_member_ && member_output_ == 0) {
          fail(path_, "size mismatch: trailing bytes after the gzip stream");
        }
        return 0;
      }
      if (member_done_) {
        // More bytes after a complete member: another member, or trailing garbage.
        if (inflateReset(&zs_) != Z_OK) fail(path_, "cannot restart gzip decoding");
        member_done_ = false;
        member_output_ = 0;
        next_member_ = true;
      }
      zs_.next_in = in_ + in_pos_;
      zs_.avail_in = static_cast<uInt>(in_end_ - in_pos_);
      zs_.next_out = out;
      zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
      const int rc = ::inflate(&zs_, Z_NO_FLUSH);
      in_pos_ = in_end_ - zs_.avail_in;
      const size_t produced = std::min<size_t>(n, 1u << 30) - zs_.avail_out;
      member_output_ += produced;
      if (rc == Z_STREAM_END) {
        member_done_ = true;
        next_member_ = false;
      } else if (rc == Z_DATA_ERROR && next_member_ && member_output_ == 0) {
        fail(path_, "size mismatch: trailing bytes after the gzip stream");
      } else if (rc == Z_MEM_ERROR) {
        fail(path_, "out of memory while decompressing");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        fail(path_, std::string("corrupt gzip stream: ") + (zs_.msg ? zs_.msg : "inflate failed"));
      }
      if (produced > 0) return produced;
    }
  }

  // Closed by its own destructor, so a constructor that throws does not leak it.
  struct Fd {
    int fd = -1;
    ~Fd() {
      if (fd >= 0) ::close(fd);
    }
  };
  std::string path_;
  Fd fd_;
  uint64_t file_size_ = 0;
  unsigned char in_[1 << 16];
  size_t in_pos_ = 0, in_end_ = 0;
  bool gzip_ = false, zinit_ = false;
  z_stream zs_{};
  bool member_done_ = false, next_member_ = false;
  uint64_t member_output_ = 0;
};

// Reads exactly n bytes; false at the end of the data.
bool read_exact(Source& src, void* dst, size_t n) { return src.read(dst, n) == n; }

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

// deflate's best ratio is about 1032:1; a claimed size beyond this many times the file is a lie.
constexpr uint64_t kMaxGzipRatio = 1100;

std::string shape_str(const std::vector<int64_t>& dims) {
  std::string r = "[";
  for (size_t i = 0; i < dims.size(); ++i) r += (i ? ", " : "") + std::to_string(dims[i]);
  return r + "]";
}

constexpr IdxType kTypes[] = {
    {0x08, kUInt8, 1}, {0x09, kInt8, 1},    {0x0B, kInt32, 2},
    {0x0C, kInt32, 4}, {0x0D, kFloat32, 4}, {0x0E, kFloat64, 8},
};

}  // namespace

Tensor read_idx(const std::string& path) {
  Source src(path);

  unsigned char head[4];
  if (!read_exact(src, head, 4)) fail(path, "truncated file: no 4-byte header");
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

  // The header is checked against the data before anything is allocated: the element count must
  // fit in int64 and its bytes in the file (a plain file's size is exact; a gzip stream expands
  // at most kMaxGzipRatio times).
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  const size_t elem = type->file_size;
  uint64_t numel = 1;
  bool overflow = false;
  for (int d = 0; d < rank; ++d) {
    unsigned char b[4];
    if (!read_exact(src, b, 4)) {
      fail(path, "truncated file: header ends after " + std::to_string(d) + " of " +
                     std::to_string(rank) + " dims");
    }
    const uint32_t dim = big_endian32(b);
    dims[static_cast<size_t>(d)] = dim;
    if (dim != 0 && numel > static_cast<uint64_t>(INT64_MAX) / elem / dim) overflow = true;
    numel *= dim;
  }
  if (overflow && numel != 0) {
    fail(path,
         "size mismatch: header dims " + shape_str(dims) + " hold more than 2^63 bytes of data");
  }
  const uint64_t header = 4 + 4 * static_cast<uint64_t>(rank);
  const uint64_t nbytes = numel * elem;
  const std::string claim = "header says " + std::to_string(numel) + " elements (" +
                            std::to_string(nbytes) + " bytes of data)";
  if (!src.gzip()) {
    if (src.file_size() < header + nbytes) {
      fail(path, "truncated file: " + claim + ", file has " +
                     std::to_string(src.file_size() - header) + " after the header");
    }
    if (src.file_size() > header + nbytes) {
      fail(path, "size mismatch: trailing bytes after the " + std::to_string(numel) +
                     " elements the header announces (" + claim + ", file has " +
                     std::to_string(src.file_size() - header) + ")");
    }
  } else if (nbytes / kMaxGzipRatio > src.file_size()) {
    fail(path, "truncated file: " + claim + ", more than a gzip stream of " +
                   std::to_string(src.file_size()) + " bytes can hold");
  }

  // The data, staged in a buffer that grows only as data arrives (a gzip stream's length is known
  // only at its end); an allocation failure names the file.
  std::vector<unsigned char> raw;
  uint64_t got = 0;
  try {
    while (got < nbytes) {
      const uint64_t want = std::min<uint64_t>(nbytes, std::max<uint64_t>(got * 2, 1 << 20));
      raw.resize(static_cast<size_t>(want));
      const size_t n = src.read(raw.data() + got, static_cast<size_t>(want - got));
      got += n;
      if (got < want) break;
    }
  } catch (const std::bad_alloc&) {
    fail(path, "out of memory: cannot allocate " + std::to_string(nbytes) + " bytes of data");
  }
  if (got < nbytes) {
    fail(path, "truncated file: " + claim + ", data ends after " + std::to_string(got) + " bytes");
  }
  unsigned char extra;
  if (src.read(&extra, 1) == 1) {
    fail(path, "size mismatch: trailing bytes after the " + std::to_string(numel) +
                   " elements the header announces");
  }
  swap_elements(raw.data(), static_cast<size_t>(numel), elem);
  Tensor out;
  try {
    out = empty(Shape(dims), TensorOptions().dtype(type->dtype));
  } catch (const OutOfMemoryError& e) {
    fail(path, std::string("out of memory: ") + e.what());
  } catch (const Error& e) {  // a shape ember cannot represent (strides beyond int64)
    fail(path, e.what());
  }
  if (elem == element_size(type->dtype)) {
    if (nbytes > 0) std::memcpy(out.data_ptr(), raw.data(), static_cast<size_t>(nbytes));
  } else {
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
