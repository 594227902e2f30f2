// training::gemm, the matrix products of training, against a plain triple loop in double: every
// combination of transposes, with row strides wider than the rows (one head's columns of qkv) and
// with accumulation, in float (the kernels by default, Eigen in native-fast) and in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "training/products.h"

namespace glassbox::training {
namespace {

template <class Real>
void check_every_layout(double tolerance, int M, int N, int K, int pad) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (Op op_a : {Op::N, Op::T})
    for (Op op_b : {Op::N, Op::T})
      for (bool accumulate : {false, true}) {
        const int a_rows = op_a == Op::N ? M : K, a_cols = op_a == Op::N ? K : M;
        const int b_rows = op_b == Op::N ? K : N, b_cols = op_b == Op::N ? N : K;
        const int lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
        std::vector<Real> a(std::size_t(a_rows) * lda), b(std::size_t(b_rows) * ldb), c(std::size_t(M) * ldc);
        for (auto& x : a) x = Real(uniform(rng));
        for (auto& x : b) x = Real(uniform(rng));
        for (auto& x : c) x = Real(uniform(rng));
        const std::vector<Real> before = c;
        gemm(c.data(), ldc, a.data(), lda, op_a, b.data(), ldb, op_b, M, N, K, accumulate);
        for (int i = 0; i < M; ++i)
          for (int j = 0; j < ldc; ++j) {
            const double old = before[std::size_t(i) * ldc + j];
            if (j >= N) {   // past the row: untouched
              ASSERT_EQ(c[std::size_t(i) * ldc + j], before[std::size_t(i) * ldc + j]);
              continue;
            }
            double sum = accumulate ? old : 0.0;
            for (int k = 0; k < K; ++k) {
              const double x = op_a == Op::N ? a[std::size_t(i) * lda + k] : a[std::size_t(k) * lda + i];
              const double y = op_b == Op::N ? b[std::size_t(k) * ldb + j] : b[std::size_t(j) * ldb + k];
              sum += x * y;
            }
            ASSERT_NEAR(c[std::size_t(i) * ldc + j], sum, tolerance)
                << M << "x" << N << "x" << K << " pad " << pad << " op_a " << int(op_a) << " op_b " << int(op_b)
                << " accumulate " << accumulate << " at " << i << "," << j;
          }
      }
}

// M > 64: two blocks of rows; odd sizes: every tail; pad 0: the operands used in place, as most
// of training's are; one row (a classifier's head), fewer columns than a packed group, K = 1.
template <class Real>
void check_shapes(double tolerance) {
  for (int pad : {0, 3}) {
    check_every_layout<Real>(tolerance, 70, 37, 45, pad);
    check_every_layout<Real>(tolerance, 1, 5, 16, pad);
    check_every_layout<Real>(tolerance, 9, 3, 1, pad);
  }
}

TEST(TrainingProducts, FloatMatchesAPlainLoopInEveryLayout) { check_shapes<float>(2e-5); }
TEST(TrainingProducts, DoubleMatchesAPlainLoopInEveryLayout) { check_shapes<double>(1e-12); }

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
// A Trainer gives each shard its buffers, and a shard may run on any of a pool's threads: the
// products use the buffers they are given there, so the Trainer holds (and frees) them all.
TEST(TrainingProducts, ProductsUseTheBuffersTheyAreGivenOnAnyThread) {
  constexpr int M = 4, N = 512, K = 512;   // the packed operand alone is N x K floats: 1 MB
  std::vector<float> a(std::size_t(M) * K, 0.5f), b(std::size_t(K) * N, 0.25f), c(std::size_t(M) * N);
  ProductBuffers shard;
  std::thread worker([&] {
    const UseProductBuffers use(shard);
    gemm(c.data(), N, a.data(), K, Op::N, b.data(), N, Op::N, M, N, K, false);
  });
  worker.join();
  EXPECT_FLOAT_EQ(c[0], 0.5f * 0.25f * K);
  if (products_on_kernels())
    EXPECT_GE(shard.bytes(), sizeof(float) * N * K) << "the thread packed its operand into the shard's buffers";
  else   // Eigen's products keep no buffers of their own
    EXPECT_EQ(shard.bytes(), 0u);
  const std::size_t before = shard.bytes();
  gemm(c.data(), N, a.data(), K, Op::N, b.data(), N, Op::N, M, N, K, true);   // no guard: this thread's own
  EXPECT_EQ(shard.bytes(), before);
  EXPECT_FLOAT_EQ(c[0], 2 * 0.5f * 0.25f * K);
}
#endif

}   // namespace
}   // namespace glassbox::training
