// safetensors read and write (the format of Hugging Face's safetensors package): an 8-byte
// little-endian header length, a JSON header naming each tensor's dtype, shape and byte range,
// then the raw little-endian data. Files ember writes are byte-identical to what
// safetensors.torch.save_file writes for the same tensors and (single-key) metadata.
#pragma once

#include <map>
#include <string>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember::io {

// Writes tensors (any device, any layout, every ember dtype) and string metadata to path,
// atomically: the data goes to a temporary file in the same directory, which is fsynced and
// renamed over path (then the directory is fsynced). A reader sees the old file or the new one,
// never a partial one. Tensors are stored as safetensors orders them: by dtype size, largest
// first, then by name.
void save_safetensors(const std::string& path, const OrderedDict<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of a safetensors file onto device, in the order the header lists them.
// The file is validated strictly; errors name the file and the problem (missing file, header
// length past the end, invalid JSON, unknown dtype, offsets that overlap, leave gaps or do not
// match shape and dtype, truncated data, duplicate names).
OrderedDict<std::string, Tensor> load_safetensors(const std::string& path,
                                                  Device device = Device(kCPU));

// The "__metadata__" map of a safetensors file (empty when it has none); reads only the header.
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

}  // namespace ember::io
