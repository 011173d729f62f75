// Helpers the test files share: the message of an expected error, tolerance comparisons of
// tensors, a tensor's values and raw bytes on the host.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember_test {

// The message of the E that f throws, or "" when it throws none.
template <class E = ember::Error, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

// Expects fn to throw an E whose message contains text.
template <class E = ember::Error, class F>
void expect_error(F&& fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

// a and b have one shape and agree within tol (absolute and relative), compared in float64 on
// the host.
inline void expect_close(const ember::Tensor& a, const ember::Tensor& b, double tol = 1e-5) {
  ASSERT_EQ(a.sizes(), b.sizes());
  const ember::Tensor x = a.cpu().to(ember::kFloat64), y = b.cpu().to(ember::kFloat64);
  EXPECT_TRUE(ember::allclose(x, y, tol, tol)) << "got\n" << x << "\nexpected\n" << y;
}

// The values of t on the host, as int64 or float.
inline std::vector<int64_t> ivec(const ember::Tensor& t) { return t.to_vector<int64_t>(); }
inline std::vector<float> fvec(const ember::Tensor& t) { return t.to_vector<float>(); }

// The raw bytes of a tensor, in row-major element order.
inline std::vector<unsigned char> bytes_of(const ember::Tensor& t) {
  const ember::Tensor c = t.cpu().contiguous();
  std::vector<unsigned char> out(c.nbytes());
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr(), out.size());
  return out;
}

}  // namespace ember_test
