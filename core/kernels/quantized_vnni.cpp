// matmul_q8's and matmul_q4's kernels for AVX-512 VNNI, on 256-bit vectors (AVX512VL), compiled with
// those sets switched on (see quantized_x86.h).
//
// vpdpbusd multiplies unsigned bytes by signed ones, 4 products into each int32 lane. The weights
// are the unsigned side as w + 128 (stored: every value's top bit flipped, quantized.h), x the
// signed one; (w + 128) . x = w . x + 128 sum(x), and the loop takes the 128 sum(x) off. A lane
// holds at most 4 * 255 * 127 = 129,540: no overflow. Int4's nibbles, stored as w + 8, are the
// unsigned side as they are, and the loop takes 8 sum(x) off.
#include "kernels/quantized_x86_loop.h"

namespace glassbox::kernels::x86 {
namespace {

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
  __m256i dot(__m256i wv) const { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), wv, x); }
  __m256i x;
};

// Int4's products (Int4Dots): u . x, and u_lo . x_lo + u_hi . x_hi, in int32 lanes.
struct VnniInt4Dot {
  static __m256i dot1(__m256i u, __m256i x) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, x); }
  static __m256i dot2(__m256i u_lo, __m256i x_lo, __m256i u_hi, __m256i x_hi) {
    return _mm256_dpbusd_epi32(dot1(u_lo, x_lo), u_hi, x_hi);
  }
};

}   // namespace

void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul<VnniDots>(out, ld, x, wq, wd, bias, N);
}

void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul<Int4Dots<VnniInt4Dot>>(out, ld, x, wq, wd, bias, N);
}

}   // namespace glassbox::kernels::x86
