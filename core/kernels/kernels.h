// The hot loops of the transformer, and nothing else: these functions know nothing of models,
// configs or files, only of float arrays and their shapes (row-major; shapes in comments).
//
// kernels.cpp and matmul.cpp implement them with portable SIMD (GCC/Clang vector extensions:
// SSE/AVX natively, SIMD128 under Emscripten). reference.h declares the same functions as plain
// scalar loops, which define what each operation computes; tests compare the two. The model
// calls these.
#pragma once

#include <algorithm>
#include <cstddef>

namespace glassbox::kernels {

// The weights of matmul are packed: a matrix w (N,K) in nn.Linear layout is stored in groups of
// kPackRows rows, each group interleaved so that one pass over it reads one contiguous stream:
//   for each group of 8 rows (N / 8 groups), for each k4 = 0, 4, .. < K - K % 4:
//       row 0's w[k4 .. k4+3], row 1's, .., row 7's          (32 floats)
//   then the group's last K % 4 columns, row by row          (8 x K % 4 floats)
// and the last N % 8 rows as they are (row-major). Decoding reads every weight once per token, so
// it is bound by memory bandwidth: one stream per 8 rows runs much faster than 8 row streams,
// natively and in WebAssembly (docs/performance.md, Decoding).
// The packed matrix has N * K floats; rows n0 .. N-1 of it, for n0 a multiple of 8, start at
// packed + n0 * K and are the packed form of those rows (how threads split a product).
constexpr int kPackRows = 8;
void pack_matrix(float* packed, const float* w, int N, int K);               // w (N,K) -> packed; no aliasing
void pack_matrix_transposed(float* packed, const float* wt, int N, int K);   // wt (K,N) = w^T -> packed
// Where w[n][k] is in the packed form (reading a row back: the experiments' unembedding rows).
inline std::size_t packed_index(int n, int k, int N, int K) {
  const int N8 = N - N % kPackRows, kv = K - K % 4;
  if (n >= N8) return std::size_t(n) * K + k;
  const std::size_t group = std::size_t(n / kPackRows) * kPackRows * K;
  const int r = n % kPackRows;
  return k < kv ? group + std::size_t(k / 4) * 4 * kPackRows + r * 4 + k % 4
                : group + std::size_t(kv) * kPackRows + r * (K - kv) + (k - kv);
}

// out (T,N) = x (T,K) @ w (N,K)^T + bias (N); bias may be null. w is packed (pack_matrix). Rows of
// out are out_stride apart (0: N), so that a slice of w's rows can fill a slice of out's columns.
void matmul(float* out, const float* x, const float* w, const float* bias, int T, int K, int N, int out_stride = 0);
// The same product with each multiply-add fused (FMA: rounded once, where matmul rounds the
// multiply and the add): faster in a prompt, bound by arithmetic, on a CPU whose FMA does the work of
// both in one instruction. The bits are its own, equal to matmul's within float rounding (tests
// check the bound), and, as matmul's, the same whatever the tile, thread or row count. On a CPU
// without FMA (x86-64 before x86-64-v3: AVX2, FMA3), and in WebAssembly, it is matmul.
void matmul_fused(float* out, const float* x, const float* w, const float* bias, int T, int K, int N,
                  int out_stride = 0);
// Whether matmul_fused fuses on this CPU.
bool has_fused_multiply_add();

// out (T,C) = (x - mean) / sqrt(var + eps) * weight + bias, per row; out may alias x.
void layernorm(float* out, const float* x, const float* weight, const float* bias, int T, int C, float eps);
// out (T,C) = x / sqrt(mean(x^2) + eps) * weight, per row (RMSNorm); out may alias x.
void rmsnorm(float* out, const float* x, const float* weight, int T, int C, float eps);

// Rotary positions, rotate-half convention, in place: x (T, heads*hd) row stride x_stride; in each
// head, dims i and i + rot_dim/2 (i < rot_dim/2) turn by row t's angle i, whose cosine and sine
// are cos, sin (T, rot_dim/2); dims rot_dim .. hd-1 pass unchanged. reference.h's rotary() computes
// the angles itself; the model computes them once per pass for every layer.
void rotary(float* x, int x_stride, int T, int heads, int hd, int rot_dim, const float* cos, const float* sin);

// Activations, in place over n values.
void gelu_tanh(float* x, std::size_t n);   // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
void gelu_erf(float* x, std::size_t n);    // 0.5 x (1 + erf(x / sqrt(2)))
void relu(float* x, std::size_t n);
void silu(float* x, std::size_t n);   // x / (1 + exp(-x))

// x (n) += y (n)
void add(float* x, const float* y, std::size_t n);
// x (n) *= y (n), elementwise (a gated MLP: act(gate) * up)
void multiply(float* x, const float* y, std::size_t n);

// x (n) = softmax(x), stable (max subtracted); all -inf gives all zeros.
void softmax(float* x, int n);

// For training. softmax_log_sum: x (n) = softmax(x), and returns log(sum_i e^x_i) of the x it was
// given (a cross-entropy is that minus the target's x; one libm log per call); all -inf gives
// all zeros and -inf.
// gelu_tanh_backward: d (n) *= the slope of gelu_tanh at x (n).
float softmax_log_sum(float* x, int n);
void gelu_tanh_backward(float* d, const float* x, std::size_t n);

// Which keys a query of attention sees. Causal (a decoder, GPT): query i, at position pos0+i,
// sees keys 0 .. pos0+i and never a later one; not causal (an encoder, BERT): every key. Either
// way only keys 0 .. keys-1 (keys < 0: all pos0+T): the rest are padding, which no query sees.
// A window W > 0 (causal only: sliding-window and local attention) also hides the keys more than
// W - 1 positions back: the query at position p sees keys p-W+1 .. p.
struct AttentionMask {
  bool causal = true;
  int keys = -1;
  int window = 0;
};

// Attention of one head. T queries sit at positions pos0 .. pos0+T-1; the mask says which of the
// pos0+T keys each sees (by default causal: query i sees keys 0 .. pos0+i; first_visible_key ..
// visible_keys - 1 in general). Rows are strided so
// that heads are read in place:
//   q    (T, hd)        row stride q_stride
//   k, v (pos0+T, hd)   row stride kv_stride
//   out  (T, hd)        row stride out_stride
// probs, if not null, receives the probabilities (T, pos0+T), zero where the mask hides a key.
// A query that sees no key at all gets zeros. scratch holds pos0+T floats. Without the causal
// mask pos0 only sets the number of keys, pos0+T: cross-attention over S keys passes S - T, which
// may be negative.
// factor: the head's probabilities are multiplied by it before they weigh the values (a head
// mask's entry; 1 leaves them as they are).
void attention(float* out, int out_stride, const float* q, int q_stride, const float* k, const float* v, int kv_stride,
               int T, int pos0, int hd, float scale, float* probs, float* scratch, AttentionMask mask = {},
               float factor = 1.0f);

// Attention of one query (decoding) for `heads` heads side by side: head h reads columns
// h*hd .. (h+1)*hd of q, of each key and value row, and of out. The query sits at position
// n_keys - 1; the mask says which keys it sees, as in attention(). Cost: each key and value row
// is read once for all the heads, in one piece (the memory system serves that much faster than
// one short piece per head). Per head, the same bits as attention() with T = 1.
//   q (heads*hd)   k, v (n_keys, ..) row stride kv_stride   out (heads*hd)
//   probs, if not null: (heads, n_keys)   scratch: heads * n_keys floats
//   factors, if not null: (heads), each head's as attention()'s factor
// shared_kv: every head reads columns 0 .. hd of k and v instead (query heads of one group sharing a
// key/value head: grouped-query attention), one head after another (the rows stay in cache).
void attention_one_query(float* out, const float* q, const float* k, const float* v, int kv_stride, int n_keys,
                         int heads, int hd, float scale, float* probs, float* scratch, AttentionMask mask = {},
                         const float* factors = nullptr, bool shared_kv = false);

// The keys query i (0 .. T-1) of attention sees: keys first_visible_key(..) .. visible_keys(..) - 1.
inline int visible_keys(const AttentionMask& mask, int i, int T, int pos0) {
  const int n = std::max(0, mask.causal ? pos0 + i + 1 : pos0 + T);
  return mask.keys >= 0 && mask.keys < n ? mask.keys : n;
}
inline int first_visible_key(const AttentionMask& mask, int i, int pos0) {
  return mask.causal && mask.window > 0 ? std::max(0, pos0 + i - mask.window + 1) : 0;
}

// Runs the kernels a forward pass spends its time in (the F32 and int8 products, layernorm, GELU,
// softmax, attention) on small made-up inputs, for a JIT. V8 runs
// WebAssembly first as its baseline compiler's code and compiles a function with its optimising
// compiler, in the background, once the function has run a while; a call that is already running
// stays on the slow code. So without this the first prompt after loading would run its first
// layers' products unoptimised, and take clearly longer than the later ones for this reason
// (docs/performance.md, The first token in WebAssembly).
// Model::from_parts calls it in WebAssembly before converting the weights, so that the compiler
// works on another core meanwhile. Natively it would only cost time. See warm_up.cpp.
void warm_up();

}   // namespace glassbox::kernels
