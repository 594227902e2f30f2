// The VNNI kernels' products, written once for the two instruction sets that have vpdpbusd:
// AVX-512 VNNI (quantized_vnni.cpp) and AVX-VNNI, its 256-bit VEX form on CPUs without AVX-512
// (Intel's client cores from Alder Lake on: quantized_avx_vnni.cpp). `Isa` gives the instruction
// (Isa::dpbusd) and the prompt loop's registers (Isa::Vec, Isa::kRegisters, Isa::kPromptTile:
// quantized_x86_prompt.h).
//
// vpdpbusd multiplies unsigned bytes by signed ones, 4 products into each int32 lane. The weights
// are the unsigned side as w + 128 (stored: every value's top bit flipped, quantized.h), x the
// signed one; (w + 128) . x = w . x + 128 sum(x), and the loop takes the 128 sum(x) off. A lane
// holds at most 4 * 255 * 127 = 129,540: no overflow. Int4's nibbles, stored as w + 8, are the
// unsigned side as they are, and the loop takes 8 sum(x) off.
#pragma once

#include "kernels/quantized_x86_prompt.h"

namespace glassbox::kernels::x86 {
namespace {

template <class Isa>
struct VnniDots {
  using Weight = std::int8_t;
  static constexpr int kRowBytes = 32, kOffset = 128;
  template <int TX>
  using Pair = BlockPair<VnniDots, TX>;
  VnniDots() = default;
  explicit VnniDots(const std::int8_t* xq) : x(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq))) {}
  // Even k are stored flipped already; flip the odd ones: every byte is then w + 128.
  static __m256i weights(const std::int8_t* w) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), _mm256_set1_epi16(-0x8000));
  }
  __m256i dot(__m256i wv) const { return Isa::dpbusd(_mm256_setzero_si256(), wv, x); }
  using Vec = typename Isa::Vec;
  static constexpr int kRegisters = Isa::kRegisters, kPromptTile = Isa::kPromptTile;
  template <class I>
  static I step(I acc, I wv, I xv) {
    return Isa::dpbusd(acc, wv, xv);
  }
  template <class I>
  static I block_sum(I acc) {
    return acc;
  }
  __m256i x;
};

// Int4's products (Int4Dots): u . x, and u_lo . x_lo + u_hi . x_hi, in int32 lanes.
template <class Isa>
struct VnniInt4Dot {
  using Vec = typename Isa::Vec;
  static constexpr int kRegisters = Isa::kRegisters, kPromptTile = Isa::kPromptTile;
  template <class I>
  static I step(I acc, I u, I x) {
    return Isa::dpbusd(acc, u, x);
  }
  template <class I>
  static I block_sum(I acc) {
    return acc;
  }
  static __m256i dot1(__m256i u, __m256i x) { return Isa::dpbusd(_mm256_setzero_si256(), u, x); }
  static __m256i dot2(__m256i u_lo, __m256i x_lo, __m256i u_hi, __m256i x_hi) {
    return Isa::dpbusd(dot1(u_lo, x_lo), u_hi, x_hi);
  }
};

}   // namespace
}   // namespace glassbox::kernels::x86
