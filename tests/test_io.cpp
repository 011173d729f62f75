// safetensors (interop with PyTorch's files byte for byte, strict validation) and training
// checkpoints (sections, RNG state, checksum, atomic replacement under a killed writer).
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include "ember/ember.h"

using namespace ember;

namespace {

const std::string kFixtures = std::string(EMBER_FIXTURES_DIR) + "/safetensors/";

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file with this JSON header (padded as the format does) and data_bytes bytes of data.
std::string raw_file(const std::string& json, size_t data_bytes) {
  std::string h = json;
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
  return out + h + std::string(data_bytes, '\x01');
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = testing::TempDir() + "ember_io_XXXXXX";
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    for (const std::string& f : files()) unlink((path_ + "/" + f).c_str());
    rmdir(path_.c_str());
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
      }
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

// The tensors of tests/fixtures/safetensors/make_fixtures.py, built by ember.
OrderedDict<std::string, Tensor> fixture_tensors() {
  const double inf = std::numeric_limits<double>::infinity();
  OrderedDict<std::string, Tensor> t;
  t.insert("bool", tensor({true, false, false, true, true}));
  t.insert("uint8", tensor(std::vector<uint8_t>{0, 1, 127, 128, 255}));
  t.insert("int8", tensor(std::vector<int8_t>{-128, -1, 0, 1, 127}));
  t.insert("int32", tensor(std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -7, 0, 7,
                                                65536, std::numeric_limits<int32_t>::max()},
                           {2, 3}));
  t.insert("int64", tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -3, 0, 3,
                                                std::numeric_limits<int64_t>::max()}));
  t.insert(
      "float16",
      tensor(std::vector<double>{0.0, -0.0, 1.0, -2.5, 65504.0, 6e-08, inf, -inf}).to(kFloat16));
  t.insert("bfloat16",
           tensor(std::vector<double>{0.0, -1.0, 3.140625, 1e38, -inf, 1e-40}).to(kBFloat16));
  t.insert("float32",
           tensor(std::vector<double>{1.0, -0.5, 3.25, 1e-45, 3.4028234663852886e38, -inf}, {2, 3})
               .to(kFloat32));
  t.insert("float64", tensor(std::vector<double>{0.1, -2.0, 1e308, 5e-324}));
  // A transposed (non-contiguous) view holding the fixture's row-major 0..11.
  t.insert("matrix", arange(12, TensorOptions(kFloat32)).reshape({3, 4}).t().contiguous().t());
  t.insert("scalar", tensor(std::vector<double>{42.5}, {}).reshape({}));
  t.insert("empty", zeros({2, 0, 3}));
  return t;
}

// Same dtype, shape and bytes.
void expect_identical(const Tensor& a, const Tensor& b, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.sizes(), b.sizes());
  Tensor ca = a.cpu().contiguous(), cb = b.cpu().contiguous();
  ASSERT_EQ(ca.nbytes(), cb.nbytes());
  if (ca.nbytes()) EXPECT_EQ(std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()), 0);
}

// Runs f, expecting an ember::Error whose message contains every one of parts.
template <class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error raised";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << msg << "\n  lacks: " << p;
  }
}

}  // namespace

// ---- safetensors: PyTorch's files ---------------------------------------------------------------

TEST(Safetensors, LoadsPyTorchFixtureExactly) {
  auto loaded = io::load_safetensors(kFixtures + "tensors.safetensors");
  auto expected = fixture_tensors();
  ASSERT_EQ(loaded.size(), expected.size());
  for (const auto& [name, t] : expected) {
    ASSERT_TRUE(loaded.contains(name)) << name;
    expect_identical(loaded[name], t, name);
  }
  // Spot checks on decoded values, independent of ember's own conversions.
  EXPECT_EQ(loaded["int64"].to_vector<int64_t>()[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(loaded["float16"].to_vector<float>()[4], 65504.0f);
  EXPECT_TRUE(std::signbit(loaded["float16"].to_vector<float>()[1]));
  EXPECT_EQ(loaded["float16"].to_vector<float>()[5], std::ldexp(1.0f, -24));
  EXPECT_EQ(loaded["bfloat16"].to_vector<float>()[2], 3.140625f);
  EXPECT_EQ(loaded["float32"].to_vector<float>()[3], std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(loaded["float64"].to_vector<double>()[3], std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(loaded["matrix"].to_vector<float>()[5], 5.0f);
  EXPECT_EQ(loaded["scalar"].dim(), 0);
  EXPECT_EQ(loaded["scalar"].item<double>(), 42.5);
  EXPECT_EQ(loaded["empty"].sizes(), Shape({2, 0, 3}));
  // Header order: the file lists tensors by dtype (largest first), then by name.
  EXPECT_EQ(loaded.keys(),
            (std::vector<std::string>{"int64", "float64", "scalar", "empty", "float32", "matrix",
                                      "int32", "bfloat16", "float16", "int8", "uint8", "bool"}));
  EXPECT_EQ(io::load_safetensors_metadata(kFixtures + "tensors.safetensors"),
            (std::map<std::string, std::string>{{"format", "pt"}}));

  auto nan = io::load_safetensors(kFixtures + "nan.safetensors")["x"].to_vector<float>();
  EXPECT_TRUE(std::isnan(nan[0]));
  EXPECT_EQ(nan[1], 1.0f);
}

TEST(Safetensors, WritesPyTorchFixtureByteForByte) {
  TempDir dir;
  io::save_safetensors(dir.file("t.safetensors"), fixture_tensors(), {{"format", "pt"}});
  EXPECT_EQ(read_bytes(dir.file("t.safetensors")), read_bytes(kFixtures + "tensors.safetensors"));

  io::save_safetensors(dir.file("nan.safetensors"),
                       {{"x", tensor({std::numeric_limits<float>::quiet_NaN(), 1.0f})}});
  EXPECT_EQ(read_bytes(dir.file("nan.safetensors")), read_bytes(kFixtures + "nan.safetensors"));

  io::save_safetensors(dir.file("none.safetensors"), {});
  EXPECT_EQ(read_bytes(dir.file("none.safetensors")),
            read_bytes(kFixtures + "no_tensors.safetensors"));
  EXPECT_TRUE(io::load_safetensors(dir.file("none.safetensors")).empty());
}

TEST(Safetensors, MetadataWithEscapesAndUnicode) {
  const std::map<std::string, std::string> expected = {
      {"format", "pt"},
      {"quote\"back\\slash", "tab\there\nnewline"},
      {"unicode", "h\xC3\xA9llo \xE2\x9C\x93 \xF0\x9F\x98\x80"},
      {"control", "\x01\x1f"},
      {"empty", ""}};
  EXPECT_EQ(io::load_safetensors_metadata(kFixtures + "metadata.safetensors"), expected);
  auto w = io::load_safetensors(kFixtures + "metadata.safetensors")["w"];
  expect_identical(w, ones({2, 2}, TensorOptions(kFloat16)), "w");

  // PyTorch writes several metadata keys in hash order; ember writes them sorted. Both read back
  // the same, and ember's header escapes as PyTorch's does.
  TempDir dir;
  io::save_safetensors(dir.file("m.safetensors"), {{"w", w}}, expected);
  EXPECT_EQ(io::load_safetensors_metadata(dir.file("m.safetensors")), expected);
  const std::string bytes = read_bytes(dir.file("m.safetensors"));
  EXPECT_NE(bytes.find(R"("control":"\u0001\u001f")"), std::string::npos);
  EXPECT_NE(bytes.find(R"("quote\"back\\slash":"tab\there\nnewline")"), std::string::npos);
  EXPECT_EQ(bytes.size(), read_bytes(kFixtures + "metadata.safetensors").size());
}

TEST(Safetensors, RoundTripsEveryDTypeAndLayout) {
  TempDir dir;
  manual_seed(3);
  OrderedDict<std::string, Tensor> t;
  for (DType d : {kBool, kUInt8, kInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    Tensor base = randn({5, 7}).mul(40);
    t.insert(std::string(dtype_name(d)), base.to(d).narrow(1, 1, 4).transpose(0, 1));
  }
  t.insert("expanded", tensor({1.0f, 2.0f}).expand({3, 2}));
  io::save_safetensors(dir.file("r.safetensors"), t);
  auto r = io::load_safetensors(dir.file("r.safetensors"));
  ASSERT_EQ(r.size(), t.size());
  for (const auto& [name, v] : t) {
    expect_identical(r[name], v, name);
    EXPECT_TRUE(r[name].is_contiguous());
  }
  // Overwriting replaces the file and leaves no temporary files behind.
  io::save_safetensors(dir.file("r.safetensors"), {{"a", ones({1})}});
  EXPECT_EQ(io::load_safetensors(dir.file("r.safetensors")).keys(), std::vector<std::string>{"a"});
  EXPECT_EQ(dir.files(), std::vector<std::string>{"r.safetensors"});
}

TEST(Safetensors, RejectsBadArguments) {
  TempDir dir;
  expect_error(
      [&] {
        io::save_safetensors(dir.file("x"), {{"a", Tensor()}});
      },
      {"[save_safetensors]", "'a' is undefined"});
  expect_error(
      [&] {
        io::save_safetensors(dir.file("x"), {{"__metadata__", ones({1})}});
      },
      {"[save_safetensors]", "__metadata__"});
  expect_error(
      [&] {
        io::save_safetensors(dir.file("no/such/dir/x"), {{"a", ones({1})}});
      },
      {"[save_safetensors]", "no/such/dir/x", "cannot create temporary file"});
  EXPECT_EQ(dir.files(), std::vector<std::string>{});
}

// ---- safetensors: validation --------------------------------------------------------------------

TEST(Safetensors, ValidationNamesFileAndProblem) {
  TempDir dir;
  const std::string p = dir.file("bad.safetensors");
  auto load_raw = [&](const std::string& bytes) {
    write_bytes(p, bytes);
    return [p] { io::load_safetensors(p); };
  };
  const std::string ok = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

  expect_error([&] { io::load_safetensors(dir.file("missing.safetensors")); },
               {"[load_safetensors]", "missing.safetensors", "cannot open", "No such file"});
  expect_error(load_raw("abc"), {p, "truncated", "3 bytes"});
  {
    std::string b = raw_file("{" + ok + "}", 8);
    b[0] = static_cast<char>(200);  // header length 200 > file
    expect_error(load_raw(b), {p, "truncated: header length says 200 bytes"});
  }
  expect_error(load_raw(raw_file("{" + ok, 8)), {p, "invalid JSON header", "expected ',' or '}'"});
  expect_error(load_raw(raw_file("[1, 2]", 0)), {p, "header is an array, not an object"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F7","shape":[2],"data_offsets":[0,8]}})", 8)),
               {p, "tensor 'a' has unknown dtype 'F7'"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"U16","shape":[4],"data_offsets":[0,8]}})", 8)),
               {p, "dtype U16, which ember does not support"});
  expect_error(load_raw(raw_file("{" + ok + "," + ok + "}", 8)), {p, "duplicate key 'a'"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)),
               {p, "tensor 'a': shape [3] of F32 needs 12 bytes but data_offsets [0, 8] hold 8"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8)),
               {p, "end before they begin"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8)),
               {p, "shape entries must be non-negative integers, got -2"});
  expect_error(
      load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", 8)),
      {p, "unknown field 'x'"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[2]}})", 8)),
               {p, "lacks 'data_offsets'"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                 12)),
               {p, "tensors 'a' [0, 8] and 'b' [4, 12] overlap"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                                 20)),
               {p, "bytes [8, 12) of the data region belong to no tensor"});
  expect_error(load_raw(raw_file("{" + ok + "}", 12)), {p, "4 bytes after the last tensor's data"});
  expect_error(load_raw(raw_file(R"({"a":{"dtype":"F32","shape":[4611686018427387904],)"
                                 R"("data_offsets":[0,8]}})",
                                 8)),
               {p, "needs more than 2^64 bytes"});
  expect_error(load_raw(raw_file(R"({"__metadata__":{"k":1}})", 0)),
               {p, "value of 'k' is a number"});
  {
    // A PyTorch file cut short.
    std::string b = read_bytes(kFixtures + "tensors.safetensors");
    const size_t full = b.size();
    b.resize(b.size() - 10);
    expect_error(load_raw(b), {p, "truncated: header says " + std::to_string(full) +
                                      " bytes, file has " + std::to_string(full - 10)});
    expect_error([&] { io::load_safetensors_metadata(p); },
                 {"[load_safetensors_metadata]", "truncated"});
  }
  // Padding with spaces (and any JSON whitespace) is accepted, as are escapes in names.
  write_bytes(
      p,
      raw_file("{ \"\\u0061\\n\" : {\"dtype\":\"I8\",\"shape\":[],\"data_offsets\":[0,1]} }", 1));
  auto r = io::load_safetensors(p);
  EXPECT_EQ(r.keys(), std::vector<std::string>{"a\n"});
  EXPECT_EQ(r["a\n"].item<int64_t>(), 1);
}

// ---- checkpoints --------------------------------------------------------------------------------

namespace {

io::Checkpoint sample_checkpoint(float scale) {
  io::Checkpoint c;
  c.put("model.", {{"0.weight", full({3, 4}, scale)}, {"0.bias", full({3}, -scale)}});
  c.put("optimizer.", {{"state.0.momentum_buffer", full({3, 4}, 0.5 * scale)},
                       {"param_groups.0.lr", tensor({0.05})}});
  c.put("rng.", io::capture_rng_state());
  c.set_int("epoch", 3);
  c.set_int("step", 12345678901234);
  c.set_double("best_loss", 0.1 * scale);
  return c;
}

void expect_same_checkpoint(const io::Checkpoint& a, const io::Checkpoint& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    ASSERT_TRUE(b.tensors.contains(name)) << name;
    expect_identical(t, b.tensors[name], name);
  }
  EXPECT_EQ(a.metadata, b.metadata);
}

}  // namespace

TEST(Checkpoint, SectionsScalarsAndRoundTrip) {
  TempDir dir;
  io::Checkpoint c = sample_checkpoint(2.0f);
  auto model = c.get("model.");
  EXPECT_EQ(model.keys(), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_TRUE(c.get("scheduler.").empty());
  expect_error(
      [&] {
        c.put("model.", {{"0.bias", ones({3})}});
      },
      {"'model.0.bias' is in the checkpoint already"});

  io::save_checkpoint(dir.file("c.ckpt"), c);
  io::Checkpoint r = io::load_checkpoint(dir.file("c.ckpt"));
  expect_same_checkpoint(c, r);
  EXPECT_EQ(r.get_int("epoch"), 3);
  EXPECT_EQ(r.get_int("step"), 12345678901234);
  EXPECT_EQ(r.get_double("best_loss"), 0.1 * 2.0f);
  expect_identical(r.get("model.")["0.weight"], full({3, 4}, 2.0f), "weight");
  expect_error([&] { (void)r.get_int("missing"); }, {"no metadata key 'missing'"});
  expect_error([&] { (void)r.get_int("best_loss"); }, {"'best_loss'", "not an integer"});
  EXPECT_THROW((void)r.get_int("missing"), io::CheckpointError);

  // A checkpoint is a safetensors file: the checksum is in its metadata.
  auto meta = io::load_safetensors_metadata(dir.file("c.ckpt"));
  EXPECT_EQ(meta.at("ember.checksum").rfind("crc32:", 0), 0u);
  EXPECT_EQ(meta.at("epoch"), "3");

  io::Checkpoint reserved;
  reserved.metadata["ember.checksum"] = "x";
  expect_error([&] { io::save_checkpoint(dir.file("d.ckpt"), reserved); },
               {"'ember.checksum' is reserved"});
  EXPECT_EQ(dir.files(), std::vector<std::string>{"c.ckpt"});
}

TEST(Checkpoint, RngStateReplaysRandomStreams) {
  manual_seed(7);
  (void)rand({10});
  auto state = io::capture_rng_state();
  ASSERT_TRUE(state.contains("cpu"));
  EXPECT_EQ(state.size(), static_cast<size_t>(1 + cuda::device_count()));
  Tensor a = randn({6});
  manual_seed(99);
  (void)rand({3});
  io::restore_rng_state(state);
  expect_identical(randn({6}), a, "replayed");

  // Through a file, and a CUDA generator the process does not have is ignored.
  TempDir dir;
  io::Checkpoint c;
  c.put("rng.", state);
  c.put("rng.", {{"cuda:63", tensor(std::vector<int64_t>{1, 2})}});
  io::save_checkpoint(dir.file("rng.ckpt"), c);
  manual_seed(5);
  io::restore_rng_state(io::load_checkpoint(dir.file("rng.ckpt")).get("rng."));
  expect_identical(randn({6}), a, "replayed from file");
  // The full 64-bit seed survives the int64 storage.
  default_generator().manual_seed(0xFEDCBA9876543210ull);
  auto big = io::capture_rng_state();
  manual_seed(1);
  io::restore_rng_state(big);
  EXPECT_EQ(default_generator().initial_seed(), 0xFEDCBA9876543210ull);

  expect_error(
      [] {
        io::restore_rng_state({{"tpu:0", tensor(std::vector<int64_t>{1, 2})}});
      },
      {"[restore_rng_state]", "unknown generator 'tpu:0'"});
  expect_error(
      [] {
        io::restore_rng_state({{"cpu", tensor({1.0, 2.0})}});
      },
      {"int64 tensor of 2 elements"});
}

TEST(Checkpoint, DetectsCorruptionAndTruncation) {
  TempDir dir;
  const std::string p = dir.file("c.ckpt");
  io::save_checkpoint(p, sample_checkpoint(1.0f));
  const std::string good = read_bytes(p);
  uint64_t header = 0;
  for (int i = 7; i >= 0; --i)
    header = (header << 8) | static_cast<unsigned char>(good[static_cast<size_t>(i)]);

  // One flipped bit in the tensor data.
  std::string bad = good;
  bad[bad.size() - 5] = static_cast<char>(bad[bad.size() - 5] ^ 0x10);
  write_bytes(p, bad);
  expect_error([&] { io::load_checkpoint(p); }, {"[load_checkpoint]", p, "checksum mismatch"});
  EXPECT_THROW(io::load_checkpoint(p), io::CheckpointError);

  // A changed shape in the header that is still self-consistent: [3, 4] -> [4, 3].
  bad = good;
  const size_t at = bad.find("\"shape\":[3,4]");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 13, "\"shape\":[4,3]");
  write_bytes(p, bad);
  expect_error([&] { io::load_checkpoint(p); }, {p, "checksum mismatch"});

  // Changed metadata.
  bad = good;
  bad.replace(bad.find("\"epoch\":\"3\""), 11, "\"epoch\":\"4\"");
  write_bytes(p, bad);
  expect_error([&] { io::load_checkpoint(p); }, {p, "checksum mismatch"});

  // Cut short.
  write_bytes(p, good.substr(0, good.size() - 100));
  expect_error([&] { io::load_checkpoint(p); },
               {p, "truncated: header says " + std::to_string(good.size()) + " bytes, file has " +
                       std::to_string(good.size() - 100)});
  EXPECT_THROW(io::load_checkpoint(p), io::CheckpointError);
  write_bytes(p, good.substr(0, 8 + header / 2));
  EXPECT_THROW(io::load_checkpoint(p), io::CheckpointError);
  expect_error([&] { io::load_checkpoint(dir.file("none.ckpt")); }, {"cannot open"});
  EXPECT_THROW(io::load_checkpoint(dir.file("none.ckpt")), io::CheckpointError);

  // A plain safetensors file is not a checkpoint.
  io::save_safetensors(p, {{"a", ones({2})}});
  expect_error([&] { io::load_checkpoint(p); }, {p, "not an ember checkpoint"});

  write_bytes(p, good);
  expect_same_checkpoint(io::load_checkpoint(p), sample_checkpoint(1.0f));
}

// A writer killed while writing never damages the last good checkpoint: the data goes to a
// temporary file that is renamed over the target only once complete.
TEST(Checkpoint, KilledWriterLeavesLastGoodCheckpoint) {
  TempDir dir;
  const std::string path = dir.file("run.ckpt");
  const io::Checkpoint good = sample_checkpoint(1.0f);
  io::save_checkpoint(path, good);
  const std::string good_bytes = read_bytes(path);

  io::Checkpoint big;
  big.put("model.", {{"w", full({48 << 20}, 3.0f)}});  // 192 MiB
  const std::string temp_prefix = ".run.ckpt.tmp.";
  bool killed = false;
  for (int attempt = 0; attempt < 5 && !killed; ++attempt) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        io::save_checkpoint(path, big);
      } catch (...) {
        _exit(2);
      }
      _exit(0);
    }
    // Kill the child as soon as its temporary file holds data.
    const std::string mine = temp_prefix + std::to_string(pid) + ".";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
      bool writing = false;
      for (const std::string& f : dir.files()) {
        struct stat st {};
        writing = writing ||
                  (f.rfind(mine, 0) == 0 && stat(dir.file(f).c_str(), &st) == 0 && st.st_size > 0);
      }
      if (writing) {
        kill(pid, SIGKILL);
        break;
      }
      if (waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
      usleep(50);
    }
    if (!exited) ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      killed = true;
    } else {
      // The child finished first: its checkpoint is complete. Put the good one back and retry.
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      EXPECT_EQ(io::load_checkpoint(path).tensors["model.w"].numel(), 48 << 20);
      io::save_checkpoint(path, good);
    }
  }
  ASSERT_TRUE(killed) << "the writer finished before it could be killed, 5 times";

  // The last good checkpoint is intact, byte for byte; the killed writer left its temporary file.
  EXPECT_EQ(read_bytes(path), good_bytes);
  expect_same_checkpoint(io::load_checkpoint(path), good);
  std::vector<std::string> files = dir.files();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].rfind(temp_prefix, 0), 0u);
  EXPECT_EQ(files[1], "run.ckpt");

  // The next save removes the stray file and replaces the checkpoint.
  const io::Checkpoint next = sample_checkpoint(4.0f);
  io::save_checkpoint(path, next);
  EXPECT_EQ(dir.files(), std::vector<std::string>{"run.ckpt"});
  expect_same_checkpoint(io::load_checkpoint(path), next);
}
