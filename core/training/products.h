// The matrix products of training, in one place, so that the arithmetic behind them is one
// choice of the build (GLASSBOX_TRAINING_KERNELS): for float, the engine's own SIMD kernels
// (kernels::matmul: one order of adds everywhere, so native and WebAssembly training give the same
// bits; Eigen has no WebAssembly SIMD backend), or Eigen's blocked GEMM (with -march=native its
// FMA is faster on one machine, with bits of its own). double, for the tests, always uses Eigen.
//
// Row-major matrices with row strides (ld*), so that one head's columns of qkv are read in place.
#pragma once

#include <cstddef>

namespace glassbox::training {

enum class Op { N, T };   // a matrix as stored, or its transpose

// c (M,N) = op(a) (M,K) @ op(b) (K,N), or c += it when `accumulate`.
//   op(a) = a, stored (M,K) with row stride lda; or a^T, a stored (K,M).
//   op(b) = b, stored (K,N) with row stride ldb; or b^T, b stored (N,K).
// c must not overlap a or b.
template <class Real>
void gemm(Real* c, int ldc, const Real* a, int lda, Op op_a, const Real* b, int ldb, Op op_b, int M, int N, int K,
          bool accumulate);

// True when float products run on the engine's kernels in this build.
bool products_on_kernels();

// The kernels' path keeps its packed operands and row blocks in buffers of the calling thread,
// grown to the largest product (the tied LM head's: vocabulary x width); this frees those of
// every thread (a Trainer going away: its shards may have run on the engine's pool, whose threads
// stay). A product under way on another thread is waited for.
void release_product_buffers();

// The bytes those buffers of every thread hold now.
std::size_t product_buffer_bytes();

}  // namespace glassbox::training
