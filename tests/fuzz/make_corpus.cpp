// Writes the fuzzing corpus with ember itself (no committed binaries):
//   <dir>/seeds/<target>/...        valid files: the fuzzers' starting points; each must load
//   <dir>/regressions/<target>/...  hostile files found by review and fuzzing; each must be refused
// Usage: make_fuzz_corpus <dir>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

std::string root;

std::string dir_for(const std::string& kind, const std::string& target) {
  const std::string d = root + "/" + kind + "/" + target;
  mkdir((root + "/" + kind).c_str(), 0755);
  mkdir(d.c_str(), 0755);
  return d + "/";
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_gzip(const std::string& path, const std::string& bytes, int members = 1) {
  const size_t part = bytes.size() / static_cast<size_t>(members) + 1;
  for (int m = 0; m < members; ++m) {
    gzFile f = gzopen(path.c_str(), m == 0 ? "wb" : "ab");
    const size_t begin = std::min(bytes.size(), part * static_cast<size_t>(m));
    const size_t n = std::min(part, bytes.size() - begin);
    if (n > 0) gzwrite(f, bytes.data() + begin, static_cast<unsigned>(n));
    gzclose(f);
  }
}

// A safetensors file from a JSON header and raw data.
std::string safetensors_bytes(const std::string& json, const std::string& data) {
  std::string h = json;
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(h.size() >> (8 * i));
  return out + h + data;
}

std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, size_t data_bytes) {
  std::string b = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int k = 3; k >= 0; --k) b += static_cast<char>((d >> (8 * k)) & 0xFF);
  }
  for (size_t i = 0; i < data_bytes; ++i) b += static_cast<char>(i * 37 % 251);
  return b;
}

void seeds() {
  manual_seed(7);
  const std::string s = dir_for("seeds", "safetensors");
  io::save_safetensors(s + "mixed.safetensors",
                       {{"w", randn({3, 4})},
                        {"b", zeros({4}, kFloat64)},
                        {"i", arange(6).reshape({2, 3})},
                        {"m", tensor({true, false, true})},
                        {"h", ones({2, 2}, kFloat16)},
                        {"bf", ones({3}, kBFloat16)},
                        {"u8", tensor(std::vector<uint8_t>{0, 1, 255})},
                        {"i8", tensor(std::vector<int8_t>{-1, 0, 1})},
                        {"i32", tensor(std::vector<int32_t>{-5, 5})},
                        {"scalar", scalar_tensor(2.5)},
                        {"empty", empty({0, 3})}},
                       {{"format", "pt"}, {"note", "a \"quoted\" \\ value\n"}});
  io::save_safetensors(s + "one.safetensors", {{"x", ones({1})}});
  write_bytes(s + "empty.safetensors", safetensors_bytes("{}", ""));

  const std::string c = dir_for("seeds", "checkpoint");
  io::Checkpoint ck;
  ck.put("model.", {{"0.weight", randn({2, 3})}, {"0.bias", zeros({2})}});
  ck.put("optimizer.", {{"state.0.exp_avg", zeros({2, 3})}, {"param_groups.0.lr", tensor({1e-3})}});
  ck.put("rng.", io::capture_rng_state());
  ck.set_int("epoch", 2);
  ck.set_double("best_loss", 0.25);
  io::save_checkpoint(c + "train.ckpt", ck);
  io::save_checkpoint(c + "empty.ckpt", io::Checkpoint{});

  const std::string d = dir_for("seeds", "idx");
  data::write_idx(d + "u8.idx", arange(24).reshape({2, 3, 4}).to(kUInt8));
  data::write_idx(d + "u8.idx.gz", arange(24).reshape({4, 6}).to(kUInt8), true);
  data::write_idx(d + "i8.idx", tensor(std::vector<int8_t>{-3, 0, 127}));
  data::write_idx(d + "i32.idx.gz", tensor(std::vector<int32_t>{-70000, 1, 70000}), true);
  data::write_idx(d + "f32.idx", randn({3, 2}));
  data::write_idx(d + "f64.idx", randn({2}, kFloat64));
  write_bytes(d + "i16.idx", idx_bytes(0x0B, {3}, 6));
  write_bytes(d + "scalar.idx", idx_bytes(0x08, {}, 1));
  write_gzip(d + "members.idx.gz", idx_bytes(0x08, {4, 8}, 32), 3);
}

void regressions() {
  const std::string s = dir_for("regressions", "safetensors");
  {
    std::string j = "{\"__metadata__\":{";
    for (int i = 0; i < 20000; ++i) j += "\"k" + std::to_string(i) + "\":\"\",";
    j += "\"k19999\":\"\"}}";
    write_bytes(s + "duplicate_among_many_keys.safetensors", safetensors_bytes(j, ""));
  }
  {
    std::string b = safetensors_bytes("{}", "");
    const uint64_t n = 100'000'001;
    for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
    write_bytes(s + "header_over_100mb.safetensors", b);
  }
  write_bytes(s + "bool_byte_2.safetensors",
              safetensors_bytes(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})",
                                std::string("\x01\x02", 2)));
  write_bytes(s + "shape_overflow.safetensors",
              safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],)"
                                R"("data_offsets":[0,8]}})",
                                std::string(8, '\0')));
  write_bytes(s + "stride_overflow.safetensors",
              safetensors_bytes(R"({"a":{"dtype":"U8","shape":[0,9223372036854775807,)"
                                R"(9223372036854775807],"data_offsets":[0,0]}})",
                                ""));
  write_bytes(s + "deep_nesting.safetensors",
              safetensors_bytes(
                  "{\"__metadata__\":" + std::string(100, '[') + std::string(100, ']') + "}", ""));
  write_bytes(s + "truncated_length.safetensors", std::string("\x10\x00\x00", 3));

  const std::string c = dir_for("regressions", "checkpoint");
  {
    io::Checkpoint ck;
    ck.put("model.", {{"w", ones({4})}, {"mask", tensor({true, false})}});
    io::save_checkpoint(c + "flipped.ckpt", ck);
    std::string b = read_bytes(c + "flipped.ckpt");
    const std::string bool_bad = b.substr(0, b.size() - 2) + std::string("\x07\x00", 2);
    b[b.size() - 5] ^= 0x40;
    write_bytes(c + "flipped.ckpt", b);
    write_bytes(c + "bool_byte_7.ckpt", bool_bad);
    write_bytes(c + "truncated.ckpt", b.substr(0, b.size() / 2));
  }
  write_bytes(c + "plain_safetensors.ckpt", safetensors_bytes("{}", ""));

  const std::string d = dir_for("regressions", "idx");
  write_bytes(d + "claim_512gb.idx", idx_bytes(0x08, {1u << 20, 1u << 19}, 8));
  write_bytes(d + "int16_claim_1gb.idx", idx_bytes(0x0B, {600'000'000}, 0));
  write_bytes(d + "dims_wrap_uint64.idx", idx_bytes(0x0E, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 0));
  write_bytes(d + "trailing.idx", idx_bytes(0x08, {3}, 4));
  write_gzip(d + "gzip_claim_512gb.idx.gz", idx_bytes(0x08, {1u << 20, 1u << 19}, 8));
  write_gzip(d + "gzip_short.idx.gz", idx_bytes(0x08, {1u << 20}, 100));
  write_gzip(d + "gzip_trailing_garbage.idx.gz", idx_bytes(0x08, {3}, 3));
  write_bytes(d + "gzip_trailing_garbage.idx.gz",
              read_bytes(d + "gzip_trailing_garbage.idx.gz") + "garbage");
  write_bytes(d + "stride_overflow.idx",
              idx_bytes(0x08, {0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 0));
  write_bytes(d + "bad_magic.idx", std::string("\x12\x34\x56\x78\x00\x00\x00\x01\x05", 9));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_corpus <dir>\n");
    return 2;
  }
  root = argv[1];
  mkdir(root.c_str(), 0755);
  seeds();
  regressions();
  return 0;
}
