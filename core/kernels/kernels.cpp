// Fast kernels: one portable source for native builds and WebAssembly.
//
// SIMD comes from GCC/Clang vector extensions rather than intrinsics: a `Vec8` of 8 floats is one
// AVX register natively, two SSE registers without AVX, and two SIMD128 registers under Emscripten.
// Every kernel accumulates in the same order on every target (8 lanes, then a left-to-right
// horizontal sum, then a scalar tail), and the build disables FMA contraction, so native and WASM
// produce bit-identical matrix products.
//
// By far the most time is spent in matmul: decoding one token reads every weight once, so it is
// bound by memory bandwidth; it processes 4 weight rows per pass over x so that each x load is
// reused 4 times and 4 independent accumulators hide the add latency.
#include <cstring>

#include "kernels.h"
#include "reference.h"

namespace glassbox::kernels {
namespace {

typedef float Vec8 __attribute__((vector_size(32)));
constexpr int kLanes = 8;

inline Vec8 load(const float* p) {
  Vec8 v;
  std::memcpy(&v, p, sizeof v);   // unaligned load; compiles to one (or two) vector loads
  return v;
}

inline void store(float* p, Vec8 v) { std::memcpy(p, &v, sizeof v); }

inline float hsum(Vec8 v) {
  float s = 0.0f;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}

// sum_k a[k] * b[k]
inline float dot(const float* a, const float* b, int n) {
  Vec8 acc = {};
  int k = 0;
  for (; k + kLanes <= n; k += kLanes) acc += load(a + k) * load(b + k);
  float s = hsum(acc);
  for (; k < n; ++k) s += a[k] * b[k];
  return s;
}

// y[k] += alpha * x[k]
inline void axpy(float* y, float alpha, const float* x, int n) {
  const Vec8 a = {alpha, alpha, alpha, alpha, alpha, alpha, alpha, alpha};
  int k = 0;
  for (; k + kLanes <= n; k += kLanes) store(y + k, load(y + k) + a * load(x + k));
  for (; k < n; ++k) y[k] += alpha * x[k];
}

}  // namespace

void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N) {
  const int kv = K - K % kLanes;   // vectorised part of each row
  int n = 0;
  for (; n + 4 <= N; n += 4) {
    const float* w0 = w + static_cast<std::size_t>(n) * K;
    const float* w1 = w0 + K;
    const float* w2 = w1 + K;
    const float* w3 = w2 + K;
    for (int t = 0; t < T; ++t) {
      const float* xt = x + static_cast<std::size_t>(t) * K;
      Vec8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
      for (int k = 0; k < kv; k += kLanes) {
        const Vec8 xv = load(xt + k);
        a0 += xv * load(w0 + k);
        a1 += xv * load(w1 + k);
        a2 += xv * load(w2 + k);
        a3 += xv * load(w3 + k);
      }
      float s0 = hsum(a0), s1 = hsum(a1), s2 = hsum(a2), s3 = hsum(a3);
      for (int k = kv; k < K; ++k) {
        s0 += xt[k] * w0[k];
        s1 += xt[k] * w1[k];
        s2 += xt[k] * w2[k];
        s3 += xt[k] * w3[k];
      }
      float* o = out + static_cast<std::size_t>(t) * N + n;
      o[0] = s0 + (bias ? bias[n] : 0.0f);
      o[1] = s1 + (bias ? bias[n + 1] : 0.0f);
      o[2] = s2 + (bias ? bias[n + 2] : 0.0f);
      o[3] = s3 + (bias ? bias[n + 3] : 0.0f);
    }
  }
  for (; n < N; ++n) {   // the last N % 4 rows of w, one at a time
    const float* wn = w + static_cast<std::size_t>(n) * K;
    for (int t = 0; t < T; ++t)
      out[static_cast<std::size_t>(t) * N + n] = dot(x + static_cast<std::size_t>(t) * K, wn, K) + (bias ? bias[n] : 0.0f);
  }
}

void attention(float* out, int out_stride, const float* q, int q_stride, const float* k,
               const float* v, int kv_stride, int T, int pos0, int hd, float scale, float* probs,
               float* scratch) {
  const int n_keys = pos0 + T;
  for (int i = 0; i < T; ++i) {
    const int visible = pos0 + i + 1;
    const float* qi = q + static_cast<std::size_t>(i) * q_stride;
    for (int j = 0; j < visible; ++j) scratch[j] = dot(qi, k + static_cast<std::size_t>(j) * kv_stride, hd) * scale;
    softmax(scratch, visible);
    float* oi = out + static_cast<std::size_t>(i) * out_stride;
    std::memset(oi, 0, sizeof(float) * hd);
    for (int j = 0; j < visible; ++j) axpy(oi, scratch[j], v + static_cast<std::size_t>(j) * kv_stride, hd);
    if (probs) {   // capture: copy the row out, zeros where the mask hides the future
      float* row = probs + static_cast<std::size_t>(i) * n_keys;
      std::memcpy(row, scratch, sizeof(float) * visible);
      std::memset(row + visible, 0, sizeof(float) * (n_keys - visible));
    }
  }
}

// Element-wise kernels are a small share of the time (O(T*C) against matmul's O(T*C*C)); until a
// benchmark says otherwise they are the reference loops.
void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C, float eps) {
  reference::layernorm(out, x, weight, bias, T, C, eps);
}
void gelu_tanh(float* x, std::size_t n) { reference::gelu_tanh(x, n); }
void gelu_erf(float* x, std::size_t n) { reference::gelu_erf(x, n); }
void relu(float* x, std::size_t n) { reference::relu(x, n); }
void silu(float* x, std::size_t n) { reference::silu(x, n); }
void add(float* x, const float* y, std::size_t n) { reference::add(x, y, n); }
void softmax(float* x, int n) { reference::softmax(x, n); }

}  // namespace glassbox::kernels
