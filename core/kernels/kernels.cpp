// Fast kernels: one portable source for native builds and WebAssembly (vector types in simd.h):
// attention, the norms, the activations, softmax. The matrix product is matmul.cpp's.
//
// Every kernel computes in one order on every target (dot products: 4 lanes, then a left-to-right
// horizontal sum, then a scalar tail; see simd.h), and the build disables FMA contraction, so
// native and WebAssembly give bit-identical results, and a token decoded alone has the same bits
// as its row in a prompt.
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

using simd::dot;
using simd::hsum;
using simd::kAccLanes;
using simd::kLanes;
using simd::load;
using simd::load4;
using simd::store;
using simd::Vec4;
using simd::Vec8;
using simd::Vec8i;

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
