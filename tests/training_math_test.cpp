// training::cos_pi (core/training/portable_math.h), which the schedule and the initialisation use
// instead of libm's cos so that native and WebAssembly training agree bit for bit: against libm.
#include <gtest/gtest.h>

#include <cmath>

#include "training/portable_math.h"

TEST(TrainingMath, CosPiIsCosOfPiXToAnUlpOrTwo) {
  double worst = 0;
  for (int i = -40000; i <= 40000; ++i) {
    const double x = i / 10000.0 + 1e-5 * (i % 7);   // [-4, 4], not only round values
    // In long double: cos(M_PI * x) in double is off by x times pi's rounding, more than cos_pi.
    const double want =
        static_cast<double>(std::cos(3.14159265358979323846264338327950288L * static_cast<long double>(x)));
    const double got = glassbox::training::cos_pi(x);
    worst = std::max(worst, std::abs(got - want));
  }
  EXPECT_LT(worst, 3e-16);
  EXPECT_EQ(glassbox::training::cos_pi(0.0), 1.0);
  EXPECT_EQ(glassbox::training::cos_pi(1.0), -1.0);
  EXPECT_EQ(glassbox::training::cos_pi(2.0), 1.0);
  EXPECT_NEAR(glassbox::training::cos_pi(0.5), 0.0, 1e-16);
}
