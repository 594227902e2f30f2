// A function of libm that training needs with the same bits on every target. glibc and musl (the
// C library of the WebAssembly build) round cos differently in the last bit now and then (seen in
// a learning rate), and one bit apart makes native and WebAssembly training drift apart. This uses
// + - * / alone, which IEEE rounds the same everywhere (the trainer is compiled without fused
// multiply-adds where it must match WebAssembly: core/CMakeLists.txt). The exp, log and pow that
// training still takes from libm come from the same implementation in both C libraries (ARM's
// optimized-routines), and the tests that compare the two builds would show a difference.
#pragma once

#include <cmath>

namespace glassbox::training {

// cos(pi x), within an ulp or two of libm's.
inline double cos_pi(double x) {
  constexpr double kPi = 3.141592653589793;
  x = std::fabs(x);                 // even
  x -= 2.0 * std::floor(x / 2.0);   // period 2: x in [0, 2) (fabs, floor and these steps are exact)
  if (x > 1.0) x = 2.0 - x;         // cos(pi (2 - x)) = cos(pi x): x in [0, 1]
  // Taylor series of an angle within pi/4 of 0, where they converge fast (to u^18: the next term
  // is below 1e-17 of the result): cos directly near 0 and 1, -sin(pi (x - 1/2)) in between.
  const auto cos_series = [](double u) {
    const double u2 = u * u;
    double c = 1.0;
    for (int k = 9; k >= 1; --k) c = 1.0 - c * u2 / ((2.0 * k - 1.0) * (2.0 * k));
    return c;
  };
  const auto sin_series = [](double t) {
    const double t2 = t * t;
    double s = 1.0;
    for (int k = 9; k >= 1; --k) s = 1.0 - s * t2 / ((2.0 * k) * (2.0 * k + 1.0));
    return t * s;
  };
  if (x <= 0.25) return cos_series(kPi * x);
  if (x >= 0.75) return -cos_series(kPi * (1.0 - x));
  return -sin_series(kPi * (x - 0.5));
}

}   // namespace glassbox::training
