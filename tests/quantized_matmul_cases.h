// The checks int8 and int4 products share (tests/kernels_test.cpp, tests/kernels_int4_test.cpp),
// written once over the weight type W: std::int8_t for int8, std::uint8_t (two values a byte) for
// int4. Each format's functions are in Format<W>.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/quantized.h"
#include "kernels/reference.h"
#include "test_util.h"

namespace glassbox::kernels::test_quantized {

template <class W>
struct Format;
template <>
struct Format<std::int8_t> {
  static constexpr const char* kName = "int8";
  static std::size_t weight_bytes(const Q8Shape& s) { return s.q_size(); }
  static std::size_t row_bytes(const Q8Shape& s) { return std::size_t(s.Kp); }
  static constexpr auto quantize = quantize_weights_q8;
  static constexpr auto matmul = matmul_q8;
  static constexpr auto reference = reference::matmul_q8;
};
template <>
struct Format<std::uint8_t> {
  static constexpr const char* kName = "int4";
  static std::size_t weight_bytes(const Q8Shape& s) { return s.q4_size(); }
  static std::size_t row_bytes(const Q8Shape& s) { return std::size_t(s.Kp) / 2; }
  static constexpr auto quantize = quantize_weights_q4;
  static constexpr auto matmul = matmul_q4;
  static constexpr auto reference = reference::matmul_q4;
};

// Quantized forms of random x (T,K) and w (N,K); `sign` draws every value as +-1 instead (x
// quantizes to +-127, w to its format's extremes): the largest products the kernels' integer
// steps must hold.
template <class W>
struct Case {
  Case(int T, int K, int N, std::mt19937& rng, bool sign = false)
      : x(values(std::size_t(T) * K, rng, 1.0f, sign)),
        w(values(std::size_t(N) * K, rng, 0.1f, sign)),
        bias(test::random_vector(N, rng)),
        s(N, K),
        wq(Format<W>::weight_bytes(s)),
        wd(s.d_size()) {
    Format<W>::quantize(wq.data(), wd.data(), w.data(), N, K);
    quantize_activations_q8(xq, x.data(), T, K);
  }
  static std::vector<float> values(std::size_t n, std::mt19937& rng, float scale, bool sign) {
    auto v = test::random_vector(n, rng, scale);
    if (sign)
      for (float& f : v) f = f < 0.0f ? -1.0f : 1.0f;
    return v;
  }
  std::vector<float> x, w, bias;
  Q8Shape s;
  std::vector<W> wq;
  std::vector<float> wd;
  Q8Activations xq;
};

// Integer dot products are exact and blocks are summed in one order, so every kernel this CPU has
// equals the reference bit for bit, on ragged shapes too (K, N not multiples of 32 and 4; an odd
// number of blocks and of row groups), with values at the extremes, and on a slice of the rows
// written with a stride (as the threads do). A kernel the CPU lacks is an error.
template <class W>
void expect_kernels_equal_reference(std::mt19937& rng) {
  using F = Format<W>;
  // Prompts run on weights copied into panels: natively from 4 rows of x, in tiles of 4 or 6 rows,
  // 16 to 64 blocks copied at a time (core/kernels/quantized_x86_prompt.h); in WebAssembly from 2
  // rows, in tiles of 2, 21 blocks at a time (quantized_simd128_prompt.h). The shapes below cross
  // each of those edges, with rows of x left over after the last whole tile.
  const int shapes[][3] = {{1, 1, 1},      {1, 32, 4},    {3, 33, 5},    {1, 768, 13}, {5, 100, 7},
                           {2, 3072, 9},   {6, 64, 64},   {1, 16, 50},   {1, 800, 21}, {1, 96, 12},
                           {1, 3072, 40},  {2, 800, 9},   {4, 1, 3},     {4, 64, 8},   {9, 100, 23},
                           {13, 3072, 17}, {7, 2100, 36}, {8, 2049, 20}, {11, 32, 33}};
  int kernels_run = 0;
  for (const Q8Kernel kernel :
       {Q8Kernel::Best, Q8Kernel::Portable, Q8Kernel::Avx2, Q8Kernel::AvxVnni, Q8Kernel::Avx512Vnni}) {
    if (!q8_kernel_available(kernel)) {
      EXPECT_THROW(F::matmul(nullptr, Q8Activations{}, nullptr, nullptr, nullptr, 0, 0, kernel), std::invalid_argument);
      continue;
    }
    ++kernels_run;
    for (const bool sign : {false, true})
      for (const auto& sh : shapes) {
        const int T = sh[0], K = sh[1], N = sh[2];
        Case<W> c(T, K, N, rng, sign);
        std::vector<float> ref(std::size_t(T) * N, 8.0f);
        for (const float* bias : {static_cast<const float*>(c.bias.data()), static_cast<const float*>(nullptr)}) {
          std::vector<float> fast(std::size_t(T) * N, 7.0f);
          F::matmul(fast.data(), c.xq, c.wq.data(), c.wd.data(), bias, N, 0, kernel);
          F::reference(ref.data(), c.xq.q.data(), c.xq.d.data(), c.wq.data(), c.wd.data(), bias, T, c.s.Kp, N);
          for (std::size_t i = 0; i < fast.size(); ++i)
            ASSERT_EQ(fast[i], ref[i]) << F::kName << " kernel " << int(kernel) << " T=" << T << " K=" << K
                                       << " N=" << N << " i=" << i;
        }
        // Rows 4.. N-1 alone, from their slice of the weights, into the same place of out.
        if (N <= 4) continue;
        std::vector<float> slice(std::size_t(T) * N, 9.0f);
        F::matmul(slice.data() + 4, c.xq, c.wq.data() + 4 * F::row_bytes(c.s), c.wd.data() + 4 * c.s.blocks, nullptr,
                  N - 4, N, kernel);
        for (int t = 0; t < T; ++t)
          for (int n = 0; n < N; ++n)
            ASSERT_EQ(slice[std::size_t(t) * N + n], n < 4 ? 9.0f : ref[std::size_t(t) * N + n])
                << "slice t=" << t << " n=" << n;
      }
  }
  std::printf("%s kernels checked on this CPU: %d (of 5, Best included)\n", F::kName, kernels_run);
  EXPECT_GE(kernels_run, 2);
}

// The worst |error| of the quantized product against F32, as a fraction of sum |x| |w| (the scale
// of the rounding errors), on (4,768) x (64,768).
template <class W>
double worst_error_against_f32(std::mt19937& rng) {
  const int T = 4, K = 768, N = 64;
  Case<W> c(T, K, N, rng);
  std::vector<float> q(std::size_t(T) * N), f32(q.size());
  Format<W>::matmul(q.data(), c.xq, c.wq.data(), c.wd.data(), nullptr, N, 0, Q8Kernel::Best);
  reference::matmul(f32.data(), c.x.data(), c.w.data(), nullptr, T, K, N);
  double worst = 0.0;
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double mass = 0.0;
      for (int k = 0; k < K; ++k) mass += std::abs(c.x[t * K + k] * c.w[n * K + k]);
      worst = std::max(worst, std::abs(q[t * N + n] - f32[t * N + n]) / mass);
    }
  std::printf("%s product: worst |error| / sum |x w| = %.4f\n", Format<W>::kName, worst);
  return worst;
}

}   // namespace glassbox::kernels::test_quantized
