// A small, fully specified random number generator for training (initialisation, batch
// sampling): the same numbers on every platform and standard library, which std::normal_distribution
// does not promise, so that the initialisation, the batches and the dropout masks of a run do not
// depend on the standard library.
#pragma once

#include <cmath>
#include <cstdint>

#include "training/portable_math.h"

namespace glassbox::training {

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}

  // SplitMix64 (Steele, Lea, Flood 2014): passes BigCrush; one add and three mixes per number.
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n); the modulo bias is below n / 2^64.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Standard normal (Box-Muller).
  double normal() {
    const double u1 = 1.0 - uniform();   // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * cos_pi(2.0 * u2);
  }

 private:
  std::uint64_t state_;
};

}  // namespace glassbox::training
