// matmul_fused (kernels.h): the tiles of matmul_tiles.h compiled with FMA contraction
// (GLASSBOX_FUSED_OPTIONS for this file alone, CMakeLists.txt: -ffp-contract=fast, and at least
// -O2, below which GCC does not contract), so that each `acc += x * w` of the
// tiles and each `s += x * w` of a row's tail is one fused multiply-add, rounded once instead of
// twice. Every tile and the decoding path fuse the same operations in the same order, so a token
// decoded alone still equals its row in a prompt. Natively only (WebAssembly's SIMD128 has no
// FMA: there matmul.cpp makes matmul_fused matmul).
//
// Why: a prompt's products are bound by arithmetic, and an FMA does the work of a multiply and an
// add in one instruction (docs/performance.md, FMA). Decoding is bound by memory and gains
// nothing, but fuses too, for the bits above.
//
// Of the run-time clones (simd.h), x86-64-v3 and x86-64-v4 have FMA; the baseline (SSE2) has
// none, and there the same source compiles to separate multiplies and adds: matmul's bits.
#include "kernels/kernels.h"
#include "kernels/matmul_tiles.h"

namespace glassbox::kernels {

GLASSBOX_CLONES void matmul_fused(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
                                  int out_stride) {
  matmul_tiles(out, x, w, bias, T, K, N, out_stride);
}

bool has_fused_multiply_add() {
#if defined(__x86_64__) && !defined(GLASSBOX_NATIVE_ARCH)
  static const bool yes = __builtin_cpu_supports("x86-64-v3");   // whether the loader picks an FMA clone
  return yes;
#elif defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  return true;
#else
  return false;
#endif
}

}   // namespace glassbox::kernels
