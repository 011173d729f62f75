// What the CUDA backend asks of the graph captures in progress (cuda_graph.cpp): whether a host
// sync would break one, and where a captured random kernel reads its Philox seed and offset.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace ember::cuda_detail {

// Raises "[op] cannot run while CUDA stream <s> is capturing a graph: <what>" when the calling
// thread may not synchronise with the host now: a capture of this thread, a global-mode capture
// of another thread, or a capture of the current stream begun outside ember.
void check_not_capturing(const char* op, const std::string& what);

// For a random kernel about to be issued on `stream` with the generator's (seed, offset): nullptr
// when the stream is not capturing. While it is, returns the capture's device state {seed, base
// offset} (which each replay rewrites) and turns offset into the offset within the graph. Raises
// "[op] ..." when the draw does not come from the device's default generator.
const uint64_t* capture_philox(const char* op, int device, cudaStream_t stream, uint64_t seed,
                               uint64_t& offset);

}  // namespace ember::cuda_detail
