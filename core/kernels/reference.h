// Scalar reference kernels: the same operations and contracts as kernels.h, written as the
// plainest correct loops and never optimized. They define what the fast kernels must compute.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kernels.h"   // AttentionMask

namespace glassbox::kernels::reference {

void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N);
void pack_matrix(float* packed, const float* w, int N, int K);   // kernels.h's packed layout
void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C, float eps);
void gelu_tanh(float* x, std::size_t n);
void gelu_erf(float* x, std::size_t n);
void relu(float* x, std::size_t n);
void silu(float* x, std::size_t n);
void add(float* x, const float* y, std::size_t n);
void softmax(float* x, int n);
float softmax_log_sum(float* x, int n);
void gelu_tanh_backward(float* d, const float* x, std::size_t n);
void attention(float* out, int out_stride, const float* q, int q_stride, const float* k, const float* v, int kv_stride,
               int T, int pos0, int hd, float scale, float* probs, float* scratch, AttentionMask mask = {},
               float factor = 1.0f);

// The modern decoders' operations (llama, mistral, qwen2/3, gpt_neox, gpt_neo), so far only here:
// the forward pass and the fast kernels are to be checked against them.

// out (T,C) = x / sqrt(mean(x^2) + eps) * weight, per row (LlamaRMSNorm); out may alias x.
void rmsnorm(float* out, const float* x, const float* weight, int T, int C, float eps);
// Rotary positions, rotate-half convention (transformers' apply_rotary_pos_emb), in place:
//   x (T, heads*hd) row stride x_stride; row t sits at position pos0 + t. In each head, dims i and
//   i + rot_dim/2 (i < rot_dim/2) turn by the angle (pos0+t) * inv_freq[i]:
//   x_i' = x_i cos - x_{i+rot/2} sin,  x_{i+rot/2}' = x_{i+rot/2} cos + x_i sin;
//   dims rot_dim .. hd-1 pass unchanged (gpt_neox's partial rotary). inv_freq (rot_dim/2).
void rotary(float* x, int x_stride, int T, int heads, int hd, int rot_dim, int pos0, const float* inv_freq);
// out (n) = silu(gate) * up (Llama's MLP: act_fn(gate_proj(x)) * up_proj(x)); out may alias either.
void swiglu(float* out, const float* gate, const float* up, std::size_t n);
// Grouped-query attention's sharing, made explicit: kv (S, n_kv*hd) -> out (S, n_head*hd), query
// head h given key/value head h / (n_head / n_kv) (transformers' repeat_kv).
void repeat_kv(float* out, const float* kv, int S, int n_kv, int n_head, int hd);
// The first key a causal query at position `pos` sees with a window of `window` keys (0: none):
// keys first .. pos, window of them at most (mistral's sliding_window, gpt_neo's window_size:
// transformers masks key k when k <= pos - window).
inline int first_visible_key(int pos, int window) { return window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0; }
// Causal attention of all heads, query head h reading key/value head h / (n_head / n_kv):
//   q (T, n_head*hd)   k, v (pos0+T, n_kv*hd)   out (T, n_head*hd)
//   probs, if not null: (n_head, T, pos0+T), zero where a key is hidden
// Query t sits at position pos0+t and sees keys first_visible_key(pos0+t, window) .. pos0+t.
void attention_gqa(float* out, const float* q, const float* k, const float* v, int T, int pos0, int n_head, int n_kv,
                   int hd, float scale, int window, float* probs);

// One int8 block (quantized.h): d = max |v| / 127, q[i] = v[i] / d rounded half away from zero in
// [-127, 127], zeros past n (n <= 32); a NaN or infinity in the block: d NaN or infinite, q all 0.
void quantize_q8(std::int8_t* q, float* d, const float* v, int n);
void matmul_q8(float* out, const std::int8_t* xq, const float* xd, const std::int8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N);   // quantized.h
// One int4 block (quantized.h): m = the first value of largest magnitude, d = m / -8, q[i] =
// trunc(v[i] / d + 8.5) capped to [0, 15], minus 8 (so m's value is -8), zeros past n; a NaN or
// infinity in the block: d NaN or infinite, q all 0.
void quantize_q4(std::int8_t* q, float* d, const float* v, int n);
void matmul_q4(float* out, const std::int8_t* xq, const float* xd, const std::uint8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N);   // quantized.h

}   // namespace glassbox::kernels::reference
