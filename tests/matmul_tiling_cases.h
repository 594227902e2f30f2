// The check of the F32 prompt tiles that tests/kernels_test.cpp runs on the library's kernels and
// tests/kernels_avx2_test.cpp on the kernels built for x86-64-v3 alone (AVX2's tiles, which a CPU
// with AVX-512 never takes in the library). Header-only, with no other test helper, so that the
// second executable links nothing but those kernels.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reference.h"

namespace glassbox::kernels::test_tiling {

inline std::vector<float> normal_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

// The tiles (several weight rows x several prompt rows) change the speed, not the bits, with
// fused multiply-adds or without: each row
// of a T-row product equals the same row computed alone (the decoding path), exactly, and the
// scalar reference within float rounding (a different order of sums). K = 1603 also cuts a
// prompt's columns into blocks (matmul_tiles.h's kKBlock, 768), which decoding does not; N = 45 is 5
// groups of 8 (decoding pairs 4 of them, AVX-512's tiles of 16 rows leave one) and 5 rows; T = 3,
// 11 and 13 leave rows past whole tiles of every height (2 or 4 rows).
// product: matmul or matmul_fused.
using Product = void (*)(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
                         int out_stride);
inline void expect_prompt_rows_equal_decoding(Product product) {
  std::mt19937 rng(3);
  for (const int K : {77, 768, 1603})
    for (const int T : {2, 3, 11, 13})
      for (const int N : {8, 17, 45, 96}) {
        const auto x = normal_values(std::size_t(T) * K, rng), w = normal_values(std::size_t(N) * K, rng),
                   bias = normal_values(N, rng);
        std::vector<float> packed(w.size()), all(std::size_t(T) * N), one(N), ref(all.size());
        pack_matrix(packed.data(), w.data(), N, K);
        product(all.data(), x.data(), packed.data(), bias.data(), T, K, N, 0);
        reference::matmul(ref.data(), x.data(), w.data(), bias.data(), T, K, N);
        for (int t = 0; t < T; ++t) {
          product(one.data(), x.data() + std::size_t(t) * K, packed.data(), bias.data(), 1, K, N, 0);
          for (int n = 0; n < N; ++n) {
            const float got = all[std::size_t(t) * N + n];
            ASSERT_EQ(got, one[n]) << "K=" << K << " T=" << T << " N=" << N << " t=" << t << " n=" << n;
            ASSERT_NEAR(got, ref[std::size_t(t) * N + n], 4e-5f * std::sqrt(float(K)))
                << "K=" << K << " T=" << T << " N=" << N << " t=" << t << " n=" << n;
          }
        }
      }
}

}   // namespace glassbox::kernels::test_tiling
