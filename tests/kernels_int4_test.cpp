// Int4 weights (kernels/quantized.h): the quantizer against its plain reference (and so against
// llama.cpp's Q4_0 rule, which the reference states), the stored nibbles, every kernel this CPU
// has against the reference bit for bit on ragged shapes, and the product against F32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/quantized.h"
#include "kernels/reference.h"
#include "quantized_matmul_cases.h"
#include "test_util.h"

namespace glassbox::kernels {
namespace {

using test::random_vector;

// The fast quantizer gives the reference's bits (scale and values) on blocks that reach every
// branch: ties for the largest magnitude (the first one sets the scale's sign), values at
// x / d + 8.5 just below and at whole numbers, the value opposite the largest (capped at 7), NaN,
// infinities, -0, subnormal blocks (no finite inverse), huge values, blocks shorter than 32, and
// random blocks at scales from 1e-40 to 1e30.
TEST(Int4Kernels, QuantizeEqualsReference) {
  std::mt19937 rng(21);
  std::vector<std::vector<float>> blocks;
  std::vector<float> edges(32);
  for (int i = 0; i < 32; ++i) edges[i] = float(i % 17) - 8.0f;   // -8 .. 8: d = 1, 8 caps at 7
  edges[0] = -8.0f;
  edges[20] = 8.0f;   // the same magnitude later: -8 sets the scale
  edges[1] = -0.5f;   // x / d + 8.5 = 8: at a whole number
  edges[2] = std::nextafter(-0.5f, 0.0f);
  edges[3] = 6.5f;
  edges[4] = 6.499999f;                    // 14.999999 after + 8.5 (the float just below 6.5 gives 15.0 there)
  edges[6] = std::nextafter(6.5f, 0.0f);   // as in Q4_0, that addition rounds: 7
  blocks.push_back(edges);
  blocks.push_back({8.0f, -8.0f, 1.0f});   // positive first: d = -1
  blocks.push_back({1.0f, NAN, 2.0f});
  blocks.push_back({1.0f, INFINITY, -3.0f});
  blocks.push_back({-0.0f, 0.0f, -0.0f});
  blocks.push_back({1e-37f, 1e-38f, -2e-39f, 5e-45f, -1e-37f});   // subnormal scale
  blocks.push_back({3e38f, -3.4e38f, 1.0f, 1e30f});
  blocks.push_back(std::vector<float>(32, 0.0f));
  for (int r = 0; r < 400; ++r) {
    std::vector<float> b(r % 5 == 0 ? 1 + r % 31 : 32);
    const float scale = std::pow(10.0f, float(r % 71) - 40.0f);
    for (float& x : b) x = std::normal_distribution<float>(0.0f, scale)(rng);
    blocks.push_back(b);
  }
  for (const auto& b : blocks) {
    const int n = int(b.size());
    std::int8_t want[kQ8Block];
    float want_d;
    reference::quantize_q4(want, &want_d, b.data(), n);
    const Q8Shape s(1, n);
    std::vector<std::uint8_t> q(s.q4_size());
    std::vector<float> d(s.d_size());
    quantize_weights_q4(q.data(), d.data(), b.data(), 1, n);
    if (std::isnan(want_d)) {
      ASSERT_TRUE(std::isnan(d[0])) << "n=" << n << " first=" << b[0];
    } else {
      ASSERT_EQ(d[0], want_d) << "n=" << n << " first=" << b[0];
      ASSERT_EQ(std::signbit(d[0]), std::signbit(want_d)) << "n=" << n << " first=" << b[0];
    }
    for (int i = 0; i < kQ8Block; ++i) {
      ASSERT_EQ(q4_weight(q.data(), s, 0, i), want[i]) << "i=" << i << " v=" << (i < n ? b[i] : 0.0f);
      ASSERT_GE(want[i], -8);
      ASSERT_LE(want[i], 7);
    }
  }
  // The rule itself, on the block of whole numbers (d = 1): -8 stays -8, 8 caps at 7, -0.5 gives
  // trunc(8) - 8 = 0 and the float just above it too, 6.5 rounds up to 7 and 6.499999 to 6.
  std::int8_t q[kQ8Block];
  float d;
  reference::quantize_q4(q, &d, edges.data(), 32);
  EXPECT_EQ(d, 1.0f);
  EXPECT_EQ(q[0], -8);
  EXPECT_EQ(q[20], 7);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], 0);
  EXPECT_EQ(q[3], 7);
  EXPECT_EQ(q[4], 6);
  EXPECT_EQ(q[6], 7);
  EXPECT_EQ(q[5], -3);   // 5 - 8
  reference::quantize_q4(q, &d, blocks[1].data(), 3);
  EXPECT_EQ(d, -1.0f);
  EXPECT_EQ(q[0], -8);
  EXPECT_EQ(q[1], 7);
  EXPECT_EQ(q[2], -1);
  reference::quantize_q4(q, &d, blocks[2].data(), 3);   // NaN: the scale, and every value 0
  EXPECT_TRUE(std::isnan(d));
  EXPECT_EQ(q[0], 0);
  reference::quantize_q4(q, &d, blocks[3].data(), 3);   // infinity: an infinite scale
  EXPECT_TRUE(std::isinf(d));
  EXPECT_EQ(q[2], 0);
}

// Every value comes back within half a step (|d| / 2) of where it was, except values beyond
// 7.5 steps on the side opposite the largest magnitude, which cap at 7; padding is zero.
TEST(Int4Kernels, QuantizeWeightsRoundTrip) {
  std::mt19937 rng(22);
  for (const auto& [N, K] : {std::pair{5, 70}, std::pair{8, 32}, std::pair{1, 1}, std::pair{3, 100}}) {
    const auto w = random_vector(std::size_t(N) * K, rng);
    const Q8Shape s(N, K);
    std::vector<std::uint8_t> q(s.q4_size(), 0x99);
    std::vector<float> d(s.d_size(), 99.0f);
    quantize_weights_q4(q.data(), d.data(), w.data(), N, K);
    for (int n = 0; n < s.Np; ++n)
      for (int b = 0; b < s.blocks; ++b) {
        const float scale = d[q8_scale_index(s, n, b)];
        for (int k = b * kQ8Block; k < (b + 1) * kQ8Block; ++k) {
          const int v = q4_weight(q.data(), s, n, k);
          if (n >= N || k >= K) {
            ASSERT_EQ(v, 0) << "padding at n=" << n << " k=" << k;
            continue;
          }
          const float x = w[std::size_t(n) * K + k];
          if (x / scale > 7.5f)
            ASSERT_EQ(v, 7) << "n=" << n << " k=" << k;
          else
            ASSERT_LE(std::abs(v * scale - x), std::abs(scale) * 0.5f * 1.0001f) << "n=" << n << " k=" << k;
        }
      }
  }
}

// The stored nibbles (quantized.h): byte j of a row's block holds value j + 8 low, j + 16 + 8 high;
// 4 rows' blocks sit together, 16 bytes each.
TEST(Int4Kernels, StoredNibbles) {
  std::vector<float> w(2 * 40, 0.0f);   // rows 0 and 1, K = 40: two blocks, the second padded
  w[0] = -8.0f;                         // row 0: d = 1
  w[1] = 3.0f;
  w[16] = -2.0f;
  w[40] = 16.0f;   // row 1: d = -2
  w[40 + 17] = 2.0f;
  const Q8Shape s(2, 40);
  std::vector<std::uint8_t> q(s.q4_size());
  std::vector<float> d(s.d_size());
  quantize_weights_q4(q.data(), d.data(), w.data(), 2, 40);
  EXPECT_EQ(d[q8_scale_index(s, 0, 0)], 1.0f);
  EXPECT_EQ(d[q8_scale_index(s, 1, 0)], -2.0f);
  EXPECT_EQ(q[0], 0 | (6 << 4));        // row 0: values 0 (-8) and 16 (-2)
  EXPECT_EQ(q[1], 11 | (8 << 4));       // value 1 (3) and 17 (0)
  EXPECT_EQ(q[16], 0 | (8 << 4));       // row 1: value 0 (16 / -2 = -8)
  EXPECT_EQ(q[17], 8 | (7 << 4));       // value 17: 2 / -2 = -1
  EXPECT_EQ(q4_index(s, 0, 32), 64u);   // block 1 of rows 0..3 follows block 0's 64 bytes
  EXPECT_EQ(q[64 + 8], 8 | (8 << 4));   // padding (k = 48, 56): zeros
  EXPECT_EQ(q[2 * 16], 8 | (8 << 4));   // row 2, a padding row
}

// As int8's (tests/quantized_matmul_cases.h): every kernel this CPU has equals the reference bit
// for bit, on ragged shapes, at the extremes (x at +-127, w at -8 and 7), and on a slice of the rows
// written with a stride.
TEST(Int4Kernels, MatmulEqualsReference) {
  std::mt19937 rng(23);
  test_quantized::expect_kernels_equal_reference<std::uint8_t>(rng);
}

// Against the F32 product: w is off by up to half of its block's step (|largest| / 8) per value,
// x by half of its own (|largest| / 127), so the error is a fraction of sum |x| |w| (measured
// 1.6% here; bound 5%), about ten times int8's.
TEST(Int4Kernels, MatmulApproximatesF32) {
  std::mt19937 rng(24);
  const double worst = test_quantized::worst_error_against_f32<std::uint8_t>(rng);
  EXPECT_LT(worst, 0.05);
  EXPECT_GT(worst, 0.0);
}

}   // namespace
}   // namespace glassbox::kernels
