// The matrix products of training, in one place, so that the arithmetic behind them is one
// choice of the build (GLASSBOX_TRAINING_KERNELS): for float, the engine's own SIMD kernels
// (kernels::matmul: one order of adds everywhere, so native and WebAssembly training give the same
// bits; Eigen has no WebAssembly SIMD backend), or Eigen's blocked GEMM (with -march=native its
// FMA is faster on one machine, with bits of its own). double, for the tests, always uses Eigen.
//
// Row-major matrices with row strides (ld*), so that one head's columns of qkv are read in place.
#pragma once

#include <cstddef>
#include <vector>

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

// The kernels' path packs operands and copies row blocks into buffers grown to the largest product
// (the tied LM head's: vocabulary x width). A thread's products use the buffers it was given
// (UseProductBuffers: a Trainer gives each shard its own, whichever thread runs the shard), or else
// buffers of the thread's own.
struct ProductBuffers {
  std::vector<float> packed, unpacked, rows, out;
  std::size_t bytes() const;   // what they hold now
};

// While it lives, this thread's products use `buffers`.
class UseProductBuffers {
 public:
  explicit UseProductBuffers(ProductBuffers& buffers);
  ~UseProductBuffers();
  UseProductBuffers(const UseProductBuffers&) = delete;
  UseProductBuffers& operator=(const UseProductBuffers&) = delete;

 private:
  ProductBuffers* previous_;
};

}   // namespace glassbox::training
