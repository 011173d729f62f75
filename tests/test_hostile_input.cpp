// Hostile input: files built to exhaust time or memory, or to reach undefined behaviour, must be
// refused quickly with an error naming the file and the problem.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
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
  expect_error<std::invalid_argument>(
      [&] { io::json::parse(R"({"a":{"b":1},"c":2,"d":3})", l); }, "more than 3 keys at byte 19");
  l = {};
  l.max_values = 5;  // the root, 1, [2], 2, 3
  EXPECT_NO_THROW(io::json::parse("[1,[2],3]", l));
  expect_error<std::invalid_argument>([&] { io::json::parse("[1,[2],3,4]", l); },
                                      "more than 5 values");
  // The defaults are the documented ones.
  EXPECT_EQ(io::json::Limits{}.max_values, size_t{1} << 24);
  EXPECT_EQ(io::json::Limits{}.max_keys, size_t{1} << 22);
}
