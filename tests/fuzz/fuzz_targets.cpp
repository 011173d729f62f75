#include "fuzz_targets.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "ember/ember.h"

namespace ember_fuzz {

namespace {

[[noreturn]] void finding(Target t, const std::string& what) {
  std::fprintf(stderr, "[fuzz %s] finding: %s\n", target_name(t), what.c_str());
  std::fflush(stderr);
  std::abort();
}

void write_file(Target t, const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) finding(t, "cannot write the scratch file " + path);
  if (size > 0 && std::fwrite(data, 1, size, f) != size) finding(t, "short write to " + path);
  std::fclose(f);
}

// Touches every loaded tensor (a read of garbage would show under the sanitizers).
void touch(const ember::Tensor& t) {
  if (t.numel() > 0) (void)t.to(ember::kFloat64).sum().item<double>();
}

}  // namespace

bool parse_target(const std::string& name, Target* out) {
  for (Target t : {Target::Safetensors, Target::Checkpoint, Target::Idx}) {
    if (name == target_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char* target_name(Target t) {
  switch (t) {
    case Target::Safetensors:
      return "safetensors";
    case Target::Checkpoint:
      return "checkpoint";
    case Target::Idx:
      return "idx";
  }
  return "?";
}

std::string scratch_path(Target t) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/ember_fuzz_" + target_name(t) + "_" +
         std::to_string(getpid());
}

Outcome run_one(Target t, const uint8_t* data, size_t size, const std::string& path) {
  write_file(t, path, data, size);
  try {
    switch (t) {
      case Target::Safetensors: {
        for (const auto& [name, v] : ember::io::load_safetensors(path)) touch(v);
        (void)ember::io::load_safetensors_metadata(path);
        break;
      }
      case Target::Checkpoint: {
        const ember::io::Checkpoint c = ember::io::load_checkpoint(path);
        for (const auto& [name, v] : c.tensors) touch(v);
        break;
      }
      case Target::Idx:
        touch(ember::data::read_idx(path));
        break;
    }
  } catch (const ember::Error& e) {
    if (std::string(e.what()).find(path) == std::string::npos) {
      finding(t, std::string("the error does not name the file: ") + e.what());
    }
    return Outcome::Refused;
  } catch (const std::exception& e) {
    finding(t, std::string("not an ember::Error: ") + e.what());
  } catch (...) {
    finding(t, "an exception of unknown type");
  }
  return Outcome::Loaded;
}

}  // namespace ember_fuzz
