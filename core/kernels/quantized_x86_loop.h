// The loop of the x86 int8 and int4 kernels (quantized_x86.h), written once for all. `Dots`
// holds x's 32 values of one block in registers and gives, for one stored weight row of that block
// (Dots::kRowBytes: 32 bytes of int8, 16 of int4) loaded by Dots::weights, 8 partial sums of its
// products with them (Dots::dot, int32 lanes). Dots::kOffset says the products are
// (w + kOffset) . x, so that kOffset * sum(x) (Q8Rows::sum128 / 128 * kOffset) comes off.
//
// Costs: decoding (T = 1) streams the weights once and is bound by memory bandwidth, so the loop
//   - keeps two streams of weights in flight (groups g and g + half, as for F32 in matmul_tiles.h);
//   - prefetches every 64-byte line 2 KB ahead (kernels/tuning.h), for each stream (prefetching
//     every other line lost a third of the speed);
//   - uses 256-bit vectors: 512-bit ones streamed slower on Zen 4, and on Intel they lower the
//     clock;
//   - reduces 2 blocks x 4 rows at once, [block b rows 0-3 | block b+1 rows 0-3] (Dots::Pair).
// A prompt (T > 1) runs all of its rows over the same two groups of 4 rows, which stay in L1, two
// prompt rows at a time: each weight row is loaded and unpacked once for both (Dots::weights,
// then Dots::dot per prompt row).
// The floats are added block by block in order, as in the reference: bit for bit the same sums.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/quantized_x86.h"
#include "kernels/tuning.h"

namespace glassbox::kernels::x86 {
namespace {

constexpr int kBlock = kBlockValues, kRows = kGroupRows;

// [p0+p1 per 32-bit pair ...]: adds the interleaved halves of two vectors (within each 128-bit lane).
inline __m256i add_pairs32(__m256i p, __m256i q) {
  return _mm256_add_epi32(_mm256_unpacklo_epi32(p, q), _mm256_unpackhi_epi32(p, q));
}
inline __m256i add_pairs64(__m256i p, __m256i q) {
  return _mm256_add_epi32(_mm256_unpacklo_epi64(p, q), _mm256_unpackhi_epi64(p, q));
}

// The 16 bytes of an int4 row's block widened to its 32 values (+ 8) in order: the low nibbles
// (values 0..15) in the low 128 bits, the high ones (16..31) in the high 128.
inline __m256i int4_values(const std::uint8_t* w) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(v, 4), v), _mm256_set1_epi8(0x0f));
}

// The 4 rows of one block (4 rows of kRowBytes at w) against TX prompt rows' x: per 128-bit lane,
// [row 0, 1, 2, 3] partial sums, for each prompt row. Each weight row is loaded once for all.
template <class Dots, int TX>
inline void block_rows(const Dots (&x)[TX], const typename Dots::Weight* w, __m256i (&out)[TX]) {
  constexpr int row = Dots::kRowBytes;
  __m256i d[kRows][TX];
  for (int r = 0; r < kRows; ++r) {
    const __m256i wv = Dots::weights(w + r * row);
    for (int t = 0; t < TX; ++t) d[r][t] = x[t].dot(wv);
  }
  for (int t = 0; t < TX; ++t) out[t] = add_pairs64(add_pairs32(d[0][t], d[1][t]), add_pairs32(d[2][t], d[3][t]));
}

// The 4 rows' products of two blocks, b at w and b + 1 at w + stride: [block b rows 0-3 | block
// b + 1 rows 0-3] (Dots::Pair), for TX prompt rows ldx apart. The plain way: each block's rows
// alone, then their halves added.
template <class Dots, int TX>
struct BlockPair {
  BlockPair(const std::int8_t* xq, std::size_t ldx) {
    for (int t = 0; t < TX; ++t) x0[t] = Dots(xq + t * ldx), x1[t] = Dots(xq + t * ldx + kBlock);
  }
  void rows4(const typename Dots::Weight* w, std::size_t stride, __m256i (&out)[TX]) const {
    __m256i u[TX], v[TX];
    block_rows(x0, w, u);
    block_rows(x1, w + stride, v);
    for (int t = 0; t < TX; ++t)
      out[t] =
          _mm256_add_epi32(_mm256_permute2x128_si256(u[t], v[t], 0x20), _mm256_permute2x128_si256(u[t], v[t], 0x31));
  }
  Dots x0[TX], x1[TX];
};

// Int4's faster way: one register holds a row's 16 bytes of block b and of block b + 1, so one
// pass of nibble masks and two dot products (Dot::dot2: unsigned bytes times x) give both blocks'
// partial sums, already in the [block b | block b + 1] lanes; x is loaded to match, the first 16
// values of both blocks (lo) and the last 16 (hi). Half the instructions of the plain way, which
// kept int4 from reading memory faster than int8.
template <class Dot, int TX>
struct Int4Pair {
  Int4Pair(const std::int8_t* xq, std::size_t ldx) {
    for (int t = 0; t < TX; ++t, xq += ldx) lo[t] = load2(xq, xq + kBlock), hi[t] = load2(xq + 16, xq + kBlock + 16);
  }
  static __m256i load2(const void* low, const void* high) {
    return _mm256_loadu2_m128i(static_cast<const __m128i*>(high), static_cast<const __m128i*>(low));
  }
  void rows4(const std::uint8_t* w, std::size_t stride, __m256i (&out)[TX]) const {
    constexpr int row_bytes = kBlock / 2;
    const __m256i mask = _mm256_set1_epi8(0x0f);
    __m256i d[kRows][TX];
    for (int r = 0; r < kRows; ++r) {
      const __m256i v = load2(w + r * row_bytes, w + r * row_bytes + stride);
      const __m256i u_lo = _mm256_and_si256(v, mask), u_hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
      for (int t = 0; t < TX; ++t) d[r][t] = Dot::dot2(u_lo, lo[t], u_hi, hi[t]);
    }
    for (int t = 0; t < TX; ++t) out[t] = add_pairs64(add_pairs32(d[0][t], d[1][t]), add_pairs32(d[2][t], d[3][t]));
  }
  __m256i lo[TX], hi[TX];
};

// An int4 kernel's Dots, from its Dot: dot1(u, x), one row's 32 values (+ 8, unsigned bytes)
// against x's, dot2 (Int4Pair), and the prompt loop's step and tile (quantized_x86_prompt.h). The
// nibbles, stored as w + 8, are the unsigned side as they are.
template <class Dot>
struct Int4Dots {
  using Weight = std::uint8_t;
  static constexpr int kRowBytes = kBlock / 2, kOffset = 8;
  using Vec = typename Dot::Vec;
  static constexpr int kRegisters = Dot::kRegisters, kPromptTile = Dot::kPromptTile;
  template <class I>
  static I step(I acc, I u, I x) {
    return Dot::step(acc, u, x);
  }
  template <class I>
  static I block_sum(I acc) {
    return Dot::block_sum(acc);
  }
  template <int TX>
  using Pair = Int4Pair<Dot, TX>;
  Int4Dots() = default;
  explicit Int4Dots(const std::int8_t* xq) : x(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq))) {}
  static __m256i weights(const std::uint8_t* w) { return int4_values(w); }
  __m256i dot(__m256i u) const { return Dot::dot1(u, x); }
  __m256i x;
};

// Bias (if given) plus acc, stored for rows 4g.. that exist.
inline void store_group(float* out, __m128 acc, const float* bias, int g, int N) {
  alignas(16) float v[kRows];
  _mm_store_ps(v, acc);
  for (int r = 0, n = g * kRows; r < kRows && n + r < N; ++r) out[n + r] = v[r] + (bias ? bias[n + r] : 0.0f);
}

// Where a group's weights and scales are, and what its products carry beyond w . x.
template <class Dots>
struct Groups {
  static constexpr int kGroupBlock = kRows * Dots::kRowBytes;
  // kOffset * sum(x) = sum128 >> shift, exactly (sum128 is a multiple of 128).
  static_assert(Dots::kOffset == 0 || Dots::kOffset == 8 || Dots::kOffset == 128, "offsets the shifts below make");
  static constexpr int kShift = Dots::kOffset == 128 ? 0 : 4;
  static std::int32_t offset_sum(std::int32_t sum128) { return Dots::kOffset ? sum128 >> kShift : 0; }
  const typename Dots::Weight* wq;
  const float* wd;
  std::size_t group_q, group_d;
};

// Prompt rows t0 .. t0+TX-1 against groups gs[0] and gs[1] (the same when it is alone): out's rows.
template <class Dots, int TX>
inline void group_rows(float* out, int ld, const Q8Rows& x, int t0, const Groups<Dots>& m, const int (&gs)[2],
                       const float* bias, int N) {
  using G = Groups<Dots>;
  const int blocks = x.blocks;
  // Two consecutive values, each in 4 lanes: [v[0] x4 | v[1] x4].
  const __m256i twice4 = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
  const auto spread2 = [&](const void* v) {
    return _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(_mm_loadl_epi64(static_cast<const __m128i*>(v))), twice4);
  };
  const std::int8_t* xq = x.q + std::size_t(t0) * x.Kp;
  const float* dx = x.d + std::size_t(t0) * blocks;
  const std::int32_t* sum128 = x.sum128 + std::size_t(t0) * blocks;
  __m128 acc[TX][2];
  for (int t = 0; t < TX; ++t) acc[t][0] = acc[t][1] = _mm_setzero_ps();
  int b = 0;
  for (; b + 2 <= blocks; b += 2) {
    const typename Dots::template Pair<TX> x2(xq + b * kBlock, x.Kp);
    __m256 dx2[TX];
    __m256i corr[TX];
    for (int t = 0; t < TX; ++t) {
      dx2[t] = _mm256_castsi256_ps(spread2(dx + t * blocks + b));
      corr[t] = Dots::kOffset ? _mm256_srai_epi32(spread2(sum128 + t * blocks + b), G::kShift) : _mm256_setzero_si256();
    }
    for (int s = 0; s < 2; ++s) {
      const typename Dots::Weight* w = m.wq + gs[s] * m.group_q + std::size_t(b) * G::kGroupBlock;
      // The address as an integer: past the matrix's end it is never formed as a pointer.
      if constexpr (kPrefetchBytes > 0)
        for (int line = 0; line < 2 * G::kGroupBlock; line += 64)
          __builtin_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(w) + kPrefetchBytes + line),
                             0, kPrefetchHint);
      __m256i dots[TX];
      x2.rows4(w, G::kGroupBlock, dots);
      const __m256 wd2 = _mm256_loadu_ps(m.wd + gs[s] * m.group_d + b * kRows);
      for (int t = 0; t < TX; ++t) {
        const __m256 p =
            _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(dots[t], corr[t])), _mm256_mul_ps(wd2, dx2[t]));
        acc[t][s] = _mm_add_ps(_mm_add_ps(acc[t][s], _mm256_castps256_ps128(p)), _mm256_extractf128_ps(p, 1));
      }
    }
  }
  if (b < blocks) {   // an odd number of blocks: the last one alone
    Dots x0[TX];
    for (int t = 0; t < TX; ++t) x0[t] = Dots(xq + t * x.Kp + b * kBlock);
    for (int s = 0; s < 2; ++s) {
      __m256i u[TX];
      block_rows(x0, m.wq + gs[s] * m.group_q + std::size_t(b) * G::kGroupBlock, u);
      const __m128 wd1 = _mm_loadu_ps(m.wd + gs[s] * m.group_d + b * kRows);
      for (int t = 0; t < TX; ++t) {
        const __m128i dots =
            _mm_sub_epi32(_mm_add_epi32(_mm256_castsi256_si128(u[t]), _mm256_extracti128_si256(u[t], 1)),
                          _mm_set1_epi32(G::offset_sum(sum128[t * blocks + b])));
        acc[t][s] =
            _mm_add_ps(acc[t][s], _mm_mul_ps(_mm_cvtepi32_ps(dots), _mm_mul_ps(wd1, _mm_set1_ps(dx[t * blocks + b]))));
      }
    }
  }
  for (int t = 0; t < TX; ++t) {
    float* o = out + std::size_t(t0 + t) * ld;
    store_group(o, acc[t][0], bias, gs[0], N);
    if (gs[1] != gs[0]) store_group(o, acc[t][1], bias, gs[1], N);
  }
}

template <class Dots>
void matmul(float* out, int ld, const Q8Rows& x, const typename Dots::Weight* wq, const float* wd, const float* bias,
            int N) {
  const int groups = (N + kRows - 1) / kRows, half = (groups + 1) / 2;
  const Groups<Dots> m{wq, wd, std::size_t(x.blocks) * Groups<Dots>::kGroupBlock, std::size_t(x.blocks) * kRows};
  for (int g = 0; g < half; ++g) {
    const int gs[2] = {g, g + half < groups ? g + half : g};   // the last group alone when groups is odd
    int t = 0;
    for (; t + 2 <= x.T; t += 2) group_rows<Dots, 2>(out, ld, x, t, m, gs, bias, N);
    for (; t < x.T; ++t) group_rows<Dots, 1>(out, ld, x, t, m, gs, bias, N);
  }
}

}   // namespace
}   // namespace glassbox::kernels::x86
