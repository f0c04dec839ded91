// Pearson's chi-square goodness-of-fit against the uniform distribution, for tests of random
// draws. Thread: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace dashkv::testing {

// Returns the statistic of `counts` (one per category) against equal expected counts.
inline double ChiSquareUniform(const std::vector<uint64_t>& counts) {
  double total = 0;
  for (uint64_t c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double stat = 0;
  for (uint64_t c : counts) {
    double d = static_cast<double>(c) - expected;
    stat += d * d / expected;
  }
  return stat;
}

// Returns the value a chi-square variable with `dof` degrees of freedom exceeds with probability
// about 1e-9 (Wilson-Hilferty with z = 6): a uniform draw fails a test against it once in a
// billion runs.
inline double ChiSquareCritical(size_t dof) {
  const double k = static_cast<double>(dof);
  const double t = 1.0 - 2.0 / (9.0 * k) + 6.0 * std::sqrt(2.0 / (9.0 * k));
  return k * t * t * t;
}

}  // namespace dashkv::testing
