// The WebAssembly int8 and int4 kernels' prompt loop (T > 1 rows of x), beside the portable loop
// of quantized.cpp, which decodes. Included by quantized.cpp in WebAssembly builds only.
//
// Costs: as on x86 (quantized_x86_prompt.h), a prompt is bound by arithmetic, and in the stored
// layout every row's dot products end in a sum across lanes per block. SIMD128 has no 8-bit dot
// product; its 16-bit one, i32x4.dot_i16x8_s, multiplies pairs of 16-bit values and adds each
// pair into an int32 lane. So the panel here holds the weights widened to 16 bits, a block's
// values 2 at a time for a group's 4 rows side by side:
//   panel step j of block b: [row 0: values 2j, 2j+1 | row 1 | row 2 | row 3]  (16 bytes)
// and one dot product against x's values 2j, 2j+1 in every lane adds to each row's own lane:
// after a block's 16 steps lane r holds row r's whole block. The panel holds the weights' values
// (w, not w + 128 or w + 8), so nothing comes off. The copy (widening and a 4 x 4 transpose of
// 4-byte words) is done once per product and group, for all T rows of x; kPanelBytes at a time.
//
// The sums are the reference's: exact integer dot products per block, then, row by row,
// s += float(dot) * (dw * dx) block after block: bit for bit the same results.
#pragma once

#include <wasm_simd128.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/quantized.h"
#include "kernels/simd.h"

namespace glassbox::kernels {
namespace {

constexpr int kPanelSteps = kQ8Block / 2;            // 2 values per lane per step: 16 a block
constexpr int kPanelBlockBytes = kPanelSteps * 16;   // 256: one block of a group's panel
constexpr int kPanelBytes = 16384;                   // the panels copied at a time
constexpr int kPromptGroups = 3, kPromptTile = 2;    // groups (4 rows each) x rows of x a tile

// [a0 b0 c0 d0], [a1 b1 c1 d1], ...: the 4 x 4 transpose of 4-byte words.
GLASSBOX_INLINE void transpose4x4(v128_t (&v)[4]) {
  const v128_t ab_lo = wasm_i32x4_shuffle(v[0], v[1], 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(v[0], v[1], 2, 6, 3, 7);
  const v128_t cd_lo = wasm_i32x4_shuffle(v[2], v[3], 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(v[2], v[3], 2, 6, 3, 7);
  v[0] = wasm_i32x4_shuffle(ab_lo, cd_lo, 0, 1, 4, 5);
  v[1] = wasm_i32x4_shuffle(ab_lo, cd_lo, 2, 3, 6, 7);
  v[2] = wasm_i32x4_shuffle(ab_hi, cd_hi, 0, 1, 4, 5);
  v[3] = wasm_i32x4_shuffle(ab_hi, cd_hi, 2, 3, 6, 7);
}

// One row's 32 values of a block as 16-bit words, 8 a vector, in order.
GLASSBOX_INLINE void row_values(const std::int8_t* w, v128_t (&out)[4]) {
  // Even k are stored with the top bit flipped (quantized.h): flip them back.
  const v128_t flip = wasm_i16x8_splat(0x0080);
  for (int h = 0; h < 2; ++h) {
    const v128_t v = wasm_v128_xor(wasm_v128_load(w + 16 * h), flip);
    out[2 * h] = wasm_i16x8_extend_low_i8x16(v);
    out[2 * h + 1] = wasm_i16x8_extend_high_i8x16(v);
  }
}
GLASSBOX_INLINE void row_values(const std::uint8_t* w, v128_t (&out)[4]) {
  // Low nibbles: values 0..15; high ones: 16..31; stored as w + 8.
  const v128_t v = wasm_v128_load(w), eight = wasm_i16x8_splat(8);
  const v128_t lo = wasm_v128_and(v, wasm_i8x16_splat(0x0f)), hi = wasm_u8x16_shr(v, 4);
  out[0] = wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(lo), eight);
  out[1] = wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(lo), eight);
  out[2] = wasm_i16x8_sub(wasm_u16x8_extend_low_u8x16(hi), eight);
  out[3] = wasm_i16x8_sub(wasm_u16x8_extend_high_u8x16(hi), eight);
}

// Blocks b0 .. b1-1 of groups g0 .. g0+G-1 (a group past the last is zeros) into q (b, step,
// group, 16 bytes).
template <int G, class W>
GLASSBOX_INLINE void copy_panels(v128_t* q, const W* wq, std::size_t group_q, int g0, int groups, int b0, int b1) {
  constexpr int row = std::is_same_v<W, std::int8_t> ? kQ8Block : kQ8Block / 2;   // bytes of a row's block
  for (int b = b0; b < b1; ++b)
    for (int p = 0; p < G; ++p) {
      v128_t words[kQ8Rows][4];   // words[r][i]: row r's values 8i .. 8i+7
      for (int r = 0; r < kQ8Rows; ++r) {
        if (g0 + p < groups) {
          row_values(wq + (g0 + p) * group_q + std::size_t(b) * kQ8Rows * row + r * row, words[r]);
        } else {
          for (v128_t& v : words[r]) v = wasm_i32x4_splat(0);
        }
      }
      for (int i = 0; i < 4; ++i) {   // steps 4i .. 4i+3: word j of every row
        v128_t v[4] = {words[0][i], words[1][i], words[2][i], words[3][i]};
        transpose4x4(v);
        for (int s = 0; s < 4; ++s) q[(std::size_t(b - b0) * kPanelSteps + 4 * i + s) * G + p] = v[s];
      }
    }
}

// The `rows` (1 to 4) of a group's outputs at o, as 4 lanes (0 past them), and back.
GLASSBOX_INLINE v128_t load_rows(const float* o, int rows) {
  if (rows >= kQ8Rows) return wasm_v128_load(o);
  alignas(16) float v[kQ8Rows] = {};
  for (int r = 0; r < rows; ++r) v[r] = o[r];
  return wasm_v128_load(v);
}
GLASSBOX_INLINE void store_rows(float* o, int rows, v128_t acc) {
  if (rows >= kQ8Rows) return wasm_v128_store(o, acc);
  alignas(16) float v[kQ8Rows];
  wasm_v128_store(v, acc);
  for (int r = 0; r < rows; ++r) o[r] = v[r];
}

// Prompt rows t0 .. t0+TX-1 against G groups' panels, blocks b0 .. b1-1 (outputs of groups g0 ..):
// each row's sums start at zero (b0 = 0) or where the previous blocks left them in out, and end in
// out, with the bias once the last block is in (b1 = blocks). Only the rows below N are read and
// written. A tile past the last row of x computes that row again in its place (the same sums
// stored twice), so that one tile serves every row: one copy of this code per weight format keeps
// the package's WebAssembly small.
template <int G, int TX>
GLASSBOX_INLINE void panel_rows(float* out, int ld, const Q8Activations& x, int t0, const v128_t* q, const float* wd,
                                std::size_t group_d, int g0, int groups, int b0, int b1, const float* bias, int N) {
  int rows[TX];   // the row of x each place of the tile computes
  const std::int8_t* xq[TX];
  for (int t = 0; t < TX; ++t) {
    rows[t] = t0 + t < x.T ? t0 + t : x.T - 1;
    xq[t] = x.q.data() + std::size_t(rows[t]) * x.Kp;
  }
  v128_t acc[TX][G];
  for (int t = 0; t < TX; ++t)
    for (int p = 0; p < G; ++p) {
      const int n = (g0 + p) * kQ8Rows;
      acc[t][p] = b0 == 0 || n >= N ? wasm_f32x4_splat(0.0f) : load_rows(out + std::size_t(rows[t]) * ld + n, N - n);
    }
  for (int b = b0; b < b1; ++b) {
    v128_t dots[TX][G];
    for (int t = 0; t < TX; ++t)
      for (int p = 0; p < G; ++p) dots[t][p] = wasm_i32x4_splat(0);
    const v128_t* w = q + std::size_t(b - b0) * kPanelSteps * G;
    for (int j = 0; j < kPanelSteps; ++j) {
      v128_t wv[G];
      for (int p = 0; p < G; ++p) wv[p] = w[j * G + p];
      for (int t = 0; t < TX; ++t) {
        // x's values 2j, 2j+1 of this block as 16-bit words, in every lane
        const v128_t xv = wasm_i16x8_extend_low_i8x16(wasm_v128_load16_splat(xq[t] + b * kQ8Block + 2 * j));
        for (int p = 0; p < G; ++p) dots[t][p] = wasm_i32x4_add(dots[t][p], wasm_i32x4_dot_i16x8(wv[p], xv));
      }
    }
    for (int t = 0; t < TX; ++t) {
      const v128_t dx = wasm_f32x4_splat(x.d[std::size_t(rows[t]) * x.blocks + b]);
      for (int p = 0; p < G; ++p) {
        const int g = g0 + p < groups ? g0 + p : groups - 1;   // a missing group's sums are never stored
        const v128_t dw = wasm_v128_load(wd + g * group_d + std::size_t(b) * kQ8Rows);
        acc[t][p] =
            wasm_f32x4_add(acc[t][p], wasm_f32x4_mul(wasm_f32x4_convert_i32x4(dots[t][p]), wasm_f32x4_mul(dw, dx)));
      }
    }
  }
  for (int p = 0; p < G; ++p) {
    const int n = (g0 + p) * kQ8Rows;
    if (n >= N) continue;
    const v128_t bv = b1 < x.blocks ? wasm_f32x4_splat(0.0f)   // not yet: no bias
                      : bias        ? load_rows(bias + n, N - n)
                                    : wasm_f32x4_splat(0.0f);
    for (int t = 0; t < TX; ++t) {
      const v128_t sums = b1 < x.blocks ? acc[t][p] : wasm_f32x4_add(acc[t][p], bv);
      store_rows(out + std::size_t(rows[t]) * ld + n, N - n, sums);
    }
  }
}

// The prompt loop: kPromptGroups groups at a time, every row of x against them, kPanelBytes of
// their panels at a time, rows of x in tiles of kPromptTile. W: std::int8_t (int8) or
// std::uint8_t (int4).
template <class W>
void matmul_prompt(float* out, int ld, const Q8Activations& x, const W* wq, const float* wd, const float* bias, int N) {
  constexpr int G = kPromptGroups, TX = kPromptTile;
  constexpr int kChunk = kPanelBytes / (G * kPanelBlockBytes);   // blocks copied at a time
  constexpr int row = std::is_same_v<W, std::int8_t> ? kQ8Block : kQ8Block / 2;
  const std::size_t group_q = std::size_t(x.blocks) * kQ8Rows * row, group_d = std::size_t(x.blocks) * kQ8Rows;
  const int groups = (N + kQ8Rows - 1) / kQ8Rows;
  v128_t q[kPanelBytes / sizeof(v128_t)];
  for (int g0 = 0; g0 < groups; g0 += G)
    for (int b0 = 0; b0 < x.blocks; b0 += kChunk) {
      const int b1 = b0 + kChunk < x.blocks ? b0 + kChunk : x.blocks;
      copy_panels<G>(q, wq, group_q, g0, groups, b0, b1);
      for (int t = 0; t < x.T; t += TX) panel_rows<G, TX>(out, ld, x, t, q, wd, group_d, g0, groups, b0, b1, bias, N);
    }
}

}   // namespace
}   // namespace glassbox::kernels
