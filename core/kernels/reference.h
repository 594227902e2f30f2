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
// One int8 block (quantized.h): d = max |v| / 127, q[i] = v[i] / d rounded half away from zero in
// [-127, 127], zeros past n (n <= 32); a NaN or infinity in the block: d NaN or infinite, q all 0.
void quantize_q8(std::int8_t* q, float* d, const float* v, int n);
void matmul_q8(float* out, const std::int8_t* xq, const float* xd, const std::int8_t* wq, const float* wd,
               const float* bias, int T, int Kp, int N);   // quantized.h

}   // namespace glassbox::kernels::reference
