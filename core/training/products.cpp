#include "training/products.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "kernels/kernels.h"

namespace glassbox::training {
namespace {

#ifdef GLASSBOX_TRAINING_KERNELS
constexpr bool kFloatOnKernels = true;
#else
constexpr bool kFloatOnKernels = false;
#endif

// ---------------------------------------------------------------------------------------------
// Eigen: maps of the strided operands, and its GEMM.

template <class Real>
using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class Real>
using ConstStrided = Eigen::Map<const Matrix<Real>, 0, Eigen::OuterStride<>>;
template <class Real>
using Strided = Eigen::Map<Matrix<Real>, 0, Eigen::OuterStride<>>;

template <class Real, class A, class B>
void store(Strided<Real> c, const A& a, const B& b, bool accumulate) {
  if (accumulate)
    c.noalias() += a * b;
  else
    c.noalias() = a * b;
}

template <class Real>
void gemm_on_eigen(Real* c, int ldc, const Real* a, int lda, Op op_a, const Real* b, int ldb, Op op_b, int M, int N,
                   int K, bool accumulate) {
  Strided<Real> cm(c, M, N, Eigen::OuterStride<>(ldc));
  const ConstStrided<Real> am(a, op_a == Op::N ? M : K, op_a == Op::N ? K : M, Eigen::OuterStride<>(lda));
  const ConstStrided<Real> bm(b, op_b == Op::N ? K : N, op_b == Op::N ? N : K, Eigen::OuterStride<>(ldb));
  if (op_a == Op::N && op_b == Op::N) store<Real>(cm, am, bm, accumulate);
  if (op_a == Op::N && op_b == Op::T) store<Real>(cm, am, bm.transpose(), accumulate);
  if (op_a == Op::T && op_b == Op::N) store<Real>(cm, am.transpose(), bm, accumulate);
  if (op_a == Op::T && op_b == Op::T) store<Real>(cm, am.transpose(), bm.transpose(), accumulate);
}

// ---------------------------------------------------------------------------------------------
// The engine's kernels: kernels::matmul computes out (T,N) = x (T,K) @ w (N,K)^T with w packed.
// op(b)^T is packed once per product (O(N K) against O(M N K) arithmetic); op(a) goes through in
// blocks of rows, copied contiguous when a is strided or transposed. A block of 64 rows stays in
// the caches while the packed matrix streams past it (without blocks the kernels lost to Eigen
// on training's tall products: docs/performance.md, Training).

constexpr int kRowBlock = 64;

// The buffers of this thread's products: a shard's own while UseProductBuffers says so (a shard
// may run on any of a pool's threads), else the thread's.
thread_local ProductBuffers own_buffers;
thread_local ProductBuffers* current_buffers = nullptr;

[[maybe_unused]] void gemm_on_kernels(float* c, int ldc, const float* a, int lda, Op op_a, const float* b, int ldb,
                                      Op op_b, int M, int N, int K, bool accumulate) {
  ProductBuffers& s = current_buffers ? *current_buffers : own_buffers;
  s.packed.resize(std::size_t(N) * K);
  // op(b)^T is w (N,K): b itself when op_b = T, else b (K,N) is w^T.
  const int b_cols = op_b == Op::T ? K : N, b_rows = op_b == Op::T ? N : K;
  const float* dense_b = b;
  if (ldb != b_cols) {
    s.unpacked.resize(std::size_t(b_rows) * b_cols);
    for (int r = 0; r < b_rows; ++r)
      std::copy(b + std::size_t(r) * ldb, b + std::size_t(r) * ldb + b_cols,
                s.unpacked.begin() + std::ptrdiff_t(r) * b_cols);
    dense_b = s.unpacked.data();
  }
  if (op_b == Op::T)
    kernels::pack_matrix(s.packed.data(), dense_b, N, K);
  else
    kernels::pack_matrix_transposed(s.packed.data(), dense_b, N, K);

  for (int r0 = 0; r0 < M; r0 += kRowBlock) {
    const int rows = std::min(kRowBlock, M - r0);
    const float* x;   // op(a)'s rows r0 .. r0+rows, contiguous
    if (op_a == Op::N && lda == K) {
      x = a + std::size_t(r0) * K;
    } else {
      s.rows.resize(std::size_t(rows) * K);
      x = s.rows.data();
      if (op_a == Op::N) {
        for (int i = 0; i < rows; ++i) {
          const float* row = a + std::size_t(r0 + i) * lda;
          std::copy(row, row + K, s.rows.begin() + std::ptrdiff_t(i) * K);
        }
      } else {   // row r0+i of a^T is column r0+i of a (K,M)
        for (int k = 0; k < K; ++k) {
          const float* column_piece = a + std::size_t(k) * lda + r0;
          for (int i = 0; i < rows; ++i) s.rows[std::size_t(i) * K + k] = column_piece[i];
        }
      }
    }
    float* out = c + std::size_t(r0) * ldc;
    if (!accumulate) {
      kernels::matmul(out, x, s.packed.data(), nullptr, rows, K, N, ldc);
      continue;
    }
    s.out.resize(std::size_t(rows) * N);
    kernels::matmul(s.out.data(), x, s.packed.data(), nullptr, rows, K, N);
    for (int i = 0; i < rows; ++i) kernels::add(out + std::size_t(i) * ldc, s.out.data() + std::size_t(i) * N, N);
  }
}

}   // namespace

bool products_on_kernels() { return kFloatOnKernels; }

std::size_t ProductBuffers::bytes() const {
  return sizeof(float) * (packed.capacity() + unpacked.capacity() + rows.capacity() + out.capacity());
}

UseProductBuffers::UseProductBuffers(ProductBuffers& buffers) : previous_(current_buffers) {
  current_buffers = &buffers;
}
UseProductBuffers::~UseProductBuffers() { current_buffers = previous_; }

template <class Real>
void gemm(Real* c, int ldc, const Real* a, int lda, Op op_a, const Real* b, int ldb, Op op_b, int M, int N, int K,
          bool accumulate) {
  if constexpr (std::is_same_v<Real, float> && kFloatOnKernels)
    gemm_on_kernels(c, ldc, a, lda, op_a, b, ldb, op_b, M, N, K, accumulate);
  else
    gemm_on_eigen(c, ldc, a, lda, op_a, b, ldb, op_b, M, N, K, accumulate);
}

template void gemm<float>(float*, int, const float*, int, Op, const float*, int, Op, int, int, int, bool);
template void gemm<double>(double*, int, const double*, int, Op, const double*, int, Op, int, int, int, bool);

}   // namespace glassbox::training
