// The hot loops of the transformer, and nothing else: these functions know nothing of models,
// configs or files, only of float arrays and their shapes (row-major; shapes in comments).
//
// kernels.cpp implements them with portable SIMD (GCC/Clang vector extensions: SSE/AVX natively,
// SIMD128 under Emscripten). reference.h declares the same functions as plain scalar loops, which
// define what each operation computes; tests compare the two. The model calls these.
#pragma once

#include <cstddef>

namespace glassbox::kernels {

// out (T,N) = x (T,K) @ w (N,K)^T + bias (N); bias may be null. w is in nn.Linear layout. Rows of
// out are out_stride apart (0: N), so that a slice of w's rows can fill a slice of out's columns.
void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N, int out_stride = 0);

// out (T,C) = (x - mean) / sqrt(var + eps) * weight + bias, per row; out may alias x.
void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C, float eps);

// Activations, in place over n values.
void gelu_tanh(float* x, std::size_t n);   // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void gelu_erf(float* x, std::size_t n);    // 0.5 x (1 + erf(x / sqrt(2)))
void relu(float* x, std::size_t n);
void silu(float* x, std::size_t n);        // x / (1 + exp(-x))

// x (n) += y (n)
void add(float* x, const float* y, std::size_t n);

// x (n) = softmax(x), stable (max subtracted); all -inf gives all zeros.
void softmax(float* x, int n);

// Causal attention of one head. T queries sit at positions pos0 .. pos0+T-1; query i attends to
// keys 0 .. pos0+i. Rows are strided so that heads are read in place:
//   q    (T, hd)        row stride q_stride
//   k, v (pos0+T, hd)   row stride kv_stride
//   out  (T, hd)        row stride out_stride
// probs, if not null, receives the probabilities (T, pos0+T), zero above the diagonal.
// scratch holds pos0+T floats.
void attention(float* out, int out_stride, const float* q, int q_stride, const float* k, const float* v,
               int kv_stride, int T, int pos0, int hd, float scale, float* probs, float* scratch);

}  // namespace glassbox::kernels
