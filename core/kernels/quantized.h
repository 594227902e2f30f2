// Int8 and int4 weights. Int8: a matrix stored as blocks of 32 signed bytes with one float scale per block
// (value ~= scale * q, scale = max |w| over the block / 127), and its product with activations
// quantized the same way on the fly. Decoding streams every weight once per token, so a quarter
// of the bytes (plus 1/8 for the scales) is what makes it faster; the products are exact integer
// dot products, scaled once per block.
//
// Layout of an (N,K) matrix, for the kernels' tile of 4 rows x 1 block:
//   K is padded with zeros to Kp = K rounded up to 32 (blocks = Kp / 32); N to Np, a multiple of 4.
//   q  (Np/4, blocks, 4, 32)  int8: block b of rows 4g..4g+3, 128 bytes together, so that a pass
//                             over 4 rows reads one contiguous stream (decoding is bound by memory
//                             bandwidth; 4 row streams were slower, as for F32: kernels.h)
//   d  (Np/4, blocks, 4)      float: the scales of rows 4g..4g+3 for block b sit together
// q8_index and q8_scale_index say where w[n][k] and the scale of row n's block b are.
//
// The byte of a value at an even k is stored with its top bit flipped (w ^ 0x80 = w + 128 read as
// unsigned); q8_weight reads a value back. Why: read as a little-endian 16-bit word, two values
// w0 (even k) and w1 are then W = (w0 + 128) + 256 * w1, and W . e + (W >> 8) . o, with e = x0 and
// o = x1 - 256 * x0, is w0 x0 + w1 x1 + 128 x0 exactly. So a 16-bit dot product (SIMD128 has
// nothing narrower) takes the stored bytes as they are, with no widening, and one subtraction per
// block removes the 128s. The x86 kernels flip the other bytes as well (w + 128 for every value)
// or flip these back (w itself), one XOR per vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace glassbox::kernels {

constexpr int kQ8Block = 32;   // values per scale
constexpr int kQ8Rows = 4;     // rows whose scales sit together

struct Q8Shape {
  Q8Shape(int N, int K)
      : N(N),
        K(K),
        Kp((K + kQ8Block - 1) / kQ8Block * kQ8Block),
        Np((N + kQ8Rows - 1) / kQ8Rows * kQ8Rows),
        blocks(Kp / kQ8Block) {}
  std::size_t q_size() const { return std::size_t(Np) * Kp; }       // int8 values
  std::size_t q4_size() const { return q_size() / 2; }              // int4: bytes of 2 values
  std::size_t d_size() const { return std::size_t(Np) * blocks; }   // scales
  int N, K, Kp, Np, blocks;
};

inline std::size_t q8_index(const Q8Shape& s, int n, int k) {
  return ((std::size_t(n / kQ8Rows) * s.blocks + k / kQ8Block) * kQ8Rows + n % kQ8Rows) * kQ8Block + k % kQ8Block;
}
inline std::size_t q8_scale_index(const Q8Shape& s, int n, int b) {
  return (std::size_t(n / kQ8Rows) * s.blocks + b) * kQ8Rows + n % kQ8Rows;
}
// The value w[n][k] in [-127, 127] (the stored byte, flipped back at even k).
inline int q8_weight(const std::int8_t* q, const Q8Shape& s, int n, int k) {
  const int v = q[q8_index(s, n, k)];
  return k % 2 ? v : v ^ -128;   // flips bit 7 of the byte as a signed value: (v + 128) mod 256 - 128
}

// w (N,K) float -> q, d in the layout above (padding zero).
void quantize_weights_q8(std::int8_t* q, float* d, const float* w, int N, int K);

// Activations x (T,K) quantized per row and block (round to nearest), in the forms this build's
// kernels read, for int8 and int4 weights alike. Every weight row reads them, so they are prepared
// once per product; the pairs stay empty where no kernel reads them (kQ8Pairs: SIMD128's).
#ifdef __wasm_simd128__
constexpr bool kQ8Pairs = true;
#else
constexpr bool kQ8Pairs = false;
#endif
struct Q8Activations {
  int T = 0, Kp = 0, blocks = 0;
  std::vector<std::int8_t> q;        // (T,Kp) values in [-127, 127], zero past K
  std::vector<float> d;              // (T,blocks) block scales
  std::vector<std::int16_t> pairs;   // kQ8Pairs: (T,blocks,2,16) per block e_j = q[2j], then o_j = q[2j+1] - 256 q[2j]
  std::vector<std::int32_t>
      even_sum128;                    // kQ8Pairs: (T,blocks) 128 * sum of q at even k (taken off W . e + (W >> 8) . o)
  std::vector<std::int32_t> sum128;   // (T,blocks) 128 * sum of q (taken off (w + 128) . q and, / 16, (w + 8) . q)
};
void quantize_activations_q8(Q8Activations& x, const float* in, int T, int K);
// The same in two steps, so that threads can share the rows: x sized for (T,K), then rows t0 .. t1-1
// of in quantized (each row alone: the bits do not depend on how the rows are split).
void size_activations_q8(Q8Activations& x, int T, int K);
void quantize_activation_rows_q8(Q8Activations& x, const float* in, int K, int t0, int t1);

// The kernels of matmul_q8. All give the same bits; Best picks the fastest this CPU has.
//   Portable   vector extensions / SIMD128, 16-bit dot products (every target)
//   Avx2       x86-64-v3: vpmaddubsw (|x| times w with x's sign) + vpmaddwd
//   AvxVnni    AVX-VNNI (AVX2 with vpdpbusd, no AVX-512): (w + 128) . x on 256-bit vectors
//   Avx512Vnni AVX-512 VNNI: vpdpbusd, 256-bit vectors decoding, 512-bit ones for prompts
enum class Q8Kernel { Best, Portable, Avx2, Avx512Vnni, AvxVnni };
bool q8_kernel_available(Q8Kernel kernel);

// out (T,N) = x @ w^T + bias (bias may be null), from the quantized forms of both; N as above.
// Per output: s = sum over blocks b, in order, of float(exact int dot of block b) * (dw * dx),
// then s + bias. Every kernel and the reference agree bit for bit. Rows of out are out_stride
// apart (0: N); a slice of w's rows starting at a multiple of 4 is a matrix in this layout too.
void matmul_q8(float* out, const Q8Activations& x, const std::int8_t* wq, const float* wd, const float* bias, int N,
               int out_stride = 0, Q8Kernel kernel = Q8Kernel::Best);

// Int4: the same blocks of 32 with one float scale, values in [-8, 7] (llama.cpp's Q4_0 rule, with
// a float scale where Q4_0 has a half: d = the block's value of largest magnitude / -8, the first
// one if several; q = trunc(w / d + 8.5) capped at 15, minus 8). Half the bytes of int8 for the
// weights, so decoding, bound by reading them, is faster; the activations are int8 as above.
// Layout of an (N,K) matrix, the shape and the scales as int8's (Q8Shape, q8_scale_index):
//   q  (Np/4, blocks, 4, 16)  bytes: block b of rows 4g..4g+3, 64 bytes together (one cache line).
//                             Byte j of a row's block holds value j in its low nibble and value
//                             j + 16 in its high one: the low nibbles of the 16 bytes are the
//                             block's first 16 values in order, the high ones the last 16. Each is
//                             stored as w + 8 (0..15), so the kernels compute (w + 8) . x and take
//                             8 sum(x) (sum128 / 16) off once per block.
inline std::size_t q4_index(const Q8Shape& s, int n, int k) {   // the byte that holds w[n][k]
  return ((std::size_t(n / kQ8Rows) * s.blocks + k / kQ8Block) * kQ8Rows + n % kQ8Rows) * (kQ8Block / 2) +
         k % (kQ8Block / 2);
}
// The value w[n][k] in [-8, 7].
inline int q4_weight(const std::uint8_t* q, const Q8Shape& s, int n, int k) {
  const int byte = q[q4_index(s, n, k)];
  return (k % kQ8Block < kQ8Block / 2 ? byte & 15 : byte >> 4) - 8;
}

// w (N,K) float -> q, d in the int4 layout (padding zero).
void quantize_weights_q4(std::uint8_t* q, float* d, const float* w, int N, int K);

// out (T,N) = x @ w^T + bias for int4 weights, with the contract of matmul_q8 (the same sums, in
// the same order; every kernel and the reference agree bit for bit). The kernels are int8's, for
// nibbles: Portable (SIMD128: 16-bit dot products of the nibbles' words), Avx2 (vpmaddubsw with
// w + 8 as the unsigned side), AvxVnni and Avx512Vnni (vpdpbusd).
void matmul_q4(float* out, const Q8Activations& x, const std::uint8_t* wq, const float* wd, const float* bias, int N,
               int out_stride = 0, Q8Kernel kernel = Q8Kernel::Best);

}   // namespace glassbox::kernels
