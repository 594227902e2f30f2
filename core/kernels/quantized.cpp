// Int8 matrix products (layout and contract in quantized.h).
//
// The kernel works on tiles of 4 weight rows x 1 block of 32: four exact integer dot products,
// reduced to one vector of 4 sums (one per row), converted to float and scaled by the 4 rows'
// block scales (stored together for this load) times x's block scale. Lanes are rows, so no
// horizontal sum is left at the end. For a prompt (T > 1) every input row runs over the same 4
// weight rows, which stay in L1 (4 x 3072 bytes at most in GPT-2 small).
#include "kernels/quantized.h"

#include <algorithm>
#include <cmath>

#include "kernels/reference.h"
#include "kernels/simd.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace glassbox::kernels {
namespace {

using simd::load;
using simd::Vec4;
using simd::Vec4i;

// Rounds v / scale to the nearest integer (halves away from zero) in [-127, 127]. A NaN or an
// infinity in the block makes its scale NaN or infinite, so that the products come out non-finite
// as F32's would (not silently finite); its values are then 0. Values are clamped as floats: a
// float -> int conversion of NaN or of a value out of range is undefined behaviour (both found by
// tests/fuzz).
template <typename Int>
void quantize_block(Int* q, float* scale, const float* v, int n) {
  float amax = 0.0f;
  bool nan = false;
  for (int i = 0; i < n; ++i) {
    nan |= std::isnan(v[i]);
    amax = std::max(amax, std::abs(v[i]));
  }
  const float d = nan ? NAN : amax / 127.0f;
  const float inv = d > 0.0f && std::isfinite(d) ? 1.0f / d : 0.0f;
  for (int i = 0; i < n; ++i) {
    const float r = v[i] * inv;   // in [-127, 127] but for rounding (a subnormal d has few digits), or NaN
    q[i] = std::isnan(r) ? 0 : static_cast<Int>(std::clamp(r + (r < 0.0f ? -0.5f : 0.5f), -127.0f, 127.0f));
  }
  for (int i = n; i < kQ8Block; ++i) q[i] = 0;   // padding past K
  *scale = d;
}

#ifdef __wasm_simd128__
// Block b of one weight row against x, as 4 partial sums: 8 int16 products per
// i32x4.dot_i16x8_s (SIMD128 has no int8 dot product). v128.load8x8_s widens 8 bytes as it loads
// them (one pmovsxbw natively), cheaper than extending the high half of a 16-byte load.
GLASSBOX_INLINE v128_t block_dot(const std::int8_t* w, const std::int16_t* x) {
  v128_t s = wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(w), wasm_v128_load(x));
  for (int i = 8; i < kQ8Block; i += 8)
    s = wasm_i32x4_add(s, wasm_i32x4_dot_i16x8(wasm_i16x8_load8x8(w + i), wasm_v128_load(x + i)));
  return s;
}

// The exact dot products of one block of 4 weight rows (128 bytes, row after row) with x: lane r
// is row r.
GLASSBOX_INLINE Vec4i block_sums4(const std::int8_t* w, const std::int16_t* x) {
  const v128_t a = block_dot(w, x), b = block_dot(w + kQ8Block, x);
  const v128_t c = block_dot(w + 2 * kQ8Block, x), d = block_dot(w + 3 * kQ8Block, x);
  // Transpose and add: [a0+a2, b0+b2, a1+a3, b1+b3], the same for c, d, then [sum a, .., sum d].
  const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
  const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
  const v128_t s = wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7));
  Vec4i out;
  wasm_v128_store(&out, s);
  return out;
}
#else
// Natively the compiler vectorizes this loop for each target clone (pmovsxbw + pmaddwd, 16 or 32
// products per instruction with AVX2 / AVX-512).
GLASSBOX_INLINE std::int32_t block_dot(const std::int8_t* w, const std::int16_t* x) {
  std::int32_t s = 0;
  for (int i = 0; i < kQ8Block; ++i) s += std::int32_t(w[i]) * x[i];
  return s;
}

GLASSBOX_INLINE Vec4i block_sums4(const std::int8_t* w, const std::int16_t* x) {
  return Vec4i{block_dot(w, x), block_dot(w + kQ8Block, x), block_dot(w + 2 * kQ8Block, x),
               block_dot(w + 3 * kQ8Block, x)};
}
#endif

}  // namespace

void quantize_weights_q8(std::int8_t* q, float* d, const float* w, int N, int K) {
  const Q8Shape s(N, K);
  for (int n = 0; n < s.Np; ++n) {
    for (int b = 0; b < s.blocks; ++b) {
      const int k0 = b * kQ8Block;
      const int len = n < N ? std::min(kQ8Block, K - k0) : 0;   // padding rows are all zero
      quantize_block(q + q8_index(s, n, k0), d + q8_scale_index(s, n, b), w + std::size_t(n) * K + k0, len);
    }
  }
}

void quantize_activations_q8(std::int16_t* q, float* d, const float* x, int T, int K) {
  const Q8Shape s(1, K);
  for (int t = 0; t < T; ++t)
    for (int b = 0; b < s.blocks; ++b) {
      const int k0 = b * kQ8Block;
      quantize_block(q + std::size_t(t) * s.Kp + k0, d + std::size_t(t) * s.blocks + b, x + std::size_t(t) * K + k0,
                     std::min(kQ8Block, K - k0));
    }
}

GLASSBOX_CLONES void matmul_q8(float* out, const std::int16_t* xq, const float* xd, const std::int8_t* wq,
                               const float* wd, const float* bias, int T, int Kp, int N, int out_stride) {
  const int blocks = Kp / kQ8Block;
  const int ld = out_stride ? out_stride : N;
  for (int n = 0; n < N; n += kQ8Rows) {   // rows n..n+3 (those past N are zero padding)
    const std::int8_t* w = wq + std::size_t(n) * Kp;
    const float* dw = wd + std::size_t(n / kQ8Rows) * blocks * kQ8Rows;
    for (int t = 0; t < T; ++t) {
      const std::int16_t* x = xq + std::size_t(t) * Kp;
      const float* dx = xd + std::size_t(t) * blocks;
      Vec4 acc = {};
      for (int b = 0; b < blocks; ++b) {
        const Vec4i dots = block_sums4(w + b * kQ8Rows * kQ8Block, x + b * kQ8Block);
        acc += __builtin_convertvector(dots, Vec4) * (load<Vec4>(dw + b * kQ8Rows) * dx[b]);
      }
      float* o = out + std::size_t(t) * ld + n;
      for (int r = 0; r < std::min(kQ8Rows, N - n); ++r) o[r] = acc[r] + (bias ? bias[n + r] : 0.0f);
    }
  }
}

}  // namespace glassbox::kernels
