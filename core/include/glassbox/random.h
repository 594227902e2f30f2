// The random numbers of sampling and training: one small, fully specified generator, so that a
// seed gives the same numbers on every platform and standard library (std::*_distribution is
// implementation-defined: libc++ in the browser and libstdc++ natively would give other tokens,
// initialisations, batches and dropout masks for the same seed).
#pragma once

#include <cstdint>

namespace glassbox {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}

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

 private:
  std::uint64_t state_;
};

}   // namespace glassbox
