// The F32 kernels as a build for x86-64-v3 alone (tests/CMakeLists.txt), so that AVX2's prompt
// tiles (8 weight rows x 2 prompt rows) run here too: the tiling check of kernels_test.cpp.
#include <gtest/gtest.h>

#include "matmul_tiling_cases.h"

namespace glassbox::kernels {
namespace {

TEST(KernelsAvx2, MatmulRowsDoNotDependOnTheTiling) {
  if (!__builtin_cpu_supports("avx2")) GTEST_FAIL() << "this test needs an AVX2 CPU";
  test_tiling::expect_prompt_rows_equal_decoding(matmul);
}

TEST(KernelsAvx2, FusedMatmulRowsDoNotDependOnTheTiling) {
  if (!__builtin_cpu_supports("avx2")) GTEST_FAIL() << "this test needs an AVX2 CPU";
  test_tiling::expect_prompt_rows_equal_decoding(matmul_fused);
}

}   // namespace
}   // namespace glassbox::kernels
