// Fast kernels: one portable source for native builds and WebAssembly (vector types in simd.h).
//
// Every kernel computes in one order on every target (products: 4 lanes, then a left-to-right
// horizontal sum, then a scalar tail; see simd.h), and the build disables FMA contraction, so
// native and WebAssembly give bit-identical results, and whatever the tile a row's result has the
// same bits (decoding a token equals its row in a prompt).
//
// By far the most time is spent in matmul (docs/performance.md, Where the time goes). Decoding
// one token reads every weight once, so it is bound by memory bandwidth: the weights are packed
// (kernels.h) so that 8 rows at a time are one contiguous stream against one x. A prompt is bound
// by arithmetic: tiles of weight rows x prompt rows reuse every load. See matmul below.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/reference.h"
#include "kernels/simd.h"

namespace glassbox::kernels {
namespace {

using simd::hsum;
using simd::kLanes;
using simd::load;
using simd::prefetch;
using simd::store;
using simd::Vec8;
using simd::Vec8i;

using simd::concat;
using simd::kAccLanes;
using simd::Vec16;
using simd::Vec4;

GLASSBOX_INLINE Vec4 load4(const float* p) { return simd::load<Vec4>(p); }

// sum_k a[k] * b[k], in kAccLanes lanes (the order every matrix product uses)
GLASSBOX_INLINE float dot(const float* a, const float* b, int n) {
  Vec4 acc = {};
  int k = 0;
  for (; k + kAccLanes <= n; k += kAccLanes) acc += load4(a + k) * load4(b + k);
  float s = hsum(acc);
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

// s[u] = scale * (q[u] . k[u]) for 4 pairs of vectors (hd), four independent sums (one sum's adds
// wait on each other, which made this a visible share of decoding), each in dot()'s order, so the
// bits are dot()'s.
GLASSBOX_INLINE void scores4(float* const (&s)[4], const float* const (&q)[4], const float* const (&k)[4], int hd,
                             float scale) {
  const int kv = hd - hd % kAccLanes;
  Vec4 acc[4] = {};
  for (int d = 0; d < kv; d += kAccLanes)
    for (int u = 0; u < 4; ++u) acc[u] += load4(q[u] + d) * load4(k[u] + d);
  for (int u = 0; u < 4; ++u) {
    float sum = hsum(acc[u]);
    for (int d = kv; d < hd; ++d) sum += q[u][d] * k[u][d];
    *s[u] = sum * scale;
  }
}

// s[j] = scale * (q . k_j) for n keys k_j (hd) kv_stride apart, four keys at a time.
GLASSBOX_INLINE void scores(float* s, const float* q, const float* k, int kv_stride, int n, int hd, float scale) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    const float* kj[4];
    for (int u = 0; u < 4; ++u) kj[u] = k + static_cast<std::size_t>(j + u) * kv_stride;
    scores4({s + j, s + j + 1, s + j + 2, s + j + 3}, {q, q, q, q}, kj, hd, scale);
  }
  for (; j < n; ++j) s[j] = dot(q, k + static_cast<std::size_t>(j) * kv_stride, hd) * scale;
}

// out (hd) = sum_j p[j] v_j over n rows v_j (hd) kv_stride apart, j in order: 32 outputs at a time
// stay in registers across every j (rather than a load and a store of out per row).
GLASSBOX_INLINE void weighted_sum(float* out, const float* p, const float* v, int kv_stride, int n, int hd) {
  constexpr int U = 4;
  int c = 0;
  while (c + kLanes <= hd) {
    const int u_end = std::min(U, (hd - c) / kLanes);   // whole vectors in this chunk
    Vec8 acc[U] = {};
    for (int j = 0; j < n; ++j) {
      const Vec8 pj = simd::splat(p[j]);
      const float* vj = v + static_cast<std::size_t>(j) * kv_stride + c;
      for (int u = 0; u < U; ++u)
        if (u < u_end) acc[u] += pj * load(vj + u * kLanes);
    }
    for (int u = 0; u < u_end; ++u) store(out + c + u * kLanes, acc[u]);
    c += u_end * kLanes;
  }
  for (; c < hd; ++c) {
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) sum += p[j] * v[static_cast<std::size_t>(j) * kv_stride + c];
    out[c] = sum;
  }
}

}   // namespace

// e^x per lane, for the activations and softmax: Cephes' expf (x = n ln2 + r, |r| <= ln2 / 2, a
// degree-5 polynomial for e^r, 2^n built in the exponent bits); relative error below 2e-7. Below
// -87 the result is 0 (e^x would no longer be a normal float; softmax's -inf must give 0); above
// 88, x is clamped.
GLASSBOX_INLINE Vec8 exp8(Vec8 x) {
  const Vec8 lo = Vec8{} - 87.0f, hi = Vec8{} + 88.0f;
  const Vec8 x0 = x;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // n = round(x / ln2): truncate x / ln2 + 0.5 toward zero, then step down where that overshot.
  const Vec8 fx = x * 1.44269504088896341f + 0.5f;
  const Vec8i ni = __builtin_convertvector(fx, Vec8i);
  Vec8 n = __builtin_convertvector(ni, Vec8);
  n = n > fx ? n - 1.0f : n;
  const Vec8 r = x - n * 0.693359375f + n * 2.12194440e-4f;   // ln2 split in two for exactness
  Vec8 p = Vec8{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const Vec8i bits = (__builtin_convertvector(n, Vec8i) + 127) << 23;   // 2^n
  Vec8 pow2n;
  std::memcpy(&pow2n, &bits, sizeof pow2n);
  return x0 < lo ? Vec8{} : p * pow2n;
}

// x (n) = softmax(x): the max, e^(x - max) 8 lanes at a time with their sum, then a scale by
// 1 / sum. All -inf gives all zeros, as the reference. With kLogSum, returns log(sum_i e^x_i) of
// the x given (-inf for all -inf), which training's cross-entropy needs; else 0.
template <bool kLogSum = false>
GLASSBOX_INLINE float softmax_row(float* x, int n) {
  Vec8 vmax = Vec8{} - INFINITY;
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec8 v = load(x + i);
    vmax = v > vmax ? v : vmax;
  }
  float max = -INFINITY;
  for (int l = 0; l < kLanes; ++l) max = vmax[l] > max ? vmax[l] : max;
  for (; i < n; ++i) max = x[i] > max ? x[i] : max;
  if (max == -INFINITY) {   // nothing to attend to: no probability mass anywhere
    std::memset(x, 0, sizeof(float) * static_cast<std::size_t>(n));
    return -INFINITY;
  }
  Vec8 vsum = {};
  for (i = 0; i + kLanes <= n; i += kLanes) {
    const Vec8 e = exp8(load(x + i) - max);
    store(x + i, e);
    vsum += e;
  }
  float sum = hsum(vsum);
  if (i < n) {   // the last n % 8 through exp8 too (a zero-padded vector), not libm's expf, whose
                 // bits may differ between the native libc and WebAssembly's
    float tail[kLanes] = {};
    std::memcpy(tail, x + i, sizeof(float) * (n - i));
    store(tail, exp8(load(tail) - max));
    for (int j = 0; i < n; ++i, ++j) sum += (x[i] = tail[j]);
  }
  const float inv = 1.0f / sum;   // sum >= 1: the max element contributes e^0
  for (i = 0; i + kLanes <= n; i += kLanes) store(x + i, load(x + i) * inv);
  for (; i < n; ++i) x[i] *= inv;
  return kLogSum ? max + std::log(sum) : 0.0f;
}

// Writes the packed form in order (group by group, 4 floats of each row in turn), reading the 8
// rows of a group as 8 sequential streams: loading GPT-2 small packs 124M floats.
void pack_matrix(float* packed, const float* w, int N, int K) {
  const int N8 = N - N % kPackRows, kv = K - K % kAccLanes;
  float* o = packed;
  for (int n = 0; n < N8; n += kPackRows) {
    const float* rows = w + std::size_t(n) * K;
    for (int k = 0; k < kv; k += kAccLanes)
      for (int r = 0; r < kPackRows; ++r, o += kAccLanes)
        std::memcpy(o, rows + std::size_t(r) * K + k, sizeof(float) * kAccLanes);
    for (int r = 0; r < kPackRows; ++r, o += K - kv)
      std::memcpy(o, rows + std::size_t(r) * K + kv, sizeof(float) * (K - kv));
  }
  std::memcpy(o, w + std::size_t(N8) * K, sizeof(float) * std::size_t(N - N8) * K);
}

// GPT-2's Conv1D weights are stored (K,N), the transpose: each 4 x 8 block of the packed form is
// read as 4 runs of 8 consecutive floats; a group's K rows of the source (at most 3072 x 32 bytes)
// stay in cache for the next group, which reads the other half of their cache lines.
void pack_matrix_transposed(float* packed, const float* wt, int N, int K) {
  const int N8 = N - N % kPackRows, kv = K - K % kAccLanes;
  float* o = packed;
  for (int n = 0; n < N8; n += kPackRows) {
    for (int k = 0; k < kv; k += kAccLanes, o += kPackRows * kAccLanes)
      for (int l = 0; l < kAccLanes; ++l) {
        const float* src = wt + std::size_t(k + l) * N + n;   // w[n .. n+7][k + l]
        for (int r = 0; r < kPackRows; ++r) o[r * kAccLanes + l] = src[r];
      }
    for (int r = 0; r < kPackRows; ++r)
      for (int k = kv; k < K; ++k) *o++ = wt[std::size_t(k) * N + n + r];
  }
  for (int n = N8; n < N; ++n)
    for (int k = 0; k < K; ++k) *o++ = wt[std::size_t(k) * N + n];
}

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
GLASSBOX_CLONES void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
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

// p (n) *= factor: a head mask's entry on a row of probabilities (1: left as it is).
GLASSBOX_INLINE void apply_factor(float* p, int n, float factor) {
  if (factor != 1.0f)
    for (int j = 0; j < n; ++j) p[j] *= factor;
}

GLASSBOX_CLONES void attention(float* out, int out_stride, const float* q, int q_stride, const float* k, const float* v,
                               int kv_stride, int T, int pos0, int hd, float scale, float* probs, float* scratch,
                               AttentionMask mask, float factor) {
  const int n_keys = pos0 + T;
  for (int i = 0; i < T; ++i) {
    const int first = first_visible_key(mask, i, pos0), visible = visible_keys(mask, i, T, pos0);
    const int n = std::max(0, visible - first);   // keys first .. visible-1
    const float* qi = q + static_cast<std::size_t>(i) * q_stride;
    const std::size_t skip = static_cast<std::size_t>(first) * kv_stride;
    scores(scratch, qi, k + skip, kv_stride, n, hd, scale);
    softmax_row(scratch, n);
    apply_factor(scratch, n, factor);
    weighted_sum(out + static_cast<std::size_t>(i) * out_stride, scratch, v + skip, kv_stride, n, hd);
    if (probs) {   // capture: copy the row out, zeros where the mask hides a key
      float* row = probs + static_cast<std::size_t>(i) * n_keys;
      std::memset(row, 0, sizeof(float) * n_keys);
      std::memcpy(row + first, scratch, sizeof(float) * n);
    }
  }
}

// o (n) += p * v (n), elementwise: one step of weighted_sum's arithmetic.
GLASSBOX_INLINE void add_scaled(float* o, float p, const float* v, int n) {
  const int nv = n - n % kLanes;
  const Vec8 pv = simd::splat(p);
  for (int c = 0; c < nv; c += kLanes) store(o + c, load(o + c) + pv * load(v + c));
  for (int c = nv; c < n; ++c) o[c] += p * v[c];
}

// One query over heads side by side (kernels.h). Row after row, every head's part of the row in
// turn, so that the keys, then the values, are read as one sequential stream; the per-head kernel
// above reads `heads` short pieces of each row, one per call, far apart, and taking 4 rows at a
// time (4 streams) was slower too. Per head the arithmetic is attention()'s: scores4 / dot,
// softmax_row, and the weighted sum accumulated in out itself, j in order (weighted_sum's bits:
// out starts at zero, as its registers do).
GLASSBOX_CLONES void attention_one_query(float* out, const float* q, const float* k, const float* v, int kv_stride,
                                         int n_keys, int heads, int hd, float scale, float* probs, float* scratch,
                                         AttentionMask mask, const float* factors, bool shared_kv) {
  const int first = first_visible_key(mask, 0, n_keys - 1), visible = visible_keys(mask, 0, 1, n_keys - 1);
  const int n = std::max(0, visible - first);   // keys first .. visible-1; row j of scratch is key first + j
  if (shared_kv) {
    // One key/value head for every head here: each head in turn as attention() runs it, 4 keys at
    // a time and its weighted sum in registers. The rows the first head read are in cache for the
    // others; taken row by row across heads (below), a group of fewer than 4 heads would score one
    // dot product at a time and add into `out` in memory, which made attention a fifth of a
    // small grouped-query model's decoding.
    for (int h = 0; h < heads; ++h) {
      const float* kf = k + static_cast<std::size_t>(first) * kv_stride;
      float* sh = scratch + static_cast<std::size_t>(h) * n_keys;
      scores(sh, q + static_cast<std::size_t>(h) * hd, kf, kv_stride, n, hd, scale);
      softmax_row(sh, n);
      if (factors) apply_factor(sh, n, factors[h]);
      weighted_sum(out + static_cast<std::size_t>(h) * hd, sh, v + static_cast<std::size_t>(first) * kv_stride,
                   kv_stride, n, hd);
      if (probs) {
        float* row = probs + static_cast<std::size_t>(h) * n_keys;
        std::memset(row, 0, sizeof(float) * n_keys);
        std::memcpy(row + first, sh, sizeof(float) * n);
      }
    }
    return;
  }
  const std::size_t head_step = static_cast<std::size_t>(hd);
  const auto at = [&](const float* m, int j, int h) {
    return m + static_cast<std::size_t>(first + j) * kv_stride + static_cast<std::size_t>(h) * head_step;
  };
  const auto s = [&](int h) { return scratch + static_cast<std::size_t>(h) * n_keys; };
  const auto qh = [&](int h) { return q + static_cast<std::size_t>(h) * hd; };
  const int h4 = heads - heads % 4;
  for (int j = 0; j < n; ++j) {   // row j: 4 heads at a time, then the rest one by one
    int h = 0;
    for (; h < h4; h += 4)
      scores4({s(h) + j, s(h + 1) + j, s(h + 2) + j, s(h + 3) + j}, {qh(h), qh(h + 1), qh(h + 2), qh(h + 3)},
              {at(k, j, h), at(k, j, h + 1), at(k, j, h + 2), at(k, j, h + 3)}, hd, scale);
    for (; h < heads; ++h) s(h)[j] = dot(qh(h), at(k, j, h), hd) * scale;
  }
  for (int h = 0; h < heads; ++h) {
    softmax_row(s(h), n);
    if (factors) apply_factor(s(h), n, factors[h]);
  }

  std::memset(out, 0, sizeof(float) * static_cast<std::size_t>(heads) * hd);
  for (int j = 0; j < n; ++j)
    for (int h = 0; h < heads; ++h) add_scaled(out + static_cast<std::size_t>(h) * hd, s(h)[j], at(v, j, h), hd);
  if (probs) {   // (heads, n_keys), zeros where the mask hides a key
    for (int h = 0; h < heads; ++h) {
      float* row = probs + static_cast<std::size_t>(h) * n_keys;
      std::memset(row, 0, sizeof(float) * n_keys);
      std::memcpy(row + first, s(h), sizeof(float) * n);
    }
  }
}

// Per row: the mean, then the variance around it (two passes, as the reference: one pass of
// sum and sum of squares loses digits when the mean is large), then the affine map; vector lanes,
// then a horizontal sum, then the tail.
GLASSBOX_CLONES void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C,
                               float eps) {
  const int cv = C - C % kLanes;
  for (int t = 0; t < T; ++t) {
    const float* row = x + static_cast<std::size_t>(t) * C;
    float* o = out + static_cast<std::size_t>(t) * C;
    Vec8 acc = {};
    for (int c = 0; c < cv; c += kLanes) acc += load(row + c);
    float sum = hsum(acc);
    for (int c = cv; c < C; ++c) sum += row[c];
    const float mean = sum / static_cast<float>(C);
    acc = Vec8{};
    for (int c = 0; c < cv; c += kLanes) {
      const Vec8 d = load(row + c) - mean;
      acc += d * d;
    }
    float var = hsum(acc);   // biased variance, as torch.nn.LayerNorm
    for (int c = cv; c < C; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= static_cast<float>(C);
    const float rstd = 1.0f / std::sqrt(var + eps);
    for (int c = 0; c < cv; c += kLanes)
      store(o + c, (load(row + c) - mean) * rstd * load(weight + c) + load(bias + c));
    for (int c = cv; c < C; ++c) o[c] = (row[c] - mean) * rstd * weight[c] + bias[c];
  }
}
// Per row: the mean of squares (vector lanes, a horizontal sum, the tail), then the scale.
GLASSBOX_CLONES void rmsnorm(float* out, const float* x, const float* weight, int T, int C, float eps) {
  const int cv = C - C % kLanes;
  for (int t = 0; t < T; ++t) {
    const float* row = x + static_cast<std::size_t>(t) * C;
    float* o = out + static_cast<std::size_t>(t) * C;
    Vec8 acc = {};
    for (int c = 0; c < cv; c += kLanes) {
      const Vec8 v = load(row + c);
      acc += v * v;
    }
    float ms = hsum(acc);
    for (int c = cv; c < C; ++c) ms += row[c] * row[c];
    ms /= static_cast<float>(C);
    const float rstd = 1.0f / std::sqrt(ms + eps);
    for (int c = 0; c < cv; c += kLanes) store(o + c, load(weight + c) * (load(row + c) * rstd));
    for (int c = cv; c < C; ++c) o[c] = weight[c] * (row[c] * rstd);
  }
}

// A few multiplies per element of q and k, next to the products that made them: plain loops.
void rotary(float* x, int x_stride, int T, int heads, int hd, int rot_dim, const float* cos, const float* sin) {
  const int half = rot_dim / 2;
  for (int t = 0; t < T; ++t) {
    const float* c = cos + static_cast<std::size_t>(t) * half;
    const float* s = sin + static_cast<std::size_t>(t) * half;
    for (int h = 0; h < heads; ++h) {
      float* xh = x + static_cast<std::size_t>(t) * x_stride + static_cast<std::size_t>(h) * hd;
      for (int i = 0; i < half; ++i) {
        const float x1 = xh[i], x2 = xh[i + half];
        xh[i] = x1 * c[i] - x2 * s[i];
        xh[i + half] = x2 * c[i] + x1 * s[i];
      }
    }
  }
}

void multiply(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= y[i];
}

// The activations, 8 lanes at a time, from exp8 and arithmetic only: libm's tanhf, erff and expf
// are scalar calls (tanhf alone was a visible share of a prompt's time), and the native libc
// and WebAssembly's may round them differently, which would break native = WebAssembly. Each stays
// within a few 1e-7 * max(1, |x|) of the reference (tests/kernels_test.cpp).

// Hugging Face NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with
// tanh(u) = 1 - 2 / (e^2u + 1).
GLASSBOX_INLINE Vec8 gelu_tanh8(Vec8 v) {
  const float s = 0.7978845608028654f;   // sqrt(2 / pi)
  const Vec8 u = s * (v + 0.044715f * v * v * v);
  const Vec8 t = 1.0f - 2.0f / (exp8(2.0f * u) + 1.0f);
  return 0.5f * v * (1.0f + t);
}

// erf(x): a rational interpolant, x p(x^2) / q(x^2) with p of degree 6 and q of degree 4 (the one
// XLA and Eigen's generic_fast_erf_float use), accurate to a few ulp on [-4, 4]; beyond, erf(x)
// rounds to +-1 in single precision.
GLASSBOX_INLINE Vec8 erf8(Vec8 x) {
  x = x < -4.0f ? Vec8{} - 4.0f : x;
  x = x > 4.0f ? Vec8{} + 4.0f : x;
  const Vec8 x2 = x * x;
  Vec8 p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  Vec8 q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return x * p / q;
}

// torch.nn.functional.gelu (GELUActivation): 0.5 x (1 + erf(x / sqrt(2))).
GLASSBOX_INLINE Vec8 gelu_erf8(Vec8 v) { return 0.5f * v * (1.0f + erf8(v * 0.7071067811865476f)); }

// SiLU: x / (1 + e^-x); exp8 saturates, so the result is 0 or x far out.
GLASSBOX_INLINE Vec8 silu8(Vec8 v) { return v / (1.0f + exp8(-v)); }

// x[i] = f(x[i]). The last n % 8 values go through f too (in a zero-padded vector), so that a
// value's bits never depend on where it falls in the buffer (a batch's rows, a token decoded
// alone or in its prompt).
template <Vec8 (*f)(Vec8)>
GLASSBOX_INLINE void map8(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(x + i, f(load(x + i)));
  if (i < n) {
    float tail[kLanes] = {};
    std::memcpy(tail, x + i, sizeof(float) * (n - i));
    store(tail, f(load(tail)));
    std::memcpy(x + i, tail, sizeof(float) * (n - i));
  }
}

GLASSBOX_CLONES void gelu_tanh(float* x, std::size_t n) { map8<gelu_tanh8>(x, n); }
GLASSBOX_CLONES void gelu_erf(float* x, std::size_t n) { map8<gelu_erf8>(x, n); }
GLASSBOX_CLONES void silu(float* x, std::size_t n) { map8<silu8>(x, n); }
void relu(float* x, std::size_t n) { reference::relu(x, n); }
void add(float* x, const float* y, std::size_t n) { reference::add(x, y, n); }
GLASSBOX_CLONES void softmax(float* x, int n) { softmax_row(x, n); }
GLASSBOX_CLONES float softmax_log_sum(float* x, int n) { return softmax_row<true>(x, n); }

// The slope of gelu_tanh: 0.5 (1 + t) + 0.5 x (1 - t^2) du/dx, t = tanh(u). With e = e^2u,
// 1 + t = 2e / (e + 1) and 1 - t^2 = 4e / (e + 1)^2: no 1 + t that cancels to 0 where t is near -1.
GLASSBOX_INLINE Vec8 gelu_tanh_slope8(Vec8 v) {
  const float s = 0.7978845608028654f;   // sqrt(2 / pi)
  const Vec8 v2 = v * v;
  const Vec8 e = exp8(2.0f * s * (v + 0.044715f * v2 * v));
  const Vec8 r = 1.0f / (e + 1.0f);
  return e * r + 2.0f * v * (e * r * r) * s * (1.0f + 3.0f * 0.044715f * v2);
}

GLASSBOX_CLONES void gelu_tanh_backward(float* d, const float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(d + i, load(d + i) * gelu_tanh_slope8(load(x + i)));
  if (i < n) {   // the tail through the same vector code (zero-padded)
    float xt[kLanes] = {}, dt[kLanes] = {};
    std::memcpy(xt, x + i, sizeof(float) * (n - i));
    std::memcpy(dt, d + i, sizeof(float) * (n - i));
    store(dt, load(dt) * gelu_tanh_slope8(load(xt)));
    std::memcpy(d + i, dt, sizeof(float) * (n - i));
  }
}

}   // namespace glassbox::kernels
