// The x86 int8 and int4 kernels' prompt loop (T >= kPromptRows rows of x), beside the loop in
// quantized_x86_loop.h that decodes and runs short prompts. Compiled, as that one, in
// quantized_avx2.cpp, quantized_avx_vnni.cpp and quantized_vnni.cpp with their instruction sets
// switched on.
//
// Costs: a prompt is bound by arithmetic, not by memory: every weight is used by all T rows of x.
// The stored layout (quantized.h) keeps a row's 32 values of a block in one register, so each of
// the decoding loop's dot products leaves 8 partial sums that must be added across the lanes, per
// row, per block and per prompt row: shuffles outnumbered the multiplies. Here the weights are
// first copied into a panel, a block's values 4 at a time for 8 rows side by side:
//   panel step j of block b: [row 0: values 4j..4j+3 | row 1: ... | row 7: ...]  (32 bytes)
// so one multiply-add of 4 bytes per int32 lane (vpdpbusd; AVX2: vpmaddubsw + vpmaddwd) against
// x's 4 values broadcast to every lane adds to each row's own lane: after the block's 8 steps,
// lane r holds row r's whole block, and no lane is ever added across. The copy (an 8 x 8
// transpose of 4-byte words per block) is done once per product and 8 rows, and serves all T rows
// of x; kPanelBytes of it at a time, so that it stays in the L1 cache while x's rows go by.
//
// The sums are the reference's: exact integer dot products per block, then, row by row,
// s += float(dot) * (dw * dx) block after block: bit for bit the same results.
#pragma once

#include "kernels/quantized_x86_loop.h"

namespace glassbox::kernels::x86 {
namespace {

constexpr int kPanelRows = 8;                           // weight rows of a panel: one per int32 lane
constexpr int kPanelSteps = kBlock / 4;                 // 4 values per lane per step: 8 steps a block
constexpr int kPanelBlockBytes = kPanelRows * kBlock;   // 256: one block of a panel
constexpr int kPanelBytes = 16384;                      // the panels' weights copied at a time (L1)
constexpr int kPromptRows = 4;                          // from this many rows of x, the prompt loop

// Row r's 4-byte word j in v[j]'s lane r: the 8 x 8 transpose of 32-bit words.
inline void transpose8x8(__m256i (&v)[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);       // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);   // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);       // a0 b0 c0 d0 | a4 b4 c4 d4
    u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);   // a1 ..       | a5 ..
    u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
    u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
  }
  for (int j = 0; j < 4; ++j) {
    v[j] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x20);
    v[j + 4] = _mm256_permute2x128_si256(u[j], u[j + 4], 0x31);
  }
}

// Blocks b0 .. b1-1 of P panels (rows 8p .. 8p+7 of the groups from g0 on; rows past the last
// group are zeros) into q (b, step, panel, 32 bytes) and their scales into d (b, panel, 8), each
// value as Dots::weights gives it (w + Dots::kOffset, or w).
template <class Dots, int P>
inline void copy_panels(std::uint8_t* q, float* d, const Groups<Dots>& m, int g0, int groups, int b0, int b1) {
  constexpr int kRowBytes = Dots::kRowBytes;
  for (int b = b0; b < b1; ++b)
    for (int p = 0; p < P; ++p) {
      __m256i v[kPanelRows];
      for (int r = 0; r < kPanelRows; ++r) {
        const int g = g0 + 2 * p + r / kRows;
        v[r] = g < groups ? Dots::weights(m.wq + g * m.group_q + std::size_t(b) * Groups<Dots>::kGroupBlock +
                                          (r % kRows) * kRowBytes)
                          : _mm256_setzero_si256();
      }
      transpose8x8(v);
      std::uint8_t* to = q + std::size_t(b - b0) * P * kPanelBlockBytes + p * 32;
      for (int j = 0; j < kPanelSteps; ++j) _mm256_store_si256(reinterpret_cast<__m256i*>(to + j * P * 32), v[j]);
      float* scales = d + (std::size_t(b - b0) * P + p) * kPanelRows;
      for (int half = 0; half < 2; ++half) {
        const int g = g0 + 2 * p + half;
        const __m128 s = g < groups ? _mm_loadu_ps(m.wd + g * m.group_d + b * kRows) : _mm_setzero_ps();
        _mm_store_ps(scales + half * kRows, s);
      }
    }
}

// The registers the prompt loop works in: Ymm, 256 bits, one panel (8 rows). quantized_vnni.cpp
// adds Zmm, 512 bits: two panels side by side (16 rows), which the copy lays out consecutively.
struct Ymm {
  using I = __m256i;
  using F = __m256;
  using Mask = __m256i;
  static constexpr int kPanels = 1;
  static I zero() { return _mm256_setzero_si256(); }
  static I load(const std::uint8_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); }
  static I splat(std::int32_t v) { return _mm256_set1_epi32(v); }
  static F splat(float v) { return _mm256_set1_ps(v); }
  static F to_float(I v) { return _mm256_cvtepi32_ps(v); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F load(const float* p) { return _mm256_load_ps(p); }
  static Mask first(int rows) {   // the lanes below `rows`
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static F load(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static void store(float* p, Mask m, F v) { _mm256_maskstore_ps(p, m, v); }
};

// Prompt rows t0 .. t0+TX-1 against the panels' blocks b0 .. b1-1 (outputs n0 ..), R registers
// of V (R * V::kPanels panels) per step: each row's sums start at zero (b0 = 0) or where the
// previous blocks left them in out, and end in out, with the bias once the last block is in
// (b1 = blocks). Only the rows below N are read and written.
template <class Dots, class V, int R, int TX>
inline void panel_rows(float* out, int ld, const Q8Rows& x, int t0, const std::uint8_t* q, const float* d, int b0,
                       int b1, const float* bias, int n0, int N) {
  using G = Groups<Dots>;
  constexpr int P = R * V::kPanels, kWidth = V::kPanels * kPanelRows;   // panels; rows per register
  typename V::Mask mask[R];
  typename V::F acc[TX][R];
  for (int r = 0; r < R; ++r) {
    mask[r] = V::first(N - n0 - r * kWidth);
    for (int t = 0; t < TX; ++t)
      acc[t][r] = b0 == 0 ? V::splat(0.0f) : V::load(out + std::size_t(t0 + t) * ld + n0 + r * kWidth, mask[r]);
  }
  const std::int8_t* xq = x.q + std::size_t(t0) * x.Kp;
  for (int b = b0; b < b1; ++b) {
    const std::uint8_t* w = q + std::size_t(b - b0) * P * kPanelBlockBytes;
    typename V::I dots[TX][R];
    for (int t = 0; t < TX; ++t)
      for (int r = 0; r < R; ++r) dots[t][r] = V::zero();
    for (int j = 0; j < kPanelSteps; ++j) {
      typename V::I wv[R];
      for (int r = 0; r < R; ++r) wv[r] = V::load(w + (j * P + r * V::kPanels) * 32);
      for (int t = 0; t < TX; ++t) {
        std::int32_t four;   // x's values 4j..4j+3 of this block, in every lane
        __builtin_memcpy(&four, xq + std::size_t(t) * x.Kp + b * kBlock + 4 * j, 4);
        const typename V::I xv = V::splat(four);
        for (int r = 0; r < R; ++r) dots[t][r] = Dots::step(dots[t][r], wv[r], xv);
      }
    }
    for (int t = 0; t < TX; ++t)
      for (int r = 0; r < R; ++r) dots[t][r] = Dots::block_sum(dots[t][r]);
    for (int t = 0; t < TX; ++t) {
      const std::size_t tb = std::size_t(t0 + t) * x.blocks + b;
      const typename V::I offset = V::splat(G::offset_sum(x.sum128[tb]));
      const typename V::F dx = V::splat(x.d[tb]);
      for (int r = 0; r < R; ++r) {
        const typename V::F dw = V::load(d + (std::size_t(b - b0) * P + r * V::kPanels) * kPanelRows);
        acc[t][r] = V::add(acc[t][r], V::mul(V::to_float(V::sub(dots[t][r], offset)), V::mul(dw, dx)));
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    if (b1 == x.blocks) {
      const typename V::F bv = bias ? V::load(bias + n0 + r * kWidth, mask[r]) : V::splat(0.0f);
      for (int t = 0; t < TX; ++t) acc[t][r] = V::add(acc[t][r], bv);
    }
    for (int t = 0; t < TX; ++t) V::store(out + std::size_t(t0 + t) * ld + n0 + r * kWidth, mask[r], acc[t][r]);
  }
}

// The prompt loop: Dots::kRegisters registers of Dots::Vec at a time (their panels), every row of
// x against them, kPanelBytes of their blocks at a time; rows of x in tiles of Dots::kPromptTile,
// then one by one.
template <class Dots>
void matmul_prompt(float* out, int ld, const Q8Rows& x, const typename Dots::Weight* wq, const float* wd,
                   const float* bias, int N) {
  using V = typename Dots::Vec;
  constexpr int R = Dots::kRegisters, P = R * V::kPanels, TX = Dots::kPromptTile;
  constexpr int kChunk = kPanelBytes / (P * kPanelBlockBytes);   // blocks copied at a time
  const Groups<Dots> m{wq, wd, std::size_t(x.blocks) * Groups<Dots>::kGroupBlock, std::size_t(x.blocks) * kRows};
  const int groups = (N + kRows - 1) / kRows;
  alignas(64) std::uint8_t q[kPanelBytes];
  alignas(64) float d[kChunk * P * kPanelRows];
  for (int g0 = 0; g0 < groups; g0 += 2 * P) {
    const int n0 = g0 * kRows;
    for (int b0 = 0; b0 < x.blocks; b0 += kChunk) {
      const int b1 = b0 + kChunk < x.blocks ? b0 + kChunk : x.blocks;
      copy_panels<Dots, P>(q, d, m, g0, groups, b0, b1);
      int t = 0;
      for (; t + TX <= x.T; t += TX) panel_rows<Dots, V, R, TX>(out, ld, x, t, q, d, b0, b1, bias, n0, N);
      for (; t < x.T; ++t) panel_rows<Dots, V, R, 1>(out, ld, x, t, q, d, b0, b1, bias, n0, N);
    }
  }
}

// A product: the prompt loop from kPromptRows rows of x, the decoding loop below that.
template <class Dots>
void matmul_any(float* out, int ld, const Q8Rows& x, const typename Dots::Weight* wq, const float* wd,
                const float* bias, int N) {
  if (x.T >= kPromptRows) return matmul_prompt<Dots>(out, ld, x, wq, wd, bias, N);
  matmul<Dots>(out, ld, x, wq, wd, bias, N);
}

}   // namespace
}   // namespace glassbox::kernels::x86
