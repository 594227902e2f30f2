// matmul_q8's and matmul_q4's kernels for AVX-VNNI (the products: quantized_x86_vnni.h), vpdpbusd
// on 256-bit vectors for CPUs that have it without AVX-512, compiled with AVX2 and AVX-VNNI
// switched on (see quantized_x86.h).
#include "kernels/quantized_x86_vnni.h"

namespace glassbox::kernels::x86 {
namespace {

struct AvxVnni {
  static __m256i dpbusd(__m256i acc, __m256i u, __m256i x) { return _mm256_dpbusd_avx_epi32(acc, u, x); }
  // The prompt loop: 16 registers hold 1 panel (8 weight rows) by 4 rows of x (4 sums, 4
  // accumulators).
  using Vec = Ymm;
  static constexpr int kRegisters = 1, kPromptTile = 4;
};

}   // namespace

void matmul_avx_vnni(float* out, int ld, const Q8Rows& x, const std::int8_t* wq, const float* wd, const float* bias,
                     int N) {
  matmul_any<VnniDots<AvxVnni>>(out, ld, x, wq, wd, bias, N);
}

void matmul_avx_vnni(float* out, int ld, const Q8Rows& x, const std::uint8_t* wq, const float* wd, const float* bias,
                     int N) {
  matmul_any<Int4Dots<VnniInt4Dot<AvxVnni>>>(out, ld, x, wq, wd, bias, N);
}

}   // namespace glassbox::kernels::x86
