// The F32 kernels as a build for x86-64-v3 alone (tests/CMakeLists.txt): the prompt tiles of AVX2
// (8 weight rows x 2 prompt rows), which a CPU with AVX-512 never takes in the library. Each row of
// a prompt's product equals the same row decoded alone, bit for bit, and the scalar reference
// within rounding, on ragged shapes: K past one block of columns (1603) or not (77, 768), prompts
// with an odd row past the tiles, N past whole groups of 8.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reference.h"

namespace glassbox::kernels {
namespace {

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

TEST(KernelsAvx2, PromptRowsEqualDecodingAndTheReference) {
  if (!__builtin_cpu_supports("avx2")) GTEST_FAIL() << "this test needs an AVX2 CPU";
  std::mt19937 rng(3);
  for (const int K : {77, 768, 1603})
    for (const int T : {2, 3, 11})
      for (const int N : {8, 17, 45, 96}) {
        const auto x = random_values(std::size_t(T) * K, rng), w = random_values(std::size_t(N) * K, rng),
                   bias = random_values(N, rng);
        std::vector<float> packed(w.size()), all(std::size_t(T) * N), one(N), ref(all.size());
        pack_matrix(packed.data(), w.data(), N, K);
        matmul(all.data(), x.data(), packed.data(), bias.data(), T, K, N);
        reference::matmul(ref.data(), x.data(), w.data(), bias.data(), T, K, N);
        for (int t = 0; t < T; ++t) {
          matmul(one.data(), x.data() + std::size_t(t) * K, packed.data(), bias.data(), 1, K, N);
          for (int n = 0; n < N; ++n) {
            const float got = all[std::size_t(t) * N + n];
            ASSERT_EQ(got, one[n]) << "K=" << K << " T=" << T << " N=" << N << " t=" << t << " n=" << n;
            // Different summation order from the reference: float rounding relative to sqrt(K).
            ASSERT_NEAR(got, ref[std::size_t(t) * N + n], 4e-5f * std::sqrt(float(K)))
                << "K=" << K << " T=" << T << " N=" << N << " t=" << t << " n=" << n;
          }
        }
      }
}

}   // namespace
}   // namespace glassbox::kernels
