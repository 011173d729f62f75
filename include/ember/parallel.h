// Intra-op CPU threads: large ops split across a pool; small ops stay on the calling thread.
#pragma once

#include <cstdint>
#include <functional>

namespace ember {

// Threads used by CPU kernels (default: the number of cores). n >= 1.
void set_num_threads(int n);
int get_num_threads();

// Calls fn(begin, end) over [0, n) in chunks of at least grain elements, on up to
// get_num_threads() threads; runs inline when n <= grain or when already inside a parallel region.
// The first exception thrown by fn is rethrown on the calling thread.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// True while the calling thread runs a chunk of parallel_for.
bool in_parallel_region();

}  // namespace ember
