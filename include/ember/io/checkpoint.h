// Training checkpoints: one safetensors file holding named sections of tensors ("model.",
// "optimizer.", "scheduler.", "rng.") and scalars (epoch, step) in its metadata, written
// atomically and protected by a CRC32 of its contents.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ember/error.h"
#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::io {

// A checkpoint that cannot be read back intact: truncated, corrupted, or not a checkpoint.
class CheckpointError : public Error {
 public:
  using Error::Error;
};

struct Checkpoint {
  OrderedDict<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;

  // Adds every entry of section as prefix + name ("model." + "0.weight"); raises on a name
  // that is present already.
  void put(const std::string& prefix, const OrderedDict<std::string, Tensor>& section);
  // The entries whose names start with prefix, with the prefix removed, in stored order
  // (empty when there are none).
  OrderedDict<std::string, Tensor> get(const std::string& prefix) const;

  // Scalars in the metadata (integers in decimal, doubles with 17 significant digits).
  void set_int(const std::string& key, int64_t value);
  void set_double(const std::string& key, double value);
  // Raise CheckpointError when the key is absent or does not hold such a number.
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
};

// Writes the checkpoint atomically (temporary file, fsync, rename, directory fsync) with a CRC32
// of its tensor names, dtypes, shapes, data and metadata stored under the metadata key
// "ember.checksum". A writer killed midway leaves the previous file intact (and at most a hidden
// temporary file, which the next save to the same path removes).
void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// Reads a checkpoint, tensors onto device, after checking its size and checksum; raises
// CheckpointError naming the file and the problem ("checksum mismatch", "truncated: header says
// N bytes, file has M").
Checkpoint load_checkpoint(const std::string& path, Device device = Device(kCPU));

// The state of every default generator: "cpu" and "cuda:N" for each CUDA device, each an int64
// tensor {seed, offset} (the bits of the unsigned values).
OrderedDict<std::string, Tensor> capture_rng_state();
// Restores generators from capture_rng_state()'s result. Entries for CUDA devices this process
// does not have are ignored (a GPU run resumed on the CPU); malformed entries raise ValueError.
void restore_rng_state(const OrderedDict<std::string, Tensor>& state);

}  // namespace ember::io
