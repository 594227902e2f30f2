// Scalar reference kernels: the plainest correct loop for each operation, never optimized.
// They define what the fast kernels (kernels.cpp, matmul.cpp) must compute; tests compare the two.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "kernels/reference.h"

namespace glassbox::kernels::reference {

void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N) {
  for (int t = 0; t < T; ++t) {
    for (int n = 0; n < N; ++n) {
      float sum = bias ? bias[n] : 0.0f;
      for (int k = 0; k < K; ++k) sum += x[t * K + k] * w[n * K + k];
      out[t * N + n] = sum;
    }
  }
}

// The packed layout (kernels.h), one element at a time: rows in whole groups of 8 have their
// columns in runs of 4, the 8 rows' runs side by side, then the group's last K % 4 columns row by
// row; the last N % 8 rows stay as they are.
void pack_matrix(float* packed, const float* w, int N, int K) {
  const int N8 = N - N % kPackRows, kv = K - K % 4;
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k) {
      std::size_t i;
      if (n >= N8) {
        i = std::size_t(n) * K + k;
      } else {
        const std::size_t group = std::size_t(n / kPackRows) * kPackRows * K;
        const int r = n % kPackRows;
        i = k < kv ? group + std::size_t(k / 4) * 4 * kPackRows + r * 4 + k % 4
                   : group + std::size_t(kv) * kPackRows + r * (K - kv) + (k - kv);
      }
      packed[i] = w[std::size_t(n) * K + k];
    }
  }
}

void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C, float eps) {
  for (int t = 0; t < T; ++t) {
    const float* row = x + t * C;
    float mean = 0.0f;
    for (int c = 0; c < C; ++c) mean += row[c];
    mean /= C;
    float var = 0.0f;   // biased variance, as torch.nn.LayerNorm
    for (int c = 0; c < C; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= C;
    const float rstd = 1.0f / std::sqrt(var + eps);
    for (int c = 0; c < C; ++c) out[t * C + c] = (row[c] - mean) * rstd * weight[c] + bias[c];
  }
}

void gelu_tanh(float* x, std::size_t n) {
  // Hugging Face NewGELUActivation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  const float s = std::sqrt(2.0f / static_cast<float>(M_PI));
  for (std::size_t i = 0; i < n; ++i)
    x[i] = 0.5f * x[i] * (1.0f + std::tanh(s * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

void gelu_erf(float* x, std::size_t n) {
  // torch.nn.functional.gelu: 0.5 x (1 + erf(x / sqrt(2)))
  for (std::size_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * static_cast<float>(M_SQRT1_2)));
}

void relu(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void silu(float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void add(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

void softmax(float* x, int n) {
  float max = -INFINITY;
  for (int i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  if (max == -INFINITY) {   // nothing to attend to: no probability mass anywhere
    for (int i = 0; i < n; ++i) x[i] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += x[i];
  }
  for (int i = 0; i < n; ++i) x[i] /= sum;   // sum >= 1: the max element contributes exp(0)
}

float softmax_log_sum(float* x, int n) {
  float max = -INFINITY;
  for (int i = 0; i < n; ++i) max = x[i] > max ? x[i] : max;
  float sum = 0.0f;
  if (max != -INFINITY)
    for (int i = 0; i < n; ++i) sum += std::exp(x[i] - max);
  softmax(x, n);
  return max == -INFINITY ? -INFINITY : max + std::log(sum);
}

// d/dx of 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3):
// 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) du/dx
void gelu_tanh_backward(float* d, const float* x, std::size_t n) {
  const float s = 0.7978845608028654f;
  for (std::size_t i = 0; i < n; ++i) {
    const float t = std::tanh(s * (x[i] + 0.044715f * x[i] * x[i] * x[i]));
    d[i] *= 0.5f * (1.0f + t) + 0.5f * x[i] * (1.0f - t * t) * s * (1.0f + 3.0f * 0.044715f * x[i] * x[i]);
  }
}

void attention(float* out, int out_stride, const float* q, int q_stride, const float* k, const float* v, int kv_stride,
               int T, int pos0, int hd, float scale, float* probs, float* scratch, AttentionMask mask, float factor) {
  const int n_keys = pos0 + T;
  for (int i = 0; i < T; ++i) {
    // keys first .. visible-1 (a window hides the ones before first)
    const int first = kernels::first_visible_key(mask, i, pos0), visible = visible_keys(mask, i, T, pos0);
    const float* qi = q + i * q_stride;
    for (int j = first; j < visible; ++j) {
      float dot = 0.0f;
      for (int d = 0; d < hd; ++d) dot += qi[d] * k[j * kv_stride + d];
      scratch[j - first] = dot * scale;
    }
    const int n = visible > first ? visible - first : 0;
    softmax(scratch, n);
    for (int j = 0; j < n; ++j) scratch[j] *= factor;   // a head mask's entry (HF head_mask)
    float* oi = out + i * out_stride;
    for (int d = 0; d < hd; ++d) oi[d] = 0.0f;
    for (int j = 0; j < n; ++j)
      for (int d = 0; d < hd; ++d) oi[d] += scratch[j] * v[(first + j) * kv_stride + d];
    if (probs) {
      for (int j = 0; j < n_keys; ++j) probs[i * n_keys + j] = j >= first && j < visible ? scratch[j - first] : 0.0f;
    }
  }
}

void rmsnorm(float* out, const float* x, const float* weight, int T, int C, float eps) {
  for (int t = 0; t < T; ++t) {
    const float* row = x + std::size_t(t) * C;
    float ms = 0.0f;   // variance = hidden_states.pow(2).mean(-1)
    for (int c = 0; c < C; ++c) ms += row[c] * row[c];
    ms /= C;
    const float rstd = 1.0f / std::sqrt(ms + eps);   // torch.rsqrt(variance + eps)
    for (int c = 0; c < C; ++c) out[std::size_t(t) * C + c] = weight[c] * (row[c] * rstd);
  }
}

void rotary(float* x, int x_stride, int T, int heads, int hd, int rot_dim, int pos0, const float* inv_freq) {
  const int half = rot_dim / 2;
  for (int t = 0; t < T; ++t) {
    // freqs = inv_freq @ position_ids, in float: the angle is one float product
    const float pos = static_cast<float>(pos0 + t);
    for (int h = 0; h < heads; ++h) {
      float* xh = x + std::size_t(t) * x_stride + std::size_t(h) * hd;
      for (int i = 0; i < half; ++i) {
        const float angle = pos * inv_freq[i];
        const float c = std::cos(angle), s = std::sin(angle);
        const float x1 = xh[i], x2 = xh[i + half];
        xh[i] = x1 * c - x2 * s;   // q * cos + rotate_half(q) * sin, rotate_half = (-x2, x1)
        xh[i + half] = x2 * c + x1 * s;
      }
    }
  }
}

void swiglu(float* out, const float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void repeat_kv(float* out, const float* kv, int S, int n_kv, int n_head, int hd) {
  const int group = n_head / n_kv;
  for (int s = 0; s < S; ++s)
    for (int h = 0; h < n_head; ++h)
      for (int d = 0; d < hd; ++d)
        out[(std::size_t(s) * n_head + h) * hd + d] = kv[(std::size_t(s) * n_kv + h / group) * hd + d];
}

void attention_gqa(float* out, const float* q, const float* k, const float* v, int T, int pos0, int n_head, int n_kv,
                   int hd, float scale, int window, float* probs) {
  const int n_keys = pos0 + T, group = n_head / n_kv;
  std::vector<float> p(n_keys);
  for (int h = 0; h < n_head; ++h) {
    const int kvh = h / group;   // the key/value head this query head shares
    for (int t = 0; t < T; ++t) {
      const int pos = pos0 + t, first = first_visible_key(pos, window);
      const float* qt = q + (std::size_t(t) * n_head + h) * hd;
      for (int j = first; j <= pos; ++j) {
        float dot = 0.0f;
        for (int d = 0; d < hd; ++d) dot += qt[d] * k[(std::size_t(j) * n_kv + kvh) * hd + d];
        p[j] = dot * scale;
      }
      softmax(p.data() + first, pos - first + 1);
      float* ot = out + (std::size_t(t) * n_head + h) * hd;
      for (int d = 0; d < hd; ++d) ot[d] = 0.0f;
      for (int j = first; j <= pos; ++j)
        for (int d = 0; d < hd; ++d) ot[d] += p[j] * v[(std::size_t(j) * n_kv + kvh) * hd + d];
      if (probs)
        for (int j = 0; j < n_keys; ++j)
          probs[(std::size_t(h) * T + t) * n_keys + j] = j >= first && j <= pos ? p[j] : 0.0f;
    }
  }
}

void quantize_q8(std::int8_t* q, float* d, const float* v, int n) {
  float amax = 0.0f;
  bool nan = false;
  for (int i = 0; i < n; ++i) {
    nan |= std::isnan(v[i]);
    amax = std::max(amax, std::abs(v[i]));
  }
  const float scale = nan ? NAN : amax / 127.0f;
  const float inv = scale > 0.0f && std::isfinite(scale) ? 1.0f / scale : 0.0f;
  for (int i = 0; i < kQ8Block; ++i) {
    const float x = i < n ? v[i] : 0.0f;
    const float r = std::isinf(inv) ? x / scale : x * inv;   // a subnormal scale has no finite inverse
    q[i] = std::isnan(r) ? 0 : static_cast<std::int8_t>(std::round(std::clamp(r, -127.0f, 127.0f)));
  }
  *d = scale;
}

// Int8 and int4 blocks: each block's dot product is an exact integer, scaled by the two blocks'
// scales; blocks are summed in order. `weight` reads w[n][k] from the stored layout.
template <class Weight>
void matmul_blocks(float* out, const std::int8_t* xq, const float* xd, Weight weight, const float* wd,
                   const float* bias, int T, int Kp, int N) {
  const Q8Shape s(N, Kp);
  const int blocks = s.blocks;
  for (int t = 0; t < T; ++t) {
    for (int n = 0; n < N; ++n) {
      float sum = 0.0f;
      for (int b = 0; b < blocks; ++b) {
        std::int32_t dot = 0;
        for (int i = 0; i < kQ8Block; ++i) {
          const int k = b * kQ8Block + i;
          dot += weight(s, n, k) * xq[std::size_t(t) * Kp + k];
        }
        const float dw = wd[q8_scale_index(s, n, b)];
        sum += static_cast<float>(dot) * (dw * xd[std::size_t(t) * blocks + b]);
      }
      out[std::size_t(t) * N + n] = sum + (bias ? bias[n] : 0.0f);
    }
  }
}

void matmul_q8(float* out, const std::int8_t* xq, const float* xd, const std::int8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N) {
  const auto weight = [&](const Q8Shape& s, int n, int k) { return q8_weight(wq, s, n, k); };
  matmul_blocks(out, xq, xd, weight, wd, bias, T, Kp, N);
}

void quantize_q4(std::int8_t* q, float* d, const float* v, int n) {
  float amax = 0.0f, m = 0.0f;
  bool nan = false;
  for (int i = 0; i < n; ++i) {
    nan |= std::isnan(v[i]);
    if (std::abs(v[i]) > amax) amax = std::abs(v[i]), m = v[i];
  }
  const float scale = nan ? NAN : m / -8.0f + 0.0f;   // + 0: an all-zero block's scale is 0, not -0
  const float inv = scale != 0.0f && std::isfinite(scale) ? 1.0f / scale : 0.0f;
  for (int i = 0; i < kQ8Block; ++i) {
    const float x = i < n ? v[i] : 0.0f;
    const float t = (std::isinf(inv) ? x / scale : x * inv) + 8.5f;   // a subnormal scale has no finite inverse
    q[i] = std::isnan(t) ? 0 : static_cast<std::int8_t>(static_cast<int>(std::clamp(t, 0.0f, 15.0f)) - 8);
  }
  *d = scale;
}

void matmul_q4(float* out, const std::int8_t* xq, const float* xd, const std::uint8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N) {
  const auto weight = [&](const Q8Shape& s, int n, int k) { return q4_weight(wq, s, n, k); };
  matmul_blocks(out, xq, xd, weight, wd, bias, T, Kp, N);
}

}   // namespace glassbox::kernels::reference
