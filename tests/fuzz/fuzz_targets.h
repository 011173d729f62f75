// The loaders under fuzzing: safetensors, training checkpoints and IDX files. Each target writes
// its input to a scratch file (the loaders read paths) and loads it. A refusal must be an
// ember::Error that names the file; any other exception, a crash, a hang or a sanitizer report is
// a finding. Shared by the libFuzzer executables and by the replay test of the normal suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember_fuzz {

enum class Target { Safetensors, Checkpoint, Idx };
enum class Outcome { Loaded, Refused };

// "safetensors", "checkpoint" or "idx"; false for another name.
bool parse_target(const std::string& name, Target* out);
const char* target_name(Target t);

// Loads data as a file of kind t through scratch_path. Aborts (with the reason on stderr) when the
// loader fails in a way other than an ember::Error naming scratch_path.
Outcome run_one(Target t, const uint8_t* data, size_t size, const std::string& scratch_path);

// A scratch file name unique to this process, in $TMPDIR (default /tmp).
std::string scratch_path(Target t);

}  // namespace ember_fuzz
