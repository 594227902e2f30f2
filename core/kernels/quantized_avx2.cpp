// matmul_q8's and matmul_q4's kernels for x86-64-v3 (AVX2), compiled with -mavx2 (see
// quantized_x86.h).
//
// AVX2 has no int8 x int8 dot product. vpmaddubsw multiplies unsigned bytes by signed ones and
// adds pairs into int16: with |x| as the unsigned side and w carrying x's sign (vpsignb), each
// pair is w0 x0 + w1 x1, at most 2 * 127 * 127 = 32258 (never saturates: |w|, |x| <= 127; also
// vpsignb would leave -128 as it is). vpmaddwd by 1 then adds pairs of those into int32.
// Int4's nibbles, stored as w + 8 (0..15), are the unsigned side as they are: a pair is at most
// 2 * 15 * 127 = 3810, and the loop takes 8 sum(x) off.
#include "kernels/quantized_x86_prompt.h"

namespace glassbox::kernels::x86 {
namespace {

struct Avx2Dots {
  using Weight = std::int8_t;
  static constexpr int kRowBytes = 32, kOffset = 0;
  template <int TX>
  using Pair = BlockPair<Avx2Dots, TX>;
  Avx2Dots() = default;
  explicit Avx2Dots(const std::int8_t* xq)
      : x(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq))), abs_x(_mm256_abs_epi8(x)) {}
  // The stored bytes at even k are w ^ 0x80 (quantized.h): flip them back.
  static __m256i weights(const std::int8_t* w) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)), _mm256_set1_epi16(0x0080));
  }
  __m256i dot(__m256i wv) const {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(abs_x, _mm256_sign_epi8(wv, x)), _mm256_set1_epi16(1));
  }
  // The prompt loop (quantized_x86_prompt.h): 16 registers hold 1 panel x 4 rows of x (4 sums,
  // 4 accumulators); a step adds 4 values' products per int32 lane, as vpdpbusd would.
  using Vec = Ymm;
  static constexpr int kRegisters = 1, kPromptTile = 4;
  static __m256i step(__m256i acc, __m256i wv, __m256i xv) {
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(xv), _mm256_sign_epi8(wv, xv));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
  static __m256i block_sum(__m256i acc) { return acc; }
  __m256i x, abs_x;
};

// Int4's products (Int4Dots): u . x in int32 lanes; (u_lo . x_lo + u_hi . x_hi), where the two
// int16 sums of pairs add without overflow (7620). The prompt loop's steps keep a block's pairs in
// int16 lanes, as many as 8 steps add (8 * 3810 = 30480), and widen them once a block.
struct Avx2Int4Dot {
  using Vec = Ymm;
  static constexpr int kRegisters = Avx2Dots::kRegisters, kPromptTile = Avx2Dots::kPromptTile;
  static __m256i step(__m256i acc, __m256i u, __m256i x) { return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, x)); }
  static __m256i block_sum(__m256i acc) { return _mm256_madd_epi16(acc, _mm256_set1_epi16(1)); }
  static __m256i dot1(__m256i u, __m256i x) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1));
  }
  static __m256i dot2(__m256i u_lo, __m256i x_lo, __m256i u_hi, __m256i x_hi) {
    const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(u_lo, x_lo), _mm256_maddubs_epi16(u_hi, x_hi));
    return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
  }
};

}   // namespace

void matmul_avx2(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul_any<Avx2Dots>(out, ld, x, wq, wd, bias, N);
}

void matmul_avx2(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul_any<Int4Dots<Avx2Int4Dot>>(out, ld, x, wq, wd, bias, N);
}

}   // namespace glassbox::kernels::x86
