// The F32 matrix product's tiles (kernels.h's matmul), included by the two files that compile
// them: matmul.cpp as matmul (a multiply, then an add, each rounded: the same bits natively and in
// WebAssembly) and matmul_fused.cpp as matmul_fused (with FMA contraction: each multiply-add
// rounded once). Everything here has internal linkage, so that the two compilations of one source
// stay apart.
//
// By far the most time is spent in these products (docs/performance.md, Where the time goes).
// Decoding one token reads every weight once, so it is bound by memory bandwidth: the weights are
// packed (kernels.h) so that 8 rows at a time are one contiguous stream against one x. A prompt is
// bound by arithmetic: tiles of weight rows x prompt rows reuse every load. See matmul_tiles below.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/simd.h"

namespace glassbox::kernels {
namespace {

using simd::concat;
using simd::dot;
using simd::kAccLanes;
using simd::load;
using simd::load4;
using simd::prefetch;
using simd::store;
using simd::Vec16;
using simd::Vec4;
using simd::Vec8;

// One output of a product: the 4 lanes of a row's accumulator summed left to right, then the
// row's last K % 4 products (stored after the group's interleaved part), then the bias. Every
// tile ends each output this way. Row r counts from the packed group at `group` (r >= 8: a later
// group) and is output n0 + r.
GLASSBOX_INLINE float finish_row(Vec4 acc, const float* x, int K, const float* group, int r, const float* bias,
                                 int n0) {
  const int kv = K - K % kAccLanes;
  float s = ((acc[0] + acc[1]) + acc[2]) + acc[3];
  const float* tails = group + static_cast<std::size_t>(r / kPackRows) * kPackRows * K + std::size_t(kv) * kPackRows;
  const float* wt = tails + (r % kPackRows) * (K - kv);   // row r's tail
  for (int k = kv; k < K; ++k) s += x[k] * wt[k - kv];
  return s + (bias ? bias[n0 + r] : 0.0f);
}

// A tile's accumulators are vectors of V floats holding kRows<V> weight rows' 4 lanes side by side,
// as the packed layout stores them: Vec8 [row a | row b] (one AVX register natively, two SIMD128
// registers in WebAssembly) or, with AVX-512, Vec16 [rows a .. a+3] (one register).
template <class V>
constexpr int kRows = int(sizeof(V) / sizeof(float)) / kAccLanes;

// x[0..3] in every row's place: [x4 | x4] (vbroadcastf128) or [x4 | x4 | x4 | x4].
template <class V>
GLASSBOX_INLINE V broadcast4(const float* x) {
  if constexpr (kRows<V> == 2) {
    const Vec4 x4 = load4(x);
    return concat(x4, x4);
  } else {
    // GCC 12 builds this broadcast through the stack, or from three shuffles; one vshuff32x4 of
    // the loaded 4 floats does it. (vbroadcastf32x4 from memory, as asm with a memory operand,
    // was slower: the compiler must then assume the asm may read the accumulators, and stored
    // them all on every step.) Only prefill_avx512 below, compiled for AVX-512, gets here.
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
    V v;
    __asm__("vshuff32x4 $0, %g1, %g1, %0" : "=v"(v) : "v"(load4(x)));
    return v;
#else
    static_assert(kRows<V> == 2, "16-float tiles are AVX-512's");
#endif
  }
}

// Row i's 4 lanes of an accumulator. The loops over a tile's rows have constant bounds and are
// unrolled (-O3; decode_tile's 8 rows by a pragma, which clang had not unrolled alone), so `i` is
// a constant, this is one shuffle, and the accumulators stay in registers: indexing a vector's
// lanes by a variable would keep them in memory (in WebAssembly on the stack, zeroed by a call to
// memset per tile).
template <class V>
GLASSBOX_INLINE Vec4 row_lanes(V acc, int i) {
  if constexpr (kRows<V> == 2) {
    return i ? __builtin_shufflevector(acc, acc, 4, 5, 6, 7) : __builtin_shufflevector(acc, acc, 0, 1, 2, 3);
  } else {
    return i == 0   ? __builtin_shufflevector(acc, acc, 0, 1, 2, 3)
           : i == 1 ? __builtin_shufflevector(acc, acc, 4, 5, 6, 7)
           : i == 2 ? __builtin_shufflevector(acc, acc, 8, 9, 10, 11)
                    : __builtin_shufflevector(acc, acc, 12, 13, 14, 15);
  }
}

// TX rows of x against R weight rows (r0 .. r0+R-1, counted from the packed group at `group`:
// R = 16 is two groups), over the columns k0 .. k1-1 (multiples of 4): TX x R accumulators, as
// vectors of kRows<V> rows' 4 lanes (each one load of the packed layout). Each x load is reused by
// R weight rows and each weight load by TX input rows. acc[t][p], rows r0 + p kRows<V> .. for input
// row t, carries on from what it holds: every output accumulates in the order of one dot()
// (kAccLanes lanes over k, in order), so neither the tile nor its vector width nor cutting k into
// blocks changes the result, only the speed.
template <class V, int TX, int R>
GLASSBOX_INLINE void tile_steps(V (&acc)[TX][R / kRows<V>], const float* x, int K, const float* group, int r0, int k0,
                                int k1) {
  static_assert(R % kRows<V> == 0 && (kPackRows % R == 0 || R % kPackRows == 0), "whole vectors, whole groups");
  constexpr int P = R / kRows<V>;
  const float* w[P];   // vector p's rows at column k0
  for (int p = 0; p < P; ++p) {
    const int r = r0 + p * kRows<V>;
    w[p] =
        group + std::size_t(r / kPackRows) * kPackRows * K + std::size_t(k0) * kPackRows + (r % kPackRows) * kAccLanes;
  }
  for (int k = k0; k < k1; k += kAccLanes) {
    const std::size_t step = std::size_t(k - k0) * kPackRows;
    V wv[P];
    for (int p = 0; p < P; ++p) wv[p] = load<V>(w[p] + step);
    for (int t = 0; t < TX; ++t) {
      const V xv = broadcast4<V>(x + static_cast<std::size_t>(t) * K + k);
      for (int p = 0; p < P; ++p) acc[t][p] += xv * wv[p];
    }
  }
}

// One block of columns k0 .. k1-1 of a tile (TX rows of x from row 0, R weight rows from r0):
// the accumulators start at zero in the first block, or where the previous block left them in
// `partial` (TX x R x 4 floats); after the last block (k1 = K - K % 4) they give
// out[t][n0+r0 .. n0+r0+R-1], and before it they go back to `partial`.
template <class V, int TX, int R>
GLASSBOX_INLINE void tile_block(float* out, int ld, const float* x, int K, const float* group, int r0,
                                const float* bias, int n0, int k0, int k1, float* partial) {
  constexpr int P = R / kRows<V>, lanes = int(sizeof(V) / sizeof(float));
  V acc[TX][P] = {};
  if (k0 > 0)
    for (int t = 0; t < TX; ++t)
      for (int p = 0; p < P; ++p) acc[t][p] = load<V>(partial + (t * P + p) * lanes);
  tile_steps<V, TX, R>(acc, x, K, group, r0, k0, k1);
  if (k1 < K - K % kAccLanes) {
    for (int t = 0; t < TX; ++t)
      for (int p = 0; p < P; ++p) store(partial + (t * P + p) * lanes, acc[t][p]);
    return;
  }
  for (int t = 0; t < TX; ++t)
    for (int r = 0; r < R; ++r)
      out[static_cast<std::size_t>(t) * ld + n0 + r0 + r] =
          finish_row(row_lanes(acc[t][r / kRows<V>], r % kRows<V>), x + static_cast<std::size_t>(t) * K, K, group,
                     r0 + r, bias, n0);
}

// Decoding (one input row) reads S packed groups of 8 rows in one pass, S streams far apart in
// memory (the groups at `groups`, rows n0s[s] ..): the whole matrix is read once per token, so
// this is bound by memory bandwidth, and natively two streams read faster than one, while three
// or four were slower than one. Each stream also asks for its weights kPrefetchBytes ahead: the
// hardware prefetchers stop at 4 KB pages, and with the weights on 2 MB pages (core/model/arena.h)
// the hint keeps the next page's lines coming; 2 KB ahead beat both no hint and 3 KB (see
// docs/performance.md, Decoding). Each output accumulates as in tile, so the bits are the same.
// kPrefetchBytes (kernels/tuning.h): 2048 is 16 steps of k ahead (each step reads 128 bytes a stream).

template <int S>
GLASSBOX_INLINE void decode_tile(float* out, const float* x, int K, const float* const (&groups)[S],
                                 const int (&n0s)[S], const float* bias) {
  constexpr int P = kPackRows / 2;
  const int kv = K - K % kAccLanes;
  Vec8 acc[S][P] = {};   // acc[s][p]: [row 2p | row 2p+1] of group s, 4 lanes each
  for (int k = 0; k < kv; k += kAccLanes) {
    const Vec4 x4 = load4(x + k);
    const Vec8 xv = concat(x4, x4);
    for (int s = 0; s < S; ++s) {
      const float* w = groups[s] + static_cast<std::size_t>(k) * kPackRows;
      if constexpr (kPrefetchBytes > 0) {   // this step's 128 bytes, 16 steps on
        prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes);
        prefetch(reinterpret_cast<const char*>(w) + kPrefetchBytes + 64);
      }
      for (int p = 0; p < P; ++p) acc[s][p] += xv * load(w + 2 * p * kAccLanes);
    }
  }
  for (int s = 0; s < S; ++s)
#pragma GCC unroll 8   // whole, so that each row_lanes is one shuffle (see there)
    for (int r = 0; r < kPackRows; ++r)
      out[n0s[s] + r] = finish_row(row_lanes(acc[s][r / 2], r % 2), x, K, groups[s], r, bias, n0s[s]);
}

// A prompt (T > 1): tiles of R weight rows x TX input rows over every packed group, each weight
// load reused TX times and each input load R times; the last T % TX rows one at a time. The tiles go down all T rows
// with the same R weight rows, which should stay in the L1 cache: R rows of GPT-2's MLP projection (K = 3072) are 48
// KB, more than a 32 KB L1 data cache, so K is cut into blocks of kKBlock columns and the accumulators wait in
// `partial` between blocks. That made this product clearly faster in WebAssembly (4 x 2 tiles), nearly as fast as the
// products with K = 768, and changed nothing natively (docs/performance.md, Prompts).
constexpr int kKBlock = 768;

// Rows t .. of x in tiles of TX rows while whole tiles remain; returns the first row left.
// partial: (T, R, 4) floats, or null when K is one block.
template <class V, int TX, int R>
GLASSBOX_INLINE int tile_rows(float* out, int ld, const float* x, int T, int K, const float* group, int r0,
                              const float* bias, int n0, int k0, int k1, float* partial, int t) {
  for (; t + TX <= T; t += TX)
    tile_block<V, TX, R>(out + static_cast<std::size_t>(t) * ld, ld, x + static_cast<std::size_t>(t) * K, K, group, r0,
                         bias, n0, k0, k1, partial ? partial + static_cast<std::size_t>(t) * R * kAccLanes : nullptr);
  return t;
}

// Weight rows r0 .. r0+R-1 of the packed group(s) at `group` (outputs n0 + r0 ..) against every
// row of x, block of columns after block.
template <class V, int R, int TX>
GLASSBOX_INLINE void rows_of_prompt(float* out, int ld, const float* x, int T, int K, const float* group, int r0,
                                    const float* bias, int n0, float* partial) {
  const int kv = K - K % kAccLanes;
  for (int k0 = 0;; k0 += kKBlock) {   // at least once: K < 4 is all tail
    const int k1 = std::min(kv, k0 + kKBlock);
    const int t = tile_rows<V, TX, R>(out, ld, x, T, K, group, r0, bias, n0, k0, k1, partial, 0);
    tile_rows<V, 1, R>(out, ld, x, T, K, group, r0, bias, n0, k0, k1, partial, t);
    if (k1 == kv) break;
  }
}

// R <= 8 weight rows to a tile, or R = 16, two packed groups (and a last odd group as 8 rows).
template <class V, int R, int TX>
GLASSBOX_INLINE void prefill(float* out, int ld, const float* x, const float* w, const float* bias, int T, int K,
                             int N8) {
  const int kv = K - K % kAccLanes;
  std::vector<float> partial(kv > kKBlock ? static_cast<std::size_t>(T) * R * kAccLanes : 0);   // (T, R, 4)
  float* const p = partial.empty() ? nullptr : partial.data();
  const auto group = [&](int n) { return w + static_cast<std::size_t>(n) * K; };
  int n = 0;
  if constexpr (R > kPackRows)
    for (; n + R <= N8; n += R) rows_of_prompt<V, R, TX>(out, ld, x, T, K, group(n), 0, bias, n, p);
  constexpr int R1 = std::min(R, kPackRows);
  for (; n < N8; n += kPackRows)
    for (int r0 = 0; r0 < kPackRows; r0 += R1) rows_of_prompt<V, R1, TX>(out, ld, x, T, K, group(n), r0, bias, n, p);
}

#if defined(__x86_64__) && !defined(__EMSCRIPTEN__)
// AVX-512 has 32 vector registers of 16 floats: tiles of 16 weight rows (two packed groups, four
// registers of four rows) x 4 prompt rows, 16 accumulators. Each input load (4 floats, broadcast
// to the 4 rows of a register: one shuffle) serves 16 rows, where 8-float vectors' tiles spend a
// shuffle for every 2. Asked at run time because one source serves every clone of matmul
// (simd.h); compiled for x86-64-v4 alone, the one target where a Vec16 is a register.
static bool has_avx512() {
#ifdef GLASSBOX_NATIVE_ARCH   // a build for one CPU takes the tiles of the set it was compiled for
#ifdef __AVX512F__
  return true;
#else
  return false;
#endif
#else
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
#endif
}
__attribute__((target("arch=x86-64-v4"))) void prefill_avx512(float* out, int ld, const float* x, const float* w,
                                                              const float* bias, int T, int K, int N8) {
  prefill<Vec16, 16, 4>(out, ld, x, w, bias, T, K, N8);
}
#endif

// Decoding (T = 1) streams every weight once, bound by memory bandwidth: whole packed groups of 8
// rows per pass, kDecodeStreams contiguous streams (decode_tile). A prompt (T > 1) is bound by
// arithmetic; its tile (weight rows x prompt rows) is the largest whose accumulators stay in
// registers, the fastest of those tried on GPT-2 small's matrices (docs/performance.md, Prompts):
//   WebAssembly (V8 has 16 registers of 4 floats)   4 x 2    (2 x 4 slower; the others spill)
//   AVX-512 (32 registers of 16 floats)             16 x 4   (16 x 5, 16 x 6 as fast; 8 x 5 to
//                                                             8 x 12 slower; 8-float vectors'
//                                                             8 x 4 a third slower)
//   AVX2 (16 registers of 8 floats)                 8 x 2    (4 x 4 slower: a shuffle of x per
//                                                             2 rows, not 4; 8 x 4 spills)
GLASSBOX_INLINE void matmul_tiles(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
                                  int out_stride) {
  const int ld = out_stride ? out_stride : N;
  const int N8 = N - N % kPackRows;
  if (T == 1) {
    const int groups = N8 / kPackRows, half = (groups + 1) / 2;
    const auto group = [&](int g) { return w + static_cast<std::size_t>(g) * kPackRows * K; };
    for (int g = 0; g < (kDecodeStreams == 2 ? half : groups); ++g) {
      if (kDecodeStreams == 2 && g + half < groups)   // group g with group g + half: the matrix's two halves
        decode_tile<2>(out, x, K, {group(g), group(g + half)}, {g * kPackRows, (g + half) * kPackRows}, bias);
      else
        decode_tile<1>(out, x, K, {group(g)}, {g * kPackRows}, bias);
    }
  } else {
#ifdef __wasm_simd128__
    prefill<Vec8, 4, 2>(out, ld, x, w, bias, T, K, N8);
#elif defined(__x86_64__)
    if (has_avx512())
      prefill_avx512(out, ld, x, w, bias, T, K, N8);
    else
      prefill<Vec8, 8, 2>(out, ld, x, w, bias, T, K, N8);
#else
    prefill<Vec8, 4, 4>(out, ld, x, w, bias, T, K, N8);
#endif
  }
  for (int n = N8; n < N; ++n) {   // the last N % 8 rows, stored as they are, one at a time
    const float* wn = w + static_cast<std::size_t>(n) * K;
    for (int t = 0; t < T; ++t)
      out[static_cast<std::size_t>(t) * ld + n] =
          dot(x + static_cast<std::size_t>(t) * K, wn, K) + (bias ? bias[n] : 0.0f);
  }
}

}   // namespace
}   // namespace glassbox::kernels
