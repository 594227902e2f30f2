// Int8 and int4 matrix products (layouts and contract in quantized.h): quantization, the portable
// kernels and the choice of kernel.
//
// The portable kernel works on tiles of 4 weight rows x 1 block of 32: four exact integer dot
// products, reduced to one vector of 4 sums (one per row), converted to float and scaled by the 4
// rows' block scales (stored together for this load) times x's block scale. Lanes are rows, so no
// horizontal sum is left at the end. For a prompt (T > 1) every input row runs over the same 4
// weight rows, which stay in L1 (4 x 3072 bytes at most in GPT-2 small). Decoding (T = 1) runs
// two groups of rows, far apart, in one pass: two streams of weights keep more memory requests in
// flight than one (as for F32, matmul_tiles.h).
#include "kernels/quantized.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/quantized_x86.h"
#include "kernels/simd.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

#include "kernels/quantized_simd128_prompt.h"
#endif
#ifdef GLASSBOX_X86_KERNELS
#include <cpuid.h>
#endif

namespace glassbox::kernels {
namespace {

using simd::load;
using simd::store;
using simd::Vec4;
using simd::Vec4i;
using simd::Vec8;
using simd::Vec8i;
typedef std::int16_t Vec8s __attribute__((vector_size(16)));
typedef std::uint16_t Vec8us __attribute__((vector_size(16)));

// Whole numbers toward zero, 8 lanes (|v| <= 127 here).
GLASSBOX_INLINE Vec8 trunc8(Vec8 v) {
#ifdef __wasm_simd128__
  // Clang turns a vector float <-> int conversion into one scalar conversion per lane in
  // WebAssembly; f32x4.trunc is one instruction.
  const v128_t lo = wasm_f32x4_trunc(v128_t(__builtin_shufflevector(v, v, 0, 1, 2, 3)));
  const v128_t hi = wasm_f32x4_trunc(v128_t(__builtin_shufflevector(v, v, 4, 5, 6, 7)));
  return __builtin_shufflevector(Vec4(lo), Vec4(hi), 0, 1, 2, 3, 4, 5, 6, 7);
#else
  return __builtin_convertvector(__builtin_convertvector(v, Vec8i), Vec8);
#endif
}

// q (32) = t (32 whole numbers in [-127, 127], as floats).
GLASSBOX_INLINE void to_int8(std::int8_t* q, const Vec8 (&t)[kQ8Block / simd::kLanes]) {
#ifdef __wasm_simd128__
  // Two narrowings (saturating, but nothing saturates here) after SIMD128's conversion.
  const auto ints = [](Vec8 v, bool high) {
    const Vec4 half = high ? __builtin_shufflevector(v, v, 4, 5, 6, 7) : __builtin_shufflevector(v, v, 0, 1, 2, 3);
    return wasm_i32x4_trunc_sat_f32x4(v128_t(half));
  };
  for (int i = 0; i < 2; ++i) {
    const v128_t lo = wasm_i16x8_narrow_i32x4(ints(t[2 * i], false), ints(t[2 * i], true));
    const v128_t hi = wasm_i16x8_narrow_i32x4(ints(t[2 * i + 1], false), ints(t[2 * i + 1], true));
    wasm_v128_store(q + 16 * i, wasm_i8x16_narrow_i16x8(lo, hi));
  }
#else
  // Narrowed as vectors (vpmovdb, or packs): a byte at a time, this step was much of the cost of
  // quantizing a model's weights at load.
  typedef std::int8_t Vec8c __attribute__((vector_size(8)));
  for (int i = 0; i < kQ8Block / simd::kLanes; ++i) {
    const Vec8c v = __builtin_convertvector(__builtin_convertvector(t[i], Vec8i), Vec8c);
    std::memcpy(q + i * simd::kLanes, &v, sizeof v);
  }
#endif
}

// One block of 32 values (zeros past K): the scale d = max |v| / 127 and q = v / d rounded to the
// nearest whole number (halves away from zero) in [-127, 127], 8 lanes at a time: every product
// quantizes its input on every call. reference::quantize_q8 is the same arithmetic written plainly
// (the same bits, tested). A NaN or an infinity in the block makes d NaN or infinite, so that the
// products come out non-finite as F32's would (not silently finite); its values are then 0. Values
// are clamped as floats before any conversion: a float -> int conversion of NaN or of a value out
// of range is undefined behaviour (both found by tests/fuzz).
GLASSBOX_INLINE void quantize_full_block(std::int8_t* q, float* scale, const float* v) {
  constexpr int kVecs = kQ8Block / simd::kLanes;
  Vec8 x[kVecs], amax = {};
  Vec8i nan = {};
  for (int i = 0; i < kVecs; ++i) {
    x[i] = simd::load(v + i * simd::kLanes);
    const Vec8 a = Vec8(Vec8i(x[i]) & 0x7fffffff);   // |x|
    nan |= x[i] != x[i];
    amax = a > amax ? a : amax;   // a NaN lane leaves amax as it was, as std::max(amax, NaN)
  }
  float m = 0.0f;
  bool any_nan = false;
  for (int l = 0; l < simd::kLanes; ++l) m = std::max(m, amax[l]), any_nan |= nan[l] != 0;
  const float d = any_nan ? NAN : m / 127.0f;
  const float inv = d > 0.0f && std::isfinite(d) ? 1.0f / d : 0.0f;
  // A subnormal d (a block below ~3.7e-37) has no finite inverse: divide by d instead.
  const bool divide = std::isinf(inv);
  Vec8 t[kVecs];
  for (int i = 0; i < kVecs; ++i) {
    Vec8 r = divide ? x[i] / d : x[i] * inv;
    r = r == r ? r : Vec8{};                                                  // NaN -> 0
    r = r < -127.0f ? Vec8{} - 127.0f : (127.0f < r ? Vec8{} + 127.0f : r);   // std::clamp
    // Halves away from zero, as std::round: from the fraction, which r - trunc(r) gives exactly
    // (adding 0.5 first would round 0.49999997 up, in the addition).
    const Vec8 whole = trunc8(r), fraction = r - whole;
    t[i] = whole + (fraction >= 0.5f ? Vec8{} + 1.0f : (fraction <= -0.5f ? Vec8{} - 1.0f : Vec8{}));
  }
  to_int8(q, t);
  *scale = d;
}

GLASSBOX_INLINE void quantize_block(std::int8_t* q, float* scale, const float* v, int n) {
  if (n == kQ8Block) return quantize_full_block(q, scale, v);
  float padded[kQ8Block] = {};
  if (n > 0) std::memcpy(padded, v, sizeof(float) * std::size_t(n));
  quantize_full_block(q, scale, padded);
}

constexpr int kPairs = kQ8Block / 2;   // 16-bit words per block row

constexpr int kQ4Bytes = kQ8Block / 2;   // bytes of one int4 row block

#ifdef __wasm_simd128__
// One weight row's block (32 stored bytes = 16 words W) against x's pairs p (e[16], o[16]):
// W . e + (W >> 8) . o, 8 products per i32x4.dot_i16x8_s, the words taken as they are stored.
GLASSBOX_INLINE v128_t row_dot(const std::int8_t* w, const std::int16_t* p) {
  const v128_t w0 = wasm_v128_load(w), w1 = wasm_v128_load(w + 16);
  const v128_t lo = wasm_i32x4_add(wasm_i32x4_dot_i16x8(w0, wasm_v128_load(p)),
                                   wasm_i32x4_dot_i16x8(wasm_i16x8_shr(w0, 8), wasm_v128_load(p + kPairs)));
  const v128_t hi = wasm_i32x4_add(wasm_i32x4_dot_i16x8(w1, wasm_v128_load(p + 8)),
                                   wasm_i32x4_dot_i16x8(wasm_i16x8_shr(w1, 8), wasm_v128_load(p + kPairs + 8)));
  return wasm_i32x4_add(lo, hi);
}

// One int4 row's block (16 bytes) against the same pairs, as (w + 8) . x. Masking each word's
// nibbles gives words U = u_2j + 256 u_2j+1 (low nibbles: values 0..15; shifted by 4 first: values
// 16..31), the form the pairs are made for: U . e + (U >> 8) . o = u_2j x_2j + u_2j+1 x_2j+1.
GLASSBOX_INLINE v128_t row_dot(const std::uint8_t* w, const std::int16_t* p) {
  const v128_t v = wasm_v128_load(w), nibbles = wasm_i16x8_splat(0x0f0f);
  const v128_t lo = wasm_v128_and(v, nibbles), hi = wasm_v128_and(wasm_u16x8_shr(v, 4), nibbles);
  const v128_t first = wasm_i32x4_add(wasm_i32x4_dot_i16x8(lo, wasm_v128_load(p)),
                                      wasm_i32x4_dot_i16x8(wasm_u16x8_shr(lo, 8), wasm_v128_load(p + kPairs)));
  const v128_t last = wasm_i32x4_add(wasm_i32x4_dot_i16x8(hi, wasm_v128_load(p + 8)),
                                     wasm_i32x4_dot_i16x8(wasm_u16x8_shr(hi, 8), wasm_v128_load(p + kPairs + 8)));
  return wasm_i32x4_add(first, last);
}

// The dot products of one block of 4 weight rows (row after row) with x, each plus what the
// caller takes off (offset_sums): lane r is row r.
template <class W>
GLASSBOX_INLINE Vec4i block_sums4(const W* w, const std::int16_t* p) {
  constexpr int row = std::is_same_v<W, std::int8_t> ? kQ8Block : kQ4Bytes;
  const v128_t a = row_dot(w, p), b = row_dot(w + row, p);
  const v128_t c = row_dot(w + 2 * row, p), d = row_dot(w + 3 * row, p);
  // Transpose and add: [a0+a2, b0+b2, a1+a3, b1+b3], the same for c, d, then [sum a, .., sum d].
  const v128_t ab = wasm_i32x4_add(wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), wasm_i32x4_shuffle(a, b, 2, 6, 3, 7));
  const v128_t cd = wasm_i32x4_add(wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), wasm_i32x4_shuffle(c, d, 2, 6, 3, 7));
  return Vec4i(wasm_i32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5), wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7)));
}

// What the row dots carry beyond w . x: 128 * x's sum at even k (int8), 8 * its sum (int4).
GLASSBOX_INLINE std::int32_t offset_sums(const std::int8_t*, const Q8Activations& x, std::size_t tb) {
  return x.even_sum128[tb];
}
#else
// Natively the compiler vectorizes these loops for each target clone (sign extensions and
// vpmaddwd), on the stored bytes flipped back to w (int8) or on the nibbles (int4, as w + 8).
GLASSBOX_INLINE std::int32_t row_dot(const std::int8_t* w, const std::int8_t* x) {
  std::int32_t s = 0;
  for (int i = 0; i < kQ8Block; ++i) s += std::int32_t(std::int8_t(w[i] ^ (i % 2 ? 0 : -128))) * x[i];
  return s;
}
GLASSBOX_INLINE std::int32_t row_dot(const std::uint8_t* w, const std::int8_t* x) {
  std::int32_t s = 0;
  for (int i = 0; i < kQ4Bytes; ++i) s += std::int32_t(w[i] & 15) * x[i] + std::int32_t(w[i] >> 4) * x[i + kQ4Bytes];
  return s;
}

template <class W>
GLASSBOX_INLINE Vec4i block_sums4(const W* w, const std::int8_t* x) {
  constexpr int row = std::is_same_v<W, std::int8_t> ? kQ8Block : kQ4Bytes;
  return Vec4i{row_dot(w, x), row_dot(w + row, x), row_dot(w + 2 * row, x), row_dot(w + 3 * row, x)};
}

GLASSBOX_INLINE std::int32_t offset_sums(const std::int8_t*, const Q8Activations&, std::size_t) { return 0; }
#endif
GLASSBOX_INLINE std::int32_t offset_sums(const std::uint8_t*, const Q8Activations& x, std::size_t tb) {
  return x.sum128[tb] / 16;
}

// Block b's 4 products of one group, added to acc: float(dot) * (dw * dx), in block order.
template <class W>
GLASSBOX_INLINE Vec4 add_block(Vec4 acc, const W* w, const float* dw, const Q8Activations& x, int t, int b) {
  constexpr int group_block = kQ8Rows * (std::is_same_v<W, std::int8_t> ? kQ8Block : kQ4Bytes);
  const std::size_t tb = std::size_t(t) * x.blocks + b;
#ifdef __wasm_simd128__
  const std::int16_t* xb = x.pairs.data() + tb * kQ8Block;
#else
  const std::int8_t* xb = x.q.data() + tb * kQ8Block;
#endif
  const Vec4i dots = block_sums4(w + b * group_block, xb) - offset_sums(w, x, tb);
  return acc + __builtin_convertvector(dots, Vec4) * (load<Vec4>(dw + b * kQ8Rows) * x.d[tb]);
}

// Rows 4g..4g+3 that exist (N need not be a multiple of 4), plus the bias.
GLASSBOX_INLINE void store_group(float* out, Vec4 acc, const float* bias, int g, int N) {
  const int n = g * kQ8Rows;
  for (int r = 0; r < std::min(kQ8Rows, N - n); ++r) out[n + r] = acc[r] + (bias ? bias[n + r] : 0.0f);
}

// W: std::int8_t (int8 weights) or std::uint8_t (int4's nibbles).
template <class W>
GLASSBOX_INLINE void matmul_portable(float* out, const Q8Activations& x, const W* wq, const float* wd,
                                     const float* bias, int N, int ld) {
  const int blocks = x.blocks, groups = (N + kQ8Rows - 1) / kQ8Rows;
  const std::size_t group_q = std::size_t(blocks) * kQ8Rows * (std::is_same_v<W, std::int8_t> ? kQ8Block : kQ4Bytes);
  const std::size_t group_d = std::size_t(blocks) * kQ8Rows;
  if (x.T == 1) {   // groups g and g + half together (the last one alone when groups is odd)
    const int half = (groups + 1) / 2;
    for (int g = 0; g < half; ++g) {
      const int g2 = g + half < groups ? g + half : g;
      Vec4 acc = {}, acc2 = {};
      for (int b = 0; b < blocks; ++b) {
        acc = add_block(acc, wq + g * group_q, wd + g * group_d, x, 0, b);
        acc2 = add_block(acc2, wq + g2 * group_q, wd + g2 * group_d, x, 0, b);
      }
      store_group(out, acc, bias, g, N);
      store_group(out, acc2, bias, g2, N);
    }
    return;
  }
#ifdef __wasm_simd128__
  matmul_prompt(out, ld, x, wq, wd, bias, N);   // T > 1: on weights copied into panels
#else
  for (int g = 0; g < groups; ++g)
    for (int t = 0; t < x.T; ++t) {
      Vec4 acc = {};
      for (int b = 0; b < blocks; ++b) acc = add_block(acc, wq + g * group_q, wd + g * group_d, x, t, b);
      store_group(out + std::size_t(t) * ld, acc, bias, g, N);
    }
#endif
}

// The portable kernel, compiled once per target clone (kernels/simd.h), for each weight type.
GLASSBOX_CLONES void matmul_cloned(float* out, const Q8Activations& x, const std::int8_t* wq, const float* wd,
                                   const float* bias, int N, int ld) {
  matmul_portable(out, x, wq, wd, bias, N, ld);
}
GLASSBOX_CLONES void matmul_cloned(float* out, const Q8Activations& x, const std::uint8_t* wq, const float* wd,
                                   const float* bias, int N, int ld) {
  matmul_portable(out, x, wq, wd, bias, N, ld);
}

// Whole numbers in [0, 15] as floats -> int32 lanes (SIMD128: one conversion per 4 lanes, as in
// trunc8).
GLASSBOX_INLINE Vec8i to_int(Vec8 v) {
#ifdef __wasm_simd128__
  const v128_t lo = wasm_i32x4_trunc_sat_f32x4(v128_t(__builtin_shufflevector(v, v, 0, 1, 2, 3)));
  const v128_t hi = wasm_i32x4_trunc_sat_f32x4(v128_t(__builtin_shufflevector(v, v, 4, 5, 6, 7)));
  return __builtin_shufflevector(Vec4i(lo), Vec4i(hi), 0, 1, 2, 3, 4, 5, 6, 7);
#else
  return __builtin_convertvector(v, Vec8i);
#endif
}

// pick(every lane of v), in every lane: three shuffles and picks (a tree over the 8 lanes).
template <class V, class Pick>
GLASSBOX_INLINE V across_lanes(V v, Pick pick) {
  v = pick(v, __builtin_shufflevector(v, v, 4, 5, 6, 7, 0, 1, 2, 3));
  v = pick(v, __builtin_shufflevector(v, v, 2, 3, 0, 1, 6, 7, 4, 5));
  return pick(v, __builtin_shufflevector(v, v, 1, 0, 3, 2, 5, 4, 7, 6));
}

// One int4 block of 32 values (zeros past n) -> 16 bytes of nibbles and the scale (quantized.h's
// rule; reference::quantize_q4 is the same arithmetic written plainly, tested to give the same
// bits), 8 lanes at a time: a quantized load converts every weight of the model once, and a
// plain loop held it to a third of int8's speed. The first value of largest magnitude sets the
// scale and becomes -8: each lane keeps its first largest value and where it was, and the lanes'
// winner is the largest, the earliest among equals. A NaN or an infinity in the block makes the
// scale NaN or infinite, and its values 0.
GLASSBOX_INLINE void quantize_block_q4(std::uint8_t* q, float* scale, const float* v, int n) {
  constexpr int kVecs = kQ8Block / simd::kLanes;
  float padded[kQ8Block] = {};
  if (n < kQ8Block) {
    if (n > 0) std::memcpy(padded, v, sizeof(float) * std::size_t(n));
    v = padded;
  }
  Vec8 x[kVecs], amax = {}, value = {};
  Vec8i at = {}, nan = {};
  for (int i = 0; i < kVecs; ++i) {
    x[i] = simd::load(v + i * simd::kLanes);
    const Vec8 a = Vec8(Vec8i(x[i]) & 0x7fffffff);   // |x|
    nan |= x[i] != x[i];
    const Vec8i larger = a > amax;   // strictly: an equal value later keeps the first
    amax = larger ? a : amax;
    value = larger ? x[i] : value;
    at = larger ? Vec8i{} + i : at;
  }
  // Across the lanes, without a branch per lane: the largest magnitude in every lane (amax holds
  // no NaN), then the earliest position holding it, and that lane's value.
  const auto max_of = [](auto a, auto b) { return a < b ? b : a; };
  const auto min_of = [](auto a, auto b) { return a > b ? b : a; };
  const Vec8i index = at * simd::kLanes + Vec8i{0, 1, 2, 3, 4, 5, 6, 7};
  const int first = across_lanes(amax == across_lanes(amax, max_of) ? index : Vec8i{} + kQ8Block, min_of)[0];
  const float m = value[first % simd::kLanes];
  const bool any_nan = across_lanes(nan, min_of)[0] != 0;   // a NaN lane is -1 (all ones), the others 0
  const float d = any_nan ? NAN : m / -8.0f + 0.0f;         // + 0: an all-zero block's scale is 0, not -0
  const float inv = d != 0.0f && std::isfinite(d) ? 1.0f / d : 0.0f;
  const bool divide = std::isinf(inv);   // a subnormal d has no finite inverse
  Vec8i u[kVecs];
  for (int i = 0; i < kVecs; ++i) {
    Vec8 t = (divide ? x[i] / d : x[i] * inv) + 8.5f;
    t = t == t ? t : Vec8{} + 8.0f;                             // NaN -> 0 (+8)
    t = t < 0.0f ? Vec8{} : (15.0f < t ? Vec8{} + 15.0f : t);   // clamp to [0, 15]
    u[i] = to_int(t);                                           // truncates
  }
  typedef std::uint8_t Bytes8 __attribute__((vector_size(8)));
  const Vec8i lo = u[0] | u[2] << 4, hi = u[1] | u[3] << 4;   // values j and j + 16
  store(q, __builtin_convertvector(lo, Bytes8));
  store(q + simd::kLanes, __builtin_convertvector(hi, Bytes8));
  *scale = d;
}

}   // namespace

GLASSBOX_CLONES void quantize_weights_q8(std::int8_t* q, float* d, const float* w, int N, int K) {
  const Q8Shape s(N, K);
  std::int8_t block[kQ8Block];
  for (int n = 0; n < s.Np; ++n) {
    for (int b = 0; b < s.blocks; ++b) {
      const int k0 = b * kQ8Block;
      const int len = n < N ? std::min(kQ8Block, K - k0) : 0;   // padding rows are all zero
      quantize_block(block, d + q8_scale_index(s, n, b), len ? w + std::size_t(n) * K + k0 : nullptr, len);
      std::int8_t* to = q + q8_index(s, n, k0);
      for (int i = 0; i < kQ8Block; ++i) to[i] = static_cast<std::int8_t>(i % 2 ? block[i] : block[i] ^ -128);
    }
  }
}

GLASSBOX_CLONES void quantize_weights_q4(std::uint8_t* q, float* d, const float* w, int N, int K) {
  const Q8Shape s(N, K);
  for (int n = 0; n < s.Np; ++n)
    for (int b = 0; b < s.blocks; ++b) {
      const int k0 = b * kQ8Block;
      const int len = n < N ? std::min(kQ8Block, K - k0) : 0;   // padding rows are all zero
      quantize_block_q4(q + q4_index(s, n, k0), d + q8_scale_index(s, n, b),
                        len ? w + std::size_t(n) * K + k0 : nullptr, len);
    }
}

void size_activations_q8(Q8Activations& x, int T, int K) {
  const Q8Shape s(1, K);
  x.T = T, x.Kp = s.Kp, x.blocks = s.blocks;
  x.q.resize(std::size_t(T) * s.Kp);
  x.d.resize(std::size_t(T) * s.blocks);
  x.pairs.resize(kQ8Pairs ? x.q.size() : 0);
  x.even_sum128.resize(kQ8Pairs ? x.d.size() : 0);
  x.sum128.resize(x.d.size());
}

void quantize_activations_q8(Q8Activations& x, const float* in, int T, int K) {
  size_activations_q8(x, T, K);
  quantize_activation_rows_q8(x, in, K, 0, T);
}

GLASSBOX_CLONES void quantize_activation_rows_q8(Q8Activations& x, const float* in, int K, int t0, int t1) {
  const Q8Shape s(1, K);
  for (int t = t0; t < t1; ++t)
    for (int b = 0; b < s.blocks; ++b) {
      const std::size_t tb = std::size_t(t) * s.blocks + b;
      const int k0 = b * kQ8Block;
      std::int8_t* q = x.q.data() + std::size_t(t) * s.Kp + k0;
      quantize_block(q, &x.d[tb], in + std::size_t(t) * K + k0, std::min(kQ8Block, K - k0));
      if constexpr (kQ8Pairs) {
        // 16 bytes = 8 words at a time: e = the low (even) byte, sign-extended; odd = the high byte.
        std::int16_t* p = x.pairs.data() + tb * kQ8Block;
        Vec8s sums = {};
        for (int i = 0; i < 2; ++i) {
          const Vec8s w = load<Vec8s>(q + 16 * i);
          const Vec8s e = Vec8s(Vec8us(w) << 8) >> 8, odd = w >> 8;
          store(p + 8 * i, e);
          store(p + kPairs + 8 * i, odd - e * 256);   // |.| <= 32639: |q| <= 127
          sums += e;
        }
        std::int32_t even = 0;
        for (int l = 0; l < 8; ++l) even += sums[l];
        x.even_sum128[tb] = 128 * even;
      }
      std::int32_t all = 0;
      for (int i = 0; i < kQ8Block; ++i) all += q[i];
      x.sum128[tb] = 128 * all;
    }
}

#ifdef GLASSBOX_X86_KERNELS
static_assert(kQ8Block == x86::kBlockValues && kQ8Rows == x86::kGroupRows, "quantized_x86.h's layout constants");
static bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
static bool has_avx_vnni() {
  // CPUID leaf 7, sub-leaf 1, EAX bit 4 (clang 14's __builtin_cpu_supports does not know "avxvnni");
  // the AVX2 check covers the operating system's saving of the 256-bit registers.
  static const bool yes = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 4)) != 0;
  }();
  return yes;
}
static bool has_avx512_vnni() {
  // Every set quantized_vnni.cpp is compiled with (core/CMakeLists.txt).
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
  return yes;
}
#endif

bool q8_kernel_available(Q8Kernel kernel) {
  switch (kernel) {
    case Q8Kernel::Best:
    case Q8Kernel::Portable:
      return true;
#ifdef GLASSBOX_X86_KERNELS
    case Q8Kernel::Avx2:
      return has_avx2();
    case Q8Kernel::AvxVnni:
      return has_avx_vnni();
    case Q8Kernel::Avx512Vnni:
      return has_avx512_vnni();
#endif
    default:
      return false;
  }
}

namespace {
// The x86 kernels where the CPU has them: the portable kernel's per-row widening and horizontal
// sums cost more than reading the memory, and they do fewer of both (docs/performance.md, Int8
// kernels). W: std::int8_t (int8) or std::uint8_t (int4), which picks each kernel's overload.
template <class W>
void matmul_quantized(const char* name, float* out, const Q8Activations& x, const W* wq, const float* wd,
                      const float* bias, int N, int out_stride, Q8Kernel kernel) {
  if (!q8_kernel_available(kernel))
    throw std::invalid_argument(std::string(name) + ": this CPU does not have the kernel asked for");
  const int ld = out_stride ? out_stride : N;
#ifdef GLASSBOX_X86_KERNELS
  if (kernel == Q8Kernel::Best)
    kernel = has_avx512_vnni() ? Q8Kernel::Avx512Vnni
             : has_avx_vnni()  ? Q8Kernel::AvxVnni
             : has_avx2()      ? Q8Kernel::Avx2
                               : Q8Kernel::Portable;
  const x86::Q8Rows rows{x.q.data(), x.d.data(), x.sum128.data(), x.T, x.Kp, x.blocks};
  if (kernel == Q8Kernel::Avx2) return x86::matmul_avx2(out, ld, rows, wq, wd, bias, N);
  if (kernel == Q8Kernel::AvxVnni) return x86::matmul_avx_vnni(out, ld, rows, wq, wd, bias, N);
  if (kernel == Q8Kernel::Avx512Vnni) return x86::matmul_vnni(out, ld, rows, wq, wd, bias, N);
#endif
  matmul_cloned(out, x, wq, wd, bias, N, ld);
}
}   // namespace

void matmul_q8(float* out, const Q8Activations& x, const std::int8_t* wq, const float* wd, const float* bias, int N,
               int out_stride, Q8Kernel kernel) {
  matmul_quantized("matmul_q8", out, x, wq, wd, bias, N, out_stride, kernel);
}

void matmul_q4(float* out, const Q8Activations& x, const std::uint8_t* wq, const float* wd, const float* bias, int N,
               int out_stride, Q8Kernel kernel) {
  matmul_quantized("matmul_q4", out, x, wq, wd, bias, N, out_stride, kernel);
}

}   // namespace glassbox::kernels
