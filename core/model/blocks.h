// The transformer's blocks over the rows of one forward pass: the working arrays (Activations),
// the matrix products, and embeddings -> blocks -> the residual stream before the final norm, for
// every model type through the features of its config (glassbox/config.h). model.cpp builds the
// public passes (forward, forward_batch, classify) on these.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/kv_cache.h"
#include "glassbox/model.h"
#include "kernels/quantized.h"
#include "model/arena.h"
#include "model/weights.h"

namespace glassbox {

// Calls the hook, if any, with a named intermediate tensor.
inline void emit(const ForwardOptions& o, const char* name, int layer, std::array<int, 3> shape, int rank,
                 const float* data) {
  if (o.hook) (*o.hook)(NamedTensor{name, layer, rank, shape, data});
}

// The working state of one forward call over T rows (a batch's sequences one after another).
// Allocated per call: O(T*C + T*F) floats, small beside the weights every call streams (GPT-2
// small decoding: ~30 KB against 500 MB). n_keys: the most keys any sequence's query sees.
// Dq = n_head * head_dim, Dkv = kv_heads * head_dim (both C for gpt2).
// The (T, ...) arrays are one LargeBlock, zeroed: a prompt's arrays (GPT-2 small, 128 tokens:
// 4.7 MB) then sit on huge pages, first touched in 3 page faults instead of ~1,150, all of which
// the calling thread had paid for (docs/performance.md, Threads).
struct Activations {
  Activations(const ModelConfig& c, int T, int n_keys);
  static int q_width(const ModelConfig& c) { return c.n_head * c.head_dim(); }
  static int kv_width(const ModelConfig& c) { return c.kv_heads() * c.head_dim(); }
  int rows() const { return T; }
  std::span<float> x;            // (T, C)  residual stream
  std::span<float> h;            // (T, C)  normalised input of a sub-layer
  std::span<float> qkv;          // (T, Dq + 2 Dkv)  the projections, as the weights lay them out
  std::span<float> q;            // (T, Dq) the queries, head after head (normed, rotated)
  std::span<float> heads;        // (T, Dq) attention output before the projection
  std::span<float> branch;       // (T, C)  output of a sub-layer (attention or MLP)
  std::span<float> fc;           // (T, F)  MLP hidden layer (a gated MLP's gate)
  std::span<float> up;           // (T, F)  a gated MLP's up projection
  std::span<float> attn;         // (T, C)  a parallel block's attention output, beside its MLP's
  std::vector<float> cos, sin;   // (T, rotary_dim / 2) each row's rotary angles
  std::vector<float> scratch;    // (H, S)  one row of attention scores per head
  std::vector<float> probs;      // (H, T, S) only when a hook listens
  kernels::Q8Activations xq;     // the input of an int8 or int4 product, quantized
  int T;

 private:
  LargeBlock memory_;                          // x .. attn
  std::vector<std::vector<float>> separate_;   // the same under AddressSanitizer, one allocation each
};

// The steps between the products (norms, activations, quantizing a product's input) run row by
// row across the threads, as the products do: each row is computed alone, so the bits do not
// depend on the thread count. On one thread they are a few percent of a prompt's time, a share
// that more threads would not shrink (a serial 4% is 40% of the time on 16 threads). Their costs
// per value, in multiply-adds of a product (parallel_for's threshold, thread_pool.h), from a
// GPT-2 prompt's profile on AVX-512; a decoded token's rows stay below the threshold, on the
// calling thread.
constexpr double kActivationCost = 100, kNormCost = 60, kQuantizeCost = 50;
// A prompt's causal attention: each head's queries in blocks of this many rows, one job each
// (with one job per head, a 12-head model would leave threads idle past 12).
constexpr int kAttentionRows = 32;

// One matrix product of a group that reads the same input (q, k and v; a gated MLP's gate and up):
// out (T,N) with rows out_stride apart = in (T,K) @ w^T + bias.
struct Product {
  float* out;
  int out_stride;
  const Matrix& w;
  const float* bias;
};

// Runs products that share their input as one: the input quantized once (int8, int4), and the rows of
// every matrix split across the threads (glassbox/threads.h) in slices of 16 rows of one matrix
// each, in one parallel_for (one wake-up of the threads, where three products would take three).
// Every output is computed the same way whatever the slice, so the result does not depend on the
// thread count.
void linear(std::initializer_list<Product> products, const float* in, int T, Activations& a);

// out (T,N) = in (T,K) @ w^T + bias: F32, or int8 or int4 after quantizing `in` block by block.
void linear(float* out, const float* in, const Matrix& w, const float* bias, int T, Activations& a);

// One sequence of a forward pass, and its rows of the activations. A batch holds several, one
// after another, right-padded to one length T: the first `valid` tokens are real, the rest
// padding, which the attention mask hides from every query (so no real row depends on it).
struct Sequence {
  std::span<const std::int32_t> tokens;   // T ids, padding included
  int valid;                              // real tokens: tokens[0 .. valid-1]
  KVCache* cache;                         // the tokens go to positions cache->size() .. +T-1
  int T() const { return static_cast<int>(tokens.size()); }
};

// Whether self-attention hides later positions: unless asked not to, or the model is an encoder.
bool is_causal(const ModelConfig& c, const ForwardOptions& o);

// A reader of the residual stream between blocks: tap(layer, x (rows,C)), layer -1 for the
// embeddings, then each block's output. a.h is free to use while it runs.
using ResidualTap = std::function<void(int layer, const float* x)>;

// The blocks over every sequence's rows: embeddings -> n_layer blocks -> a.x (rows,C), the
// residual stream before the final norm. Each sequence's keys and values are written to its cache
// at positions cache->size() .. (reserved by the caller, who advances the cache after).
// inv_freq: rotary positions' frequencies (rotary_dim / 2; model/rotary.h), empty without them.
void run_blocks(const ModelConfig& c, const ModelWeights& w, std::span<const float> inv_freq,
                std::span<const Sequence> seqs, Activations& a, const ForwardOptions& o,
                const ResidualTap* tap = nullptr);

// run_blocks in two steps, for the experiments (activation patching) that start a pass part way:
// embed writes a.x (rows,C) = the embeddings and each row's rotary angles (a.cos, a.sin), from
// each sequence's position cache->size(); run_layers then runs blocks first .. n_layer-1 on a.x,
// whatever the caller put there (the residual stream entering block `first`). Blocks before
// `first` write nothing to the caches.
void embed(const ModelConfig& c, const ModelWeights& w, std::span<const float> inv_freq, std::span<const Sequence> seqs,
           Activations& a);

// A replacement inside one block, made as its tensor is computed (activation patching): rows
// row .. row+count-1 of the call's rows (every sequence's, one after another) become `values`,
// rows values_stride floats apart:
//   AttnOut / MlpOut: of the sub-layer's output (rows,C), C values a row;
//   HeadZ: of head `head`'s columns of the attention-weighted values (rows,Dq) before the output
//          projection, head_dim values a row.
struct BlockEdit {
  enum class Site { AttnOut, MlpOut, HeadZ } site;
  int layer;
  int row, count;
  int head;   // HeadZ
  const float* values;
  int values_stride;
};

void run_layers(const ModelConfig& c, const ModelWeights& w, std::span<const Sequence> seqs, Activations& a,
                const ForwardOptions& o, int first, std::span<const BlockEdit> edits = {},
                const ResidualTap* tap = nullptr);

// rows (R,C) of the residual stream -> the final hidden states (R,C) the heads read: the final
// norm into a.h, or the rows themselves (openai-gpt has none).
const float* final_norm(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, Activations& a);

}   // namespace glassbox
