// The F32 matrix product (kernels.h): packing the weights, and matmul, the tiles of
// matmul_tiles.h compiled without FMA contraction (the library's -ffp-contract=off): each multiply
// and each add rounded, in one order on every target, so that native builds and WebAssembly give
// the same bits, and whatever the tile a row's result has the same bits (decoding a token equals
// its row in a prompt). matmul_fused.cpp compiles the same tiles with fused multiply-adds.
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/matmul_tiles.h"

namespace glassbox::kernels {

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

GLASSBOX_CLONES void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
                            int out_stride) {
  matmul_tiles(out, x, w, bias, T, K, N, out_stride);
}

#ifdef __EMSCRIPTEN__
// WebAssembly's SIMD128 has no fused multiply-add (matmul_fused.cpp is native only).
void matmul_fused(float* out, const float* x, const float* w, const float* bias, int T, int K, int N, int out_stride) {
  matmul(out, x, w, bias, T, K, N, out_stride);
}
bool has_fused_multiply_add() { return false; }
#endif

}   // namespace glassbox::kernels
