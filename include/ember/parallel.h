// Intra-op CPU threads: large ops split across a pool; small ops stay on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>

namespace ember {

// Threads used by CPU kernels (default: the number of cores). n >= 1.
void set_num_threads(int n);
int get_num_threads();

// True while the calling thread runs a chunk of parallel_for.
bool in_parallel_region();

// A non-owning reference to a callable fn(begin, end): two words, so passing it never allocates.
class RangeFnRef {
 public:
  // fn must outlive the reference (a lambda passed to parallel_for lives through the call).
  template <class Fn>
  requires(!std::is_same_v<std::remove_cvref_t<Fn>, RangeFnRef>)
      RangeFnRef(Fn&& fn)  // NOLINT(google-explicit-constructor): built from the caller's lambda
      : obj_(const_cast<void*>(static_cast<const void*>(&fn))),
        call_([](void* o, int64_t b, int64_t e) {
          (*static_cast<std::remove_reference_t<Fn>*>(o))(b, e);
        }) {}
  void operator()(int64_t begin, int64_t end) const { call_(obj_, begin, end); }

 private:
  void* obj_;
  void (*call_)(void*, int64_t, int64_t);
};

// Calls fn(begin, end) over [0, n) in chunks of at least grain elements, on up to
// get_num_threads() threads; runs inline when n <= grain or when already inside a parallel region.
// The first exception thrown by fn is rethrown on the calling thread. fn is called by reference:
// no copy and no heap allocation.
void parallel_for(int64_t n, int64_t grain, RangeFnRef fn);

}  // namespace ember
