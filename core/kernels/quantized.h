// Int8 weights: a matrix stored as blocks of 32 signed bytes with one float scale per block
// (value ~= scale * q, scale = max |w| over the block / 127), and its product with activations
// quantized the same way on the fly. Decoding streams every weight once per token, so a quarter
// of the bytes (plus 1/8 for the scales) is what makes it faster; the products are exact integer
// dot products (SIMD128 i32x4.dot_i16x8_s, SSE/AVX pmaddwd), scaled once per block.
//
// Layout of an (N,K) matrix, for the kernel's tile of 4 rows x 1 block:
//   K is padded with zeros to Kp = K rounded up to 32 (blocks = Kp / 32); N to Np, a multiple of 4.
//   q  (Np/4, blocks, 4, 32)  int8: block b of rows 4g..4g+3, 128 bytes together, so that a pass
//                             over 4 rows reads one contiguous stream (decoding is bound by memory
//                             bandwidth; 4 row streams were slower, as for F32: kernels.h)
//   d  (Np/4, blocks, 4)      float: the scales of rows 4g..4g+3 for block b sit together
// q8_index and q8_scale_index say where w[n][k] and the scale of row n's block b are.
// Activations are quantized per row into int16 (values in [-127, 127]), already widened because
// every weight row reads them: x (T,K) -> q (T,Kp) int16, d (T, blocks) float.
#pragma once

#include <cstddef>
#include <cstdint>

namespace glassbox::kernels {

constexpr int kQ8Block = 32;   // values per scale
constexpr int kQ8Rows = 4;     // rows whose scales sit together

struct Q8Shape {
  Q8Shape(int N, int K)
      : N(N), K(K), Kp((K + kQ8Block - 1) / kQ8Block * kQ8Block), Np((N + kQ8Rows - 1) / kQ8Rows * kQ8Rows),
        blocks(Kp / kQ8Block) {}
  std::size_t q_size() const { return std::size_t(Np) * Kp; }       // int8 values
  std::size_t d_size() const { return std::size_t(Np) * blocks; }   // scales
  int N, K, Kp, Np, blocks;
};

inline std::size_t q8_index(const Q8Shape& s, int n, int k) {
  return ((std::size_t(n / kQ8Rows) * s.blocks + k / kQ8Block) * kQ8Rows + n % kQ8Rows) * kQ8Block + k % kQ8Block;
}
inline std::size_t q8_scale_index(const Q8Shape& s, int n, int b) {
  return (std::size_t(n / kQ8Rows) * s.blocks + b) * kQ8Rows + n % kQ8Rows;
}

// w (N,K) float -> q, d in the layout above (padding zero).
void quantize_weights_q8(std::int8_t* q, float* d, const float* w, int N, int K);

// x (T,K) float -> q (T,Kp) int16, d (T,blocks); round to nearest.
void quantize_activations_q8(std::int16_t* q, float* d, const float* x, int T, int K);

// out (T,N) = x @ w^T + bias (bias may be null), from the quantized forms of both; Kp, N as above.
// Per output: s = sum over blocks b, in order, of float(exact int dot of block b) * (dw * dx),
// then s + bias. Fast and reference kernels agree bit for bit. Rows of out are out_stride apart
// (0: N); a slice of w's rows starting at a multiple of 4 is a matrix in this layout too.
void matmul_q8(float* out, const std::int16_t* xq, const float* xd, const std::int8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N, int out_stride = 0);

}  // namespace glassbox::kernels
