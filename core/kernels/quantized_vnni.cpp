// matmul_q8's and matmul_q4's kernels for AVX-512 VNNI (the products: quantized_x86_vnni.h),
// compiled with those sets switched on (see quantized_x86.h). Decoding runs on 256-bit vectors
// (AVX512VL), prompts on 512-bit ones.
#include "kernels/quantized_x86_vnni.h"

namespace glassbox::kernels::x86 {
namespace {

// The prompt loop's 512-bit registers (quantized_x86_prompt.h's Ymm, twice as wide): two panels
// side by side, 16 rows.
struct Zmm {
  using I = __m512i;
  using F = __m512;
  using Mask = __mmask16;
  static constexpr int kPanels = 2;
  static I zero() { return _mm512_setzero_si512(); }
  static I load(const std::uint8_t* p) { return _mm512_load_si512(p); }
  static I splat(std::int32_t v) { return _mm512_set1_epi32(v); }
  static F splat(float v) { return _mm512_set1_ps(v); }
  // vcvtdq2ps (GCC 12's _mm512_cvtepi32_ps warns of an undefined operand it never reads).
  static F to_float(I v) {
    typedef std::int32_t Ints __attribute__((vector_size(64)));
    return __builtin_convertvector(Ints(v), F);
  }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F load(const float* p) { return _mm512_load_ps(p); }
  static Mask first(int rows) { return rows <= 0 ? 0 : rows >= 16 ? 0xffff : Mask((1u << rows) - 1); }
  static F load(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static void store(float* p, Mask m, F v) { _mm512_mask_storeu_ps(p, m, v); }
};

struct Avx512Vnni {
  static __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_epi32(acc, u, x); }
  static __m512i dpbusd(__m512i acc, __m512i u, __m512i x) { return _mm512_dpbusd_epi32(acc, u, x); }
  // The prompt loop: 32 registers hold 2 x 16 weight rows by 6 rows of x (12 sums, 12
  // accumulators).
  using Vec = Zmm;
  static constexpr int kRegisters = 2, kPromptTile = 6;
};

}   // namespace

void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul_any<VnniDots<Avx512Vnni>>(out, ld, x, wq, wd, bias, N);
}

void matmul_vnni(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                 int N) {
  matmul_any<Int4Dots<VnniInt4Dot<Avx512Vnni>>>(out, ld, x, wq, wd, bias, N);
}

}   // namespace glassbox::kernels::x86
