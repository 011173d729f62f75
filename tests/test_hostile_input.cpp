// Hostile input: files built to exhaust time or memory, or to reach undefined behaviour, must be
// refused quickly with an error naming the file and the problem.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "ember/ember.h"
#include "io/json.h"
#include "test_util.h"

using namespace ember;
using ember_test::expect_error;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A safetensors file with this JSON header (padded as the format does) and no data.
std::string safetensors_bytes(const std::string& json) {
  std::string h = json;
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
  return out + h;
}

std::string temp_path(const std::string& name) {
  return testing::TempDir() + "ember_hostile_" + std::to_string(getpid()) + "_" + name;
}

// Seconds to read the metadata of a file whose header has n keys.
double metadata_parse_seconds(const std::string& path, int n) {
  std::string j = "{\"__metadata__\":{";
  for (int i = 0; i < n; ++i) j += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":\"\"";
  j += "}}";
  write_bytes(path, safetensors_bytes(j));
  const auto t0 = std::chrono::steady_clock::now();
  const auto meta = io::load_safetensors_metadata(path);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(meta.size(), static_cast<size_t>(n));
  return s;
}

}  // namespace

// ---- safetensors / checkpoint headers -----------------------------------------------------------

// 200k keys parse in about ten times the time of 20k: a parser quadratic in the key count (a
// linear duplicate search per key) takes about a hundred times as long.
TEST(HostileSafetensors, HeaderParseScalesLinearlyWithKeys) {
  const std::string p = temp_path("keys.safetensors");
  double small = 1e9, large = 1e9;  // the fastest of three runs: noise only slows a run down
  for (int i = 0; i < 3; ++i) small = std::min(small, metadata_parse_seconds(p, 20000));
  for (int i = 0; i < 3; ++i) large = std::min(large, metadata_parse_seconds(p, 200000));
  unlink(p.c_str());
  EXPECT_LT(large, 40 * std::max(small, 1e-3)) << "20k keys: " << small << " s, 200k: " << large;
}

TEST(HostileSafetensors, DuplicateKeysFoundAmongMany) {
  const std::string p = temp_path("dup.safetensors");
  std::string j = "{\"__metadata__\":{";
  for (int i = 0; i < 1000; ++i) j += "\"k" + std::to_string(i) + "\":\"\",";
  j += "\"k500\":\"\",\"k7\":\"\"}}";
  write_bytes(p, safetensors_bytes(j));
  expect_error([&] { io::load_safetensors_metadata(p); }, p + "': invalid JSON header");
  // The first duplicate in the text is the one reported, with its offset.
  expect_error([&] { io::load_safetensors_metadata(p); },
               "duplicate key 'k500' at byte " + std::to_string(j.rfind("\"k500\"")));
  unlink(p.c_str());
}

TEST(HostileSafetensors, HeaderLengthCapIsCheckedBeforeReading) {
  const std::string p = temp_path("huge.safetensors");
  std::string b = safetensors_bytes("{}");
  const uint64_t n = 100'000'001;
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  write_bytes(p, b);
  expect_error([&] { io::load_safetensors(p); },
               "[load_safetensors] '" + p +
                   "': header length 100000001 exceeds the limit of 100000000 bytes");
  unlink(p.c_str());
}

TEST(HostileSafetensors, JsonValueAndKeyLimits) {
  io::json::Limits l;
  l.max_keys = 3;
  EXPECT_NO_THROW(io::json::parse(R"({"a":{"b":1},"c":2})", l));
  expect_error<std::invalid_argument>([&] { io::json::parse(R"({"a":{"b":1},"c":2,"d":3})", l); },
                                      "more than 3 keys at byte 19");
  l = {};
  l.max_values = 5;  // the root, 1, [2], 2, 3
  EXPECT_NO_THROW(io::json::parse("[1,[2],3]", l));
  expect_error<std::invalid_argument>([&] { io::json::parse("[1,[2],3,4]", l); },
                                      "more than 5 values");
  // The defaults are the documented ones.
  EXPECT_EQ(io::json::Limits{}.max_values, size_t{1} << 23);
  EXPECT_EQ(io::json::Limits{}.max_keys, size_t{1} << 22);
}

// ---- in-place writes through expanded (stride-0) views ------------------------------------------

namespace {

// Every row of the element-wise table, by name.
std::vector<std::string> table_rows() {
  std::vector<std::string> names;
#define EMBER_UNARY_OP(Enum, name, ...) names.push_back(#name);
#define EMBER_BINARY_OP(Enum, name, ...) names.push_back(#name);
#define EMBER_TERNARY_OP(Enum, name, ...) names.push_back(#name);
#include "kernels/elementwise_ops.def"
#undef EMBER_UNARY_OP
#undef EMBER_BINARY_OP
#undef EMBER_TERNARY_OP
  return names;
}

using InPlace = std::function<void(Tensor&)>;

// The in-place form of each table row that has one (several for some rows).
std::map<std::string, std::vector<InPlace>> inplace_forms() {
  const Tensor o = ones({4});
  return {
      {"neg", {[](Tensor& t) { t.neg_(); }}},
      {"abs", {[](Tensor& t) { t.abs_(); }}},
      {"exp", {[](Tensor& t) { t.exp_(); }}},
      {"log", {[](Tensor& t) { t.log_(); }}},
      {"sqrt", {[](Tensor& t) { t.sqrt_(); }}},
      {"relu", {[](Tensor& t) { t.relu_(); }}},
      {"sigmoid", {[](Tensor& t) { t.sigmoid_(); }}},
      {"tanh", {[](Tensor& t) { t.tanh_(); }}},
      {"clamp", {[](Tensor& t) { t.clamp_(0.0, 1.0); }}},
      {"pow_scalar", {[](Tensor& t) { t.pow_(2); }}},
      {"add",
       {[o](Tensor& t) { t.add_(o); }, [](Tensor& t) { t.add_(1); }, [o](Tensor& t) { t += o; }}},
      {"sub",
       {[o](Tensor& t) { t.sub_(o); }, [](Tensor& t) { t.sub_(1); }, [o](Tensor& t) { t -= o; }}},
      {"mul",
       {[o](Tensor& t) { t.mul_(o); }, [](Tensor& t) { t.mul_(2); }, [](Tensor& t) { t *= 2; }}},
      {"div",
       {[o](Tensor& t) { t.div_(o); }, [](Tensor& t) { t.div_(2); }, [](Tensor& t) { t /= 2; }}},
      {"div_trunc", {[o](Tensor& t) { t.div_(o, "trunc"); }}},
      {"div_floor", {[](Tensor& t) { t.div_(2, "floor"); }}},
      {"lerp", {[o](Tensor& t) { t.lerp_(o, 0.5); }}},
      {"addcmul", {[o](Tensor& t) { t.addcmul_(o, o, 2); }}},
      {"addcdiv", {[o](Tensor& t) { t.addcdiv_(o, o, 2); }}},
  };
}

// The other in-place ops, outside the table.
std::vector<std::pair<std::string, InPlace>> other_inplace_ops() {
  return {
      {"copy_", [](Tensor& t) { t.copy_(arange(4.0)); }},
      {"masked_fill_",
       [](Tensor& t) {
         t.masked_fill_(tensor({true, false, true, false}), 2);
       }},
      {"scatter_", [](Tensor& t) { t.scatter_(0, tensor({int64_t{1}}), ones({1})); }},
      {"scatter_", [](Tensor& t) { t.scatter_(0, tensor({int64_t{1}}), 3); }},
      {"scatter_add_", [](Tensor& t) { t.scatter_add_(0, tensor({int64_t{1}}), ones({1})); }},
      {"index_put_", [](Tensor& t) { t.index_put_({tensor({int64_t{2}})}, ones({1})); }},
      {"uniform_", [](Tensor& t) { t.uniform_(); }},
      {"normal_", [](Tensor& t) { t.normal_(); }},
  };
}

const std::string kOverlap =
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation.";

}  // namespace

TEST(HostileInPlace, EveryTableOpRefusesAnExpandedDestination) {
  const auto forms = inplace_forms();
  // Rows with no in-place form in the API: a row that gains one must be added above.
  const std::set<std::string> without = {"sign",
                                         "exp2",
                                         "log2",
                                         "log1p",
                                         "expm1",
                                         "rsqrt",
                                         "reciprocal",
                                         "sin",
                                         "cos",
                                         "tan",
                                         "erf",
                                         "gelu",
                                         "gelu_tanh",
                                         "silu",
                                         "softplus",
                                         "elu",
                                         "leaky_relu",
                                         "floor",
                                         "ceil",
                                         "round",
                                         "trunc",
                                         "logical_not",
                                         "bitwise_not",
                                         "isnan",
                                         "isinf",
                                         "isfinite",
                                         "pow",
                                         "maximum",
                                         "minimum",
                                         "fmod",
                                         "remainder",
                                         "atan2",
                                         "logaddexp",
                                         "logaddexp2",
                                         "relu_backward",
                                         "eq",
                                         "ne",
                                         "lt",
                                         "le",
                                         "gt",
                                         "ge",
                                         "logical_and",
                                         "logical_or",
                                         "logical_xor",
                                         "bitwise_and",
                                         "bitwise_or",
                                         "bitwise_xor",
                                         "bitwise_left_shift",
                                         "bitwise_right_shift",
                                         "where",
                                         "clamp_tensor"};
  size_t walked = 0;
  for (const std::string& row : table_rows()) {
    auto it = forms.find(row);
    if (it == forms.end()) {
      EXPECT_TRUE(without.count(row)) << "table row '" << row << "' is in neither list";
      continue;
    }
    for (const InPlace& f : it->second) {
      Tensor base = full({1}, 0.5);
      Tensor view = base.expand({4});
      expect_error([&] { f(view); }, kOverlap);
      EXPECT_EQ(base.item<double>(), 0.5) << row << ": the storage was written";
      // The same op on a contiguous tensor works.
      Tensor plain = full({4}, 0.5);
      EXPECT_NO_THROW(f(plain)) << row;
      ++walked;
    }
  }
  for (const auto& [name, _] : forms) {
    const auto rows = table_rows();
    EXPECT_NE(std::find(rows.begin(), rows.end(), name), rows.end()) << name << " is no row";
  }
  EXPECT_GE(walked, 25u);
}

TEST(HostileInPlace, OtherInPlaceOpsRefuseAnExpandedDestination) {
  for (const auto& op : other_inplace_ops()) {
    const std::string& name = op.first;
    const InPlace& f = op.second;
    Tensor base = full({1}, 0.5);
    Tensor view = base.expand({4});
    expect_error([&] { f(view); }, "[" + name + "] " + kOverlap);
    EXPECT_EQ(base.item<double>(), 0.5) << name;
    Tensor plain = full({4}, 0.5);
    EXPECT_NO_THROW(f(plain)) << name;
  }
  // A stride-0 dim of size 1, or an expanded source, is no overlap.
  Tensor a = zeros({1}).expand({1});
  a.add_(1);
  EXPECT_EQ(a.item<double>(), 1.0);
  Tensor b = zeros({4});
  b.add_(ones({1}).expand({4}));
  EXPECT_EQ(b.sum().item<double>(), 4.0);
  // The issue's example, and autograd's path through it.
  expect_error([] { zeros({1}).expand({4}).add_(1); }, "[add_] " + kOverlap);
  Tensor leaf = zeros({1}, TensorOptions().requires_grad(true));
  Tensor x = leaf * 1;
  Tensor xe = x.expand({4});
  expect_error([&] { xe.mul_(2); }, "[mul_] " + kOverlap);
  // fill_ and zero_ write one value everywhere, as in PyTorch: allowed.
  Tensor base = zeros({1});
  Tensor e = base.expand({3});
  e.fill_(7);
  EXPECT_EQ(base.item<double>(), 7.0);
  e.zero_();
  EXPECT_EQ(base.item<double>(), 0.0);
}

// ---- IDX ----------------------------------------------------------------------------------------

namespace {

std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, size_t data_bytes) {
  std::string b = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int k = 3; k >= 0; --k) b += static_cast<char>((d >> (8 * k)) & 0xFF);
  }
  for (size_t i = 0; i < data_bytes; ++i) b += static_cast<char>(i * 37 % 251);
  return b;
}

// Writes bytes as a gzip file of `members` gzip members (split evenly).
void write_gzip(const std::string& path, const std::string& bytes, int members = 1,
                const char* mode = "wb") {
  const size_t part = bytes.size() / static_cast<size_t>(members) + 1;
  for (int m = 0; m < members; ++m) {
    gzFile f = gzopen(path.c_str(), m == 0 ? mode : "ab");
    ASSERT_NE(f, nullptr);
    const size_t begin = std::min(bytes.size(), part * static_cast<size_t>(m));
    const size_t n = std::min(part, bytes.size() - begin);
    if (n > 0) ASSERT_EQ(gzwrite(f, bytes.data() + begin, static_cast<unsigned>(n)), int(n));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Runs fn in a child process: true when it returns within `seconds` (a blocked call is killed).
bool finishes_within(int seconds, const std::function<void()>& fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    fn();
    _exit(0);
  }
  for (int i = 0; i < seconds * 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return false;
}

}  // namespace

TEST(HostileIdx, ClaimedSizeIsCheckedAgainstThePlainFileFirst) {
  const std::string p = temp_path("claim.idx");
  // 2^39 bytes claimed by a 20-byte file: refused without trying to allocate them.
  write_bytes(p, idx_bytes(0x08, {1u << 20, 1u << 19}, 8));
  expect_error([&] { data::read_idx(p); },
               "[idx] " + p +
                   ": truncated file: header says 549755813888 elements (549755813888 "
                   "bytes of data), file has 8 after the header");
  // An 8-byte int16 header claiming 1.2 GB.
  write_bytes(p, idx_bytes(0x0B, {600'000'000}, 0));
  expect_error([&] { data::read_idx(p); }, "[idx] " + p + ": truncated file: header says");
  // A dims product beyond 2^63 bytes (it would wrap uint64 at rank 3).
  write_bytes(p, idx_bytes(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 0));
  expect_error([&] { data::read_idx(p); },
               "[idx] " + p +
                   ": size mismatch: header dims [4294967295, 4294967295, 4294967295] "
                   "hold more than 2^63 bytes");
  // Trailing bytes, and an exact file.
  write_bytes(p, idx_bytes(0x08, {3}, 4));
  expect_error([&] { data::read_idx(p); }, "[idx] " + p + ": size mismatch: trailing bytes");
  write_bytes(p, idx_bytes(0x08, {3}, 3));
  EXPECT_EQ(data::read_idx(p).sizes(), Shape({3}));
  // Zero elements with huge other dims: no data, a tensor of the file's shape.
  write_bytes(p, idx_bytes(0x08, {0, 0xFFFFFFFF}, 0));
  EXPECT_EQ(data::read_idx(p).sizes(), Shape({0, 0xFFFFFFFF}));
  unlink(p.c_str());
}

TEST(HostileIdx, GzipStreamIsValidatedLikeAPlainFile) {
  const std::string p = temp_path("g.idx.gz");
  // A claim no gzip stream of this size can hold.
  write_gzip(p, idx_bytes(0x08, {1u << 20, 1u << 19}, 8));
  expect_error([&] { data::read_idx(p); }, "[idx] " + p + ": truncated file: header says");
  // A claim within the ratio but beyond the stream's data: the buffer grows only with the data.
  write_gzip(p, idx_bytes(0x08, {1u << 16}, 1000));
  expect_error([&] { data::read_idx(p); },
               "[idx] " + p +
                   ": truncated file: header says 65536 elements (65536 bytes of "
                   "data), data ends after 1000 bytes");
  // Trailing garbage after the gzip stream is refused, like trailing bytes in a plain file.
  write_gzip(p, idx_bytes(0x08, {3}, 3));
  const std::string good = file_bytes(p);
  EXPECT_EQ(data::read_idx(p).sizes(), Shape({3}));
  write_bytes(p, good + "garbage!");
  expect_error([&] { data::read_idx(p); },
               "[idx] " + p + ": size mismatch: trailing bytes after the gzip stream");
  write_bytes(p, good + std::string(1, '\0'));
  expect_error([&] { data::read_idx(p); }, "[idx] " + p + ": size mismatch");
  // Extra data inside the stream too.
  write_gzip(p, idx_bytes(0x08, {3}, 5));
  expect_error([&] { data::read_idx(p); }, "[idx] " + p + ": size mismatch: trailing bytes");
  // Several gzip members (gzip's concatenation) are one stream.
  write_gzip(p, idx_bytes(0x08, {2, 50}, 100), 3);
  Tensor t = data::read_idx(p);
  EXPECT_EQ(t.sizes(), Shape({2, 50}));
  EXPECT_TRUE(equal(t.flatten(), arange(100).mul(37).remainder(251).to(kUInt8)));
  // A corrupt stream.
  std::string bad = good;
  bad[bad.size() / 2] ^= 0x55;
  bad[bad.size() / 2 + 1] ^= 0x55;
  write_bytes(p, bad);
  EXPECT_NE(ember_test::error_of([&] { data::read_idx(p); }).find("[idx] " + p + ": "),
            std::string::npos);
  unlink(p.c_str());
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EMBER_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EMBER_TEST_SANITIZED 1
#endif
#endif
#ifndef EMBER_TEST_SANITIZED
// Out of memory while reading names the file (in a child whose address space is capped; the
// sanitizers reserve more address space than such a cap allows, so they skip this one).
TEST(HostileIdx, OutOfMemoryNamesTheFile) {
  const std::string p = temp_path("big.idx.gz");
  write_gzip(p, idx_bytes(0x08, {256u << 20}, 256u << 20), 1, "wb1");
  const pid_t pid = fork();
  if (pid == 0) {
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    statm >> pages;
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max =
        pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) + (uint64_t{128} << 20);
    setrlimit(RLIMIT_AS, &lim);
    const std::string e = ember_test::error_of([&] { data::read_idx(p); });
    _exit(e.find("[idx] " + p + ": out of memory") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  unlink(p.c_str());
}
#endif

// ---- non-regular files --------------------------------------------------------------------------

TEST(HostileFiles, FifoIsRefusedWithoutBlocking) {
  const std::string p = temp_path("fifo");
  unlink(p.c_str());
  ASSERT_EQ(mkfifo(p.c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::function<void()>>> loaders = {
      {"[idx] " + p + ": not a regular file", [&] { data::read_idx(p); }},
      {"[load_safetensors] '" + p + "': not a regular file", [&] { io::load_safetensors(p); }},
      {"[load_safetensors_metadata] '" + p + "': not a regular file",
       [&] { io::load_safetensors_metadata(p); }},
      {"[load_checkpoint] '" + p + "': not a regular file", [&] { io::load_checkpoint(p); }},
  };
  for (const auto& loader : loaders) {
    const std::string& message = loader.first;
    const std::function<void()>& load = loader.second;
    EXPECT_TRUE(finishes_within(20, [&] {
      const std::string e = ember_test::error_of(load);
      if (e.find(message) == std::string::npos) {
        std::fprintf(stderr, "got: %s\n", e.c_str());
        _exit(1);
      }
    })) << message;
  }
  // A directory is no regular file either, and a refusal leaves no descriptor open.
  auto open_fds = [] {
    int n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
      while (readdir(d)) ++n;
      closedir(d);
    }
    return n;
  };
  const int before = open_fds();
  for (int i = 0; i < 5; ++i) {
    expect_error([&] { data::read_idx(testing::TempDir()); }, ": not a regular file");
    expect_error([&] { io::load_safetensors(testing::TempDir()); }, "': not a regular file");
  }
  EXPECT_EQ(open_fds(), before);
  unlink(p.c_str());
}

// ---- edges: strides, BOOL bytes, arange, devices ------------------------------------------------

TEST(HostileEdges, StrideOverflowIsRefused) {
  const int64_t big = INT64_MAX;
  expect_error(
      [&] {
        empty({0, big, big});
      },
      "[empty] Stride calculation overflowed for shape [0, 9223372036854775807, "
      "9223372036854775807]");
  expect_error(
      [&] {
        zeros({0, int64_t{1} << 40, int64_t{1} << 40});
      },
      "Stride calculation overflowed");
  // Strides that fit: an empty tensor with a stride of 2^62.
  Tensor t = empty({0, int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_EQ(t.numel(), 0);
  EXPECT_EQ(t.stride(0), int64_t{1} << 62);
  EXPECT_EQ(t.stride(1), int64_t{1} << 31);
  // A view of an empty tensor to an overflowing shape.
  expect_error([&] { empty({0}).view({0, big, big}); }, "[view] Stride calculation overflowed");
}

TEST(HostileEdges, BoolBytesOtherThanZeroOrOneAreRefused) {
  const std::string p = temp_path("bool.safetensors");
  std::string b = safetensors_bytes(R"({"m":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}})");
  write_bytes(p, b + std::string("\x01\x00\x01\x01", 4));
  EXPECT_EQ(io::load_safetensors(p)["m"].sum().item<int64_t>(), 3);
  write_bytes(p, b + std::string("\x01\x00\x02\x01", 4));
  expect_error([&] { io::load_safetensors(p); },
               "[load_safetensors] '" + p + "': tensor 'm': BOOL element 2 is byte 2, not 0 or 1");
  // Checkpoints go through the same reader (the check comes before the checksum's).
  io::Checkpoint c;
  c.put("mask.", {{"m", tensor({true, false, true})}});
  io::save_checkpoint(p, c);
  std::string bytes = file_bytes(p);
  const size_t at = bytes.size() - 3;  // the BOOL tensor's data ends the file
  ASSERT_EQ(bytes[at], '\x01');
  bytes[at] = '\xFF';
  write_bytes(p, bytes);
  expect_error([&] { io::load_checkpoint(p); },
               "[load_checkpoint] '" + p + "': tensor 'mask.m': BOOL element 0 is byte 255");
  unlink(p.c_str());
}

TEST(HostileEdges, ArangeRefusesBadSteps) {
  const double nan = std::nan(""), inf = HUGE_VAL;
  expect_error([&] { arange(0.0, 1.0, nan); }, "[arange] step must be finite, got nan");
  expect_error([&] { arange(0.0, 1.0, inf); }, "[arange] step must be finite, got inf");
  expect_error([&] { arange(0.0, 1.0, 0.0); }, "[arange] step must be nonzero");
  expect_error([&] { arange(0, 1, 0); }, "[arange] step must be nonzero");
  expect_error([&] { arange(nan, 1.0, 1.0); }, "[arange] unsupported range");
  expect_error([&] { arange(0.0, inf, 1.0); }, "[arange] unsupported range");
  expect_error([&] { arange(0.0, 1.0, 1e-300); }, "more than int64 can count");
  expect_error([&] { arange(-1e300, 1e300, 1.0); }, "more than int64 can count");
  expect_error([&] { arange(INT64_MIN, INT64_MAX, 1); },
               "holds more than 2^63 - 1 elements, more than int64 can count");
  // Wide integer ranges whose count fits: exact values, no wrapped products.
  Tensor t = arange(INT64_MIN, INT64_MAX, int64_t{1} << 62);
  EXPECT_EQ(t.to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN, -(int64_t{1} << 62), 0, int64_t{1} << 62}));
  EXPECT_EQ(arange(INT64_MAX, INT64_MIN, INT64_MIN).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MAX, -1}));
}

TEST(HostileEdges, LoadOntoAnAbsentGpuNamesOpAndFile) {
  // The first index with no device: cuda:0 without a GPU.
  const std::string dev = "cuda:" + std::to_string(cuda::device_count());
  const std::string p = temp_path("cpu.safetensors");
  io::save_safetensors(p, {{"a", ones({2})}});
  const std::string e = ember_test::error_of([&] { io::load_safetensors(p, Device(dev)); });
  EXPECT_NE(e.find("[load_safetensors] '" + p + "': cannot move the tensors to " + dev + ": "),
            std::string::npos)
      << e;
  io::Checkpoint c;
  c.put("w.", {{"a", ones({2})}});
  io::save_checkpoint(p, c);
  const std::string e2 = ember_test::error_of([&] { io::load_checkpoint(p, Device(dev)); });
  EXPECT_NE(e2.find("[load_checkpoint] '" + p + "': cannot move the tensors to " + dev + ": "),
            std::string::npos)
      << e2;
  unlink(p.c_str());
}
