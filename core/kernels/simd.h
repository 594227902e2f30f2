// The SIMD backend of the kernels: vector types and the few operations the kernels need, written
// once with GCC/Clang vector extensions. A `Vec8` of 8 floats is one AVX register natively, two
// SSE registers without AVX, and two SIMD128 registers under Emscripten, so one kernel source
// serves every target. Only kernels/*.cpp include this.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/tuning.h"

// Natively on x86-64 the hot kernels are compiled three times, for the baseline (SSE2), x86-64-v3
// (AVX2) and x86-64-v4 (AVX-512), and the loader picks the best one the CPU has (GCC/Clang
// target_clones, an ifunc): one binary runs everywhere and uses what it finds. The vector code is
// the same in each (no FMA contraction), so every clone gives the same bits.
// A build for this machine's CPU alone (GLASSBOX_NATIVE_ARCH, -march=native) has no clones.
#if defined(__x86_64__) && !defined(__EMSCRIPTEN__) && !defined(GLASSBOX_NATIVE_ARCH)
#define GLASSBOX_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define GLASSBOX_CLONES
#endif

// Helpers are always inlined: a helper compiled on its own would be the baseline (SSE2) version
// even inside the AVX clones.
#define GLASSBOX_INLINE __attribute__((always_inline)) inline

namespace glassbox::kernels::simd {

typedef float Vec8 __attribute__((vector_size(32)));
typedef std::int32_t Vec8i __attribute__((vector_size(32)));
typedef float Vec4 __attribute__((vector_size(16)));
typedef float Vec16 __attribute__((vector_size(64)));   // one AVX-512 register (matmul_tiles.h's prompt tiles)
typedef std::int32_t Vec4i __attribute__((vector_size(16)));
constexpr int kLanes = 8;

// Unaligned loads and stores; each compiles to one (or two) vector moves.
template <typename V, typename T>
GLASSBOX_INLINE V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
GLASSBOX_INLINE Vec8 load(const float* p) { return load<Vec8>(p); }
template <typename V, typename T>
GLASSBOX_INLINE void store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// Asks for the cache line at p to be fetched for reading ahead of its use, with the locality of
// kernels/tuning.h (by default the lowest, prefetchnta: a streamed weight is read once). A hint,
// never a fault; WebAssembly has no such instruction, and there it compiles to nothing.
GLASSBOX_INLINE void prefetch(const void* p) { __builtin_prefetch(p, 0, GLASSBOX_PREFETCH_HINT); }

GLASSBOX_INLINE Vec8 splat(float x) { return Vec8{} + x; }

// Lanes summed left to right.
template <typename V>
GLASSBOX_INLINE float hsum(V v) {
  float s = 0.0f;
  for (int i = 0; i < int(sizeof(V) / sizeof(float)); ++i) s += v[i];
  return s;
}

// Matrix products accumulate in 4 lanes on every target (lane i sums the products at k = i mod 4,
// in order; then the lanes left to right; then the tail), so native and WebAssembly give the same
// bits. The tiles hold two weight rows per 8-float vector, [row a, lanes 0-3 | row b, lanes 0-3]:
// one AVX register natively, two SIMD128 registers in WebAssembly, where a tile of 2 rows x 4
// inputs (8 registers) fits V8's 16 and 8-lane tiles had spilled to the stack on every step.
constexpr int kAccLanes = 4;

// [a | b] and [a | a]: two 4-float halves as one 8-float vector (vinsertf128 / vbroadcastf128).
GLASSBOX_INLINE Vec8 concat(Vec4 a, Vec4 b) { return __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7); }

GLASSBOX_INLINE Vec4 load4(const float* p) { return load<Vec4>(p); }

// sum_k a[k] * b[k], in kAccLanes lanes (the order every matrix product uses)
GLASSBOX_INLINE float dot(const float* a, const float* b, int n) {
  Vec4 acc = {};
  int k = 0;
  for (; k + kAccLanes <= n; k += kAccLanes) acc += load4(a + k) * load4(b + k);
  float s = hsum(acc);
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

}   // namespace glassbox::kernels::simd
