// Replays files through a fuzz target outside libFuzzer: the regression corpus in the normal
// suite, and a check that every seed loads.
//   fuzz_replay <safetensors|checkpoint|idx> <loaded|refused> FILE|DIR...
// Exits 1 when a file's outcome is not the expected one; a finding aborts, as under the fuzzer.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace {

void collect(const std::string& path, std::vector<std::string>& out) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return;
  if (!S_ISDIR(st.st_mode)) {
    out.push_back(path);
    return;
  }
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") collect(path + "/" + n, out);
    }
    closedir(d);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ember_fuzz::Target t{};
  const std::string expect = argc > 2 ? argv[2] : "";
  if (argc < 4 || !ember_fuzz::parse_target(argv[1], &t) ||
      (expect != "loaded" && expect != "refused")) {
    std::fprintf(stderr,
                 "usage: fuzz_replay <safetensors|checkpoint|idx> <loaded|refused> "
                 "FILE|DIR...\n");
    return 2;
  }
  std::vector<std::string> files;
  for (int i = 3; i < argc; ++i) collect(argv[i], files);
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "[replay] no files\n");
    return 1;
  }
  const std::string scratch = ember_fuzz::scratch_path(t);
  int wrong = 0;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    const auto got = ember_fuzz::run_one(t, reinterpret_cast<const uint8_t*>(bytes.data()),
                                         bytes.size(), scratch);
    const bool ok = (got == ember_fuzz::Outcome::Loaded) == (expect == "loaded");
    std::printf("[replay] %s %s: %s\n", ok ? "ok  " : "FAIL", f.c_str(),
                got == ember_fuzz::Outcome::Loaded ? "loaded" : "refused");
    wrong += ok ? 0 : 1;
  }
  std::remove(scratch.c_str());
  std::printf("[replay] %zu file(s), %d with the wrong outcome\n", files.size(), wrong);
  return wrong ? 1 : 0;
}
