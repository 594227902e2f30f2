#include "glassbox/model.h"

#include <algorithm>
#include <cmath>

#include "glassbox/error.h"
#include "model/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/quantized.h"
#include "model/non_finite.h"
#include "model/rotary.h"
#include "model/weights.h"

namespace glassbox {

struct Model::Impl {
  ModelConfig config;
  std::string config_json;
  Quantization quantization = Quantization::None;
  ModelWeights w;
  std::vector<float> inv_freq;   // (rotary_dim / 2) rotary positions' frequencies, else empty
  int context = 0;               // the most positions a sequence holds
};

Quantization parse_quantization(std::string_view name) {
  if (name == "none") return Quantization::None;
  if (name == "int8") return Quantization::Int8;
  throw InvalidArgument("unknown quantization '" + std::string(name) + "' (use none or int8)");
}

const char* quantization_name(Quantization q) { return q == Quantization::Int8 ? "int8" : "none"; }

namespace {

// Calls the hook, if any, with a named intermediate tensor.
void emit(const ForwardOptions& o, const char* name, int layer, std::array<int, 3> shape, int rank, const float* data) {
  if (o.hook) (*o.hook)(NamedTensor{name, layer, rank, shape, data});
}

// The working state of one forward call over T rows (a batch's sequences one after another).
// Allocated per call: O(T*C + T*F) floats, small beside the weights every call streams (GPT-2
// small decoding: ~30 KB against 500 MB). n_keys: the most keys any sequence's query sees.
// Dq = n_head * head_dim, Dkv = kv_heads * head_dim (both C for gpt2).
struct Activations {
  Activations(const ModelConfig& c, int T, int n_keys)
      : x(std::size_t(T) * c.n_embd),
        h(x.size()),
        qkv(std::size_t(T) * (q_width(c) + 2 * kv_width(c))),
        q(std::size_t(T) * q_width(c)),
        heads(q.size()),
        branch(x.size()),
        fc(std::size_t(T) * c.n_inner),
        up(c.mlp == Mlp::Gated ? fc.size() : 0),
        attn(c.parallel_residual ? x.size() : 0),
        scratch(std::size_t(c.n_head) * n_keys),
        T(T) {}
  static int q_width(const ModelConfig& c) { return c.n_head * c.head_dim(); }
  static int kv_width(const ModelConfig& c) { return c.kv_heads() * c.head_dim(); }
  int rows() const { return T; }
  std::vector<float> x;          // (T, C)  residual stream
  std::vector<float> h;          // (T, C)  normalised input of a sub-layer
  std::vector<float> qkv;        // (T, Dq + 2 Dkv)  the projections, as the weights lay them out
  std::vector<float> q;          // (T, Dq) the queries, head after head (normed, rotated)
  std::vector<float> heads;      // (T, Dq) attention output before the projection
  std::vector<float> branch;     // (T, C)  output of a sub-layer (attention or MLP)
  std::vector<float> fc;         // (T, F)  MLP hidden layer (a gated MLP's gate)
  std::vector<float> up;         // (T, F)  a gated MLP's up projection
  std::vector<float> attn;       // (T, C)  a parallel block's attention output, beside its MLP's
  std::vector<float> cos, sin;   // (T, rotary_dim / 2) each row's rotary angles
  std::vector<float> scratch;    // (H, S)  one row of attention scores per head
  std::vector<float> probs;      // (H, T, S) only when a hook listens
  kernels::Q8Activations xq;     // the input of an int8 product, quantized
  int T;
};

// One matrix product of a group that reads the same input (q, k and v; a gated MLP's gate and up):
// out (T,N) with rows out_stride apart = in (T,K) @ w^T + bias.
struct Product {
  float* out;
  int out_stride;
  const Matrix& w;
  const float* bias;
};

// Runs products that share their input as one: the input quantized once (int8), and the rows of
// every matrix split across the threads (glassbox/threads.h) in slices of 16 rows of one matrix
// each, in one parallel_for (one wake-up of the threads, where three products would take three).
// Every output is computed the same way whatever the slice, so the result does not depend on the
// thread count.
void linear(std::initializer_list<Product> products, const float* in, int T, Activations& a) {
  constexpr int kGrain = 16;   // a multiple of the kernels' row tiles (8 for F32, 4 for int8)
  const int K = products.begin()->w.K;
  const bool int8 = products.begin()->w.f32 == nullptr;
  if (int8) kernels::quantize_activations_q8(a.xq, in, T, K);
  // The matrices' rows one after another, each rounded up to whole slices.
  int total = 0;
  double work = 0;
  for (const Product& p : products) {
    total += (p.w.N + kGrain - 1) / kGrain * kGrain;
    work += double(T) * p.w.N * K;
  }
  parallel_for(total, kGrain, work, [&](int n0, int n1) {
    int first = 0;   // where this product's rows start in the total
    for (const Product& p : products) {
      const int lo = std::max(n0 - first, 0), hi = std::min(n1 - first, p.w.N);
      first += (p.w.N + kGrain - 1) / kGrain * kGrain;
      if (lo >= hi) continue;
      const float* bias = p.bias ? p.bias + lo : nullptr;
      if (!int8) {
        kernels::matmul(p.out + lo, in, p.w.f32 + std::size_t(lo) * K, bias, T, K, hi - lo, p.out_stride);
      } else {
        const kernels::Q8Shape s(p.w.N, K);
        kernels::matmul_q8(p.out + lo, a.xq, p.w.q + std::size_t(lo) * s.Kp, p.w.d + std::size_t(lo) * s.blocks, bias,
                           hi - lo, p.out_stride);
      }
    }
  });
}

// out (T,N) = in (T,K) @ w^T + bias: F32, or int8 after quantizing `in` block by block.
void linear(float* out, const float* in, const Matrix& w, const float* bias, int T, Activations& a) {
  linear({{out, w.N, w, bias}}, in, T, a);
}

void activation(Activation a, float* x, std::size_t n) {
  switch (a) {
    case Activation::GeluTanh:
      return kernels::gelu_tanh(x, n);
    case Activation::GeluErf:
      return kernels::gelu_erf(x, n);
    case Activation::Relu:
      return kernels::relu(x, n);
    case Activation::Silu:
      return kernels::silu(x, n);
  }
}

// One sequence of a forward pass, and its rows of the activations. A batch holds several, one
// after another, right-padded to one length T: the first `valid` tokens are real, the rest
// padding, which the attention mask hides from every query (so no real row depends on it).
struct Sequence {
  std::span<const std::int32_t> tokens;   // T ids, padding included
  int valid;                              // real tokens: tokens[0 .. valid-1]
  KVCache* cache;                         // the tokens go to positions cache->size() .. +T-1
  int T() const { return static_cast<int>(tokens.size()); }
};

// Hugging Face GPT2Attention: scores / sqrt(head_dim) [/ (layer_idx + 1)], self and cross.
float attention_scale(const ModelConfig& c, int l) {
  float scale = c.scale_attn_weights ? 1.0f / std::sqrt(static_cast<float>(c.head_dim())) : 1.0f;
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<float>(l + 1);
  return scale;
}

// Whether self-attention hides later positions: unless asked not to, or the model is an encoder.
bool is_causal(const ModelConfig& c, const ForwardOptions& o) { return o.causal && !c.bidirectional; }

// q, k and v of a sequence's T rows of a.qkv (rows, Dq + 2 Dkv, as the weights lay them out:
// QkvLayout) -> q (T, Dq) and the cache's keys and values at positions pos0 .. (S, Dkv), each
// head's part normed (qwen3's q_norm, k_norm) and turned by its position (rotary).
void place_qkv(const ModelConfig& c, const LayerWeights& L, const float* qkv, int T, int pos0, float* q, float* K,
               float* V, const float* cos, const float* sin) {
  const int H = c.n_head, G = c.kv_heads(), hd = c.head_dim(), Dq = H * hd, Dkv = G * hd, W = Dq + 2 * Dkv;
  float* k = K + std::size_t(pos0) * Dkv;
  float* v = V + std::size_t(pos0) * Dkv;
  for (int t = 0; t < T; ++t) {
    const float* row = qkv + std::size_t(t) * W;
    if (qkv_layout(c) != QkvLayout::FusedPerHead) {   // [q | k | v]
      std::copy(row, row + Dq, q + std::size_t(t) * Dq);
      std::copy(row + Dq, row + Dq + Dkv, k + std::size_t(t) * Dkv);
      std::copy(row + Dq + Dkv, row + W, v + std::size_t(t) * Dkv);
    } else {   // [q_h k_h v_h] head after head (gpt_neox: as many key/value heads as query heads)
      for (int h = 0; h < H; ++h) {
        const float* part = row + std::size_t(h) * 3 * hd;
        std::copy(part, part + hd, q + std::size_t(t) * Dq + h * hd);
        std::copy(part + hd, part + 2 * hd, k + std::size_t(t) * Dkv + h * hd);
        std::copy(part + 2 * hd, part + 3 * hd, v + std::size_t(t) * Dkv + h * hd);
      }
    }
  }
  const float eps = static_cast<float>(c.layer_norm_epsilon);
  if (L.q_norm_w) kernels::rmsnorm(q, q, L.q_norm_w, T * H, hd, eps);   // rows of one head's hd values
  if (L.k_norm_w) kernels::rmsnorm(k, k, L.k_norm_w, T * G, hd, eps);
  if (c.position_encoding == PositionEncoding::Rotary) {
    kernels::rotary(q, Dq, T, H, hd, c.rotary_dim(), cos, sin);
    kernels::rotary(k, Dkv, T, G, hd, c.rotary_dim(), cos, sin);
  }
}

// Self-attention of layer l over every sequence (causal unless is_causal says not): in (rows,C) ->
// a.branch (rows,C). The projections run on all rows at once (one pass over the weights for a
// whole batch); each sequence appends its K and V to its cache and attends only within itself.
// Query head h reads key/value head h / (n_head / kv_heads) (grouped-query attention).
void attention_block(const ModelConfig& c, const LayerWeights& L, int l, const float* in,
                     std::span<const Sequence> seqs, Activations& a, const ForwardOptions& o) {
  const int H = c.n_head, hd = c.head_dim(), rows = a.rows();
  const int Dq = Activations::q_width(c), Dkv = Activations::kv_width(c), W = Dq + 2 * Dkv;
  const int group = H / c.kv_heads();         // query heads per key/value head
  if (qkv_layout(c) == QkvLayout::Separate)   // (rows,C) -> (rows,Dq+2Dkv) = [q | k | v]
    linear({{a.qkv.data(), W, L.q_w, L.q_b},
            {a.qkv.data() + Dq, W, L.k_w, L.k_b},
            {a.qkv.data() + Dq + Dkv, W, L.v_w, L.v_b}},
           in, rows, a);
  else
    linear(a.qkv.data(), in, L.qkv_w, L.qkv_b, rows, a);
  const float scale = attention_scale(c, l);
  const int half = c.rotary_dim() / 2;
  std::size_t row0 = 0;
  for (const Sequence& seq : seqs) {
    const int T = seq.T(), pos0 = seq.cache->size(), S = pos0 + T;
    float* K = seq.cache->keys(l);
    float* V = seq.cache->values(l);
    float* q = a.q.data() + row0 * Dq;
    place_qkv(c, L, a.qkv.data() + row0 * W, T, pos0, q, K, V, a.cos.data() + row0 * half, a.sin.data() + row0 * half);
    // padding always hidden; a window where the layer has one
    const kernels::AttentionMask mask{is_causal(c, o), pos0 + seq.valid, c.attention_window(l)};
    const float* factors = o.head_mask.empty() ? nullptr : o.head_mask.data() + std::size_t(l) * H;   // (H)
    if (o.hook) a.probs.assign(std::size_t(H) * T * S, 0.0f);
    float* heads = a.heads.data() + row0 * Dq;
    const double work = 2.0 * T * S * Dq;            // scores and weighted sums over every head
    parallel_for(H, 1, work, [&](int h0, int h1) {   // head h reads columns h*hd .. of q, (h/group)*hd .. of k, v
      if (T == 1) {   // decoding: each cache row read once for the heads of one key/value head
        for (int h = h0; h < h1;) {
          const int g = h / group, end = group == 1 ? h1 : std::min(h1, (g + 1) * group);
          kernels::attention_one_query(heads + h * hd, q + h * hd, K + g * hd, V + g * hd, Dkv, S, end - h, hd, scale,
                                       o.hook ? a.probs.data() + std::size_t(h) * S : nullptr,
                                       a.scratch.data() + std::size_t(h) * S, mask, factors ? factors + h : nullptr,
                                       /*shared_kv=*/group > 1);
          h = end;
        }
        return;
      }
      for (int h = h0; h < h1; ++h) {
        const int g = h / group;
        float* probs = o.hook ? a.probs.data() + std::size_t(h) * T * S : nullptr;
        kernels::attention(heads + h * hd, Dq, q + h * hd, Dq, K + g * hd, V + g * hd, Dkv, T, pos0, hd, scale, probs,
                           a.scratch.data() + std::size_t(h) * S, mask, factors ? factors[h] : 1.0f);
      }
    });
    emit(o, "attn_probs", l, {H, T, S}, 3, a.probs.data());
    row0 += std::size_t(T);
  }
  linear(a.branch.data(), a.heads.data(), L.proj_w, L.proj_b, rows, a);   // (rows,Dq) -> (rows,C)
  emit(o, "attn_out", l, {rows, c.n_embd}, 2, a.branch.data());
}

// Cross-attention of layer l (models with add_cross_attention): in (rows,C) -> a.branch (rows,C).
// Queries from every row, keys and values from the encoder's outputs enc (S,C), all of which every
// query sees: the same attention kernel, not causal, over S keys. Cost: the encoder's keys and
// values (S x C x 2C multiply-adds per layer) are recomputed on every call, also when decoding
// token by token; a model that decodes long outputs against one encoder would keep them instead.
void cross_attention_block(const ModelConfig& c, const LayerWeights& L, int l, const float* in,
                           std::span<const Sequence> seqs, std::span<const float> enc, Activations& a,
                           const ForwardOptions& o) {
  const int C = c.n_embd, H = c.n_head, hd = c.head_dim(), rows = a.rows();
  const int S = static_cast<int>(enc.size() / std::size_t(C));
  std::vector<float> q(std::size_t(rows) * C), kv(std::size_t(S) * 2 * C), scratch(std::size_t(H) * S);
  linear(q.data(), in, L.cross_q_w, L.cross_q_b, rows, a);           // (rows,C) -> (rows,C)
  linear(kv.data(), enc.data(), L.cross_kv_w, L.cross_kv_b, S, a);   // (S,C) -> (S,2C) = [k | v]
  const float scale = attention_scale(c, l);
  // Hugging Face gives a block's head mask to its cross-attention too.
  const float* factors = o.head_mask.empty() ? nullptr : o.head_mask.data() + std::size_t(l) * H;   // (H)
  std::size_t row0 = 0;
  for (const Sequence& seq : seqs) {
    const int T = seq.T();
    parallel_for(H, 1, 2.0 * T * S * C, [&](int h0, int h1) {
      for (int h = h0; h < h1; ++h)
        kernels::attention(a.heads.data() + row0 * C + h * hd, C, q.data() + row0 * C + h * hd, C, kv.data() + h * hd,
                           kv.data() + C + h * hd, 2 * C, T, S - T, hd, scale, nullptr,
                           scratch.data() + std::size_t(h) * S, {false, -1}, factors ? factors[h] : 1.0f);
    });
    row0 += std::size_t(T);
  }
  linear(a.branch.data(), a.heads.data(), L.cross_proj_w, L.cross_proj_b, rows, a);   // (rows,C) -> (rows,C)
}

// MLP of a block: in (T,C) -> (T,F) -> activation -> a.branch (T,C); gated: act(gate(in)) * up(in).
void mlp_block(const ModelConfig& c, const LayerWeights& L, int l, const float* in, int T, Activations& a,
               const ForwardOptions& o) {
  const int F = c.n_inner;
  if (c.mlp == Mlp::Gated) {   // (T,C) -> (T,F) twice
    linear({{a.fc.data(), F, L.gate_w, L.gate_b}, {a.up.data(), F, L.fc_w, L.fc_b}}, in, T, a);
    activation(c.activation, a.fc.data(), a.fc.size());
    kernels::multiply(a.fc.data(), a.up.data(), a.fc.size());
  } else {
    linear(a.fc.data(), in, L.fc_w, L.fc_b, T, a);   // (T,C) -> (T,F)
    activation(c.activation, a.fc.data(), a.fc.size());
  }
  linear(a.branch.data(), a.fc.data(), L.fc_proj_w, L.fc_proj_b, T, a);   // (T,F) -> (T,C)
  emit(o, "mlp_out", l, {T, c.n_embd}, 2, a.branch.data());
}

// A block's norm: LayerNorm or RMSNorm (config.h's Norm), in (T,C) -> out (T,C); out may alias in.
void norm(const ModelConfig& c, float* out, const float* in, const float* weight, const float* bias, int T) {
  const float eps = static_cast<float>(c.layer_norm_epsilon);
  if (c.norm == Norm::RMSNorm)
    kernels::rmsnorm(out, in, weight, T, c.n_embd, eps);
  else
    kernels::layernorm(out, in, weight, bias, T, c.n_embd, eps);
}

// Throws InvalidArgument unless `tokens` can run at positions pos0 ..: not empty, within the
// context, every id in the vocabulary. `what` names the sequence in a batch ("" otherwise).
void check_tokens(const ModelConfig& c, int context, std::span<const std::int32_t> tokens, int pos0,
                  const std::string& what) {
  if (tokens.empty()) throw InvalidArgument(what + "no tokens to run");
  if (tokens.size() > static_cast<std::size_t>(context - pos0))
    throw InvalidArgument(what + std::to_string(pos0 + tokens.size()) + " tokens do not fit in the context of " +
                          std::to_string(context) + " positions");
  for (std::int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size)
      throw InvalidArgument(what + "token id " + std::to_string(id) + " is out of range: the vocabulary has ids 0.." +
                            std::to_string(c.vocab_size - 1));
}

// A reader of the residual stream between blocks: tap(layer, x (rows,C)), layer -1 for the
// embeddings, then each block's output. a.h is free to use while it runs.
using ResidualTap = std::function<void(int layer, const float* x)>;

// The blocks over every sequence's rows: embeddings -> n_layer blocks -> a.x (rows,C), the
// residual stream before the final norm. Each sequence's keys and values are written to its cache
// at positions cache->size() .. (reserved by the caller, who advances the cache after).
void run_blocks(const ModelConfig& c, const ModelWeights& w, std::span<const float> inv_freq,
                std::span<const Sequence> seqs, Activations& a, const ForwardOptions& o,
                const ResidualTap* tap = nullptr) {
  const int C = c.n_embd, T = a.rows(), half = static_cast<int>(inv_freq.size());
  // x (T,C) = wte[token] (+ wpe[position]); with rotary positions, each row's angles instead
  a.cos.resize(std::size_t(T) * half);
  a.sin.resize(a.cos.size());
  std::size_t row = 0;
  for (const Sequence& seq : seqs) {
    for (int t = 0; t < seq.T(); ++t, ++row) {
      const int pos = seq.cache->size() + t;
      const float* te = w.wte + std::size_t(seq.tokens[t]) * C;
      float* x = a.x.data() + row * C;
      if (w.wpe) {
        const float* pe = w.wpe + std::size_t(pos) * C;
        for (int i = 0; i < C; ++i) x[i] = te[i] + pe[i];
      } else {
        std::copy(te, te + C, x);
      }
      // freqs = inv_freq @ position: one float product per angle, as transformers computes it;
      // its cosine and sine in double, rounded once (the same floats from every C library)
      for (int i = 0; i < half; ++i) {
        const double angle = static_cast<float>(pos) * inv_freq[i];
        a.cos[row * half + i] = static_cast<float>(std::cos(angle));
        a.sin[row * half + i] = static_cast<float>(std::sin(angle));
      }
    }
  }
  emit(o, "inp_embd", -1, {T, C}, 2, a.x.data());
  if (tap) (*tap)(-1, a.x.data());

  for (int l = 0; l < c.n_layer; ++l) {
    const LayerWeights& L = w.layers[l];
    if (c.architecture == Architecture::OpenAIGPT) {
      // post-LN (original GPT): x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))
      attention_block(c, L, l, a.x.data(), seqs, a, o);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      norm(c, a.x.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      mlp_block(c, L, l, a.x.data(), T, a, o);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      norm(c, a.x.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
    } else if (c.parallel_residual) {
      // parallel (gpt_neox): x = x + (mlp(ln_2(x)) + attn(ln_1(x)))
      norm(c, a.h.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      attention_block(c, L, l, a.h.data(), seqs, a, o);
      std::copy(a.branch.begin(), a.branch.end(), a.attn.begin());
      norm(c, a.h.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
      mlp_block(c, L, l, a.h.data(), T, a, o);
      kernels::add(a.branch.data(), a.attn.data(), a.branch.size());
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
    } else {
      // pre-norm: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
      norm(c, a.h.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      attention_block(c, L, l, a.h.data(), seqs, a, o);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      if (c.add_cross_attention && !o.encoder_states.empty()) {   // x = x + cross(ln_cross(x), encoder)
        norm(c, a.h.data(), a.x.data(), L.ln_cross_w, L.ln_cross_b, T);
        cross_attention_block(c, L, l, a.h.data(), seqs, o.encoder_states, a, o);
        kernels::add(a.x.data(), a.branch.data(), a.x.size());
      }
      norm(c, a.h.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
      mlp_block(c, L, l, a.h.data(), T, a, o);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
    }
    emit(o, "block_out", l, {T, C}, 2, a.x.data());
    if (tap) (*tap)(l, a.x.data());
  }
}

// rows (R,C) of the residual stream -> the final hidden states (R,C) the heads read: the final
// norm into a.h, or the rows themselves (openai-gpt has none).
const float* final_norm(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, Activations& a) {
  if (!w.ln_f_w) return rows;
  norm(c, a.h.data(), rows, w.ln_f_w, w.ln_f_b, R);
  return a.h.data();
}

// rows (R,C) of the residual stream -> [final norm] -> logits (R,V) through the tied LM head,
// the largest matmul: only the rows asked for go through it.
std::vector<float> lm_logits(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, Activations& a,
                             const ForwardOptions& o) {
  rows = final_norm(c, w, rows, R, a);
  std::vector<float> logits(std::size_t(R) * c.vocab_size);
  linear(logits.data(), rows, w.lm_head, nullptr, R, a);   // (R,C) @ lm_head^T -> (R,V)
  emit(o, "logits", -1, {R, c.vocab_size}, 2, logits.data());
  return logits;
}

// The logit lens of one block's output, rows (R,C): each row's `k` most probable next tokens as
// the model's head would give them (final norm, LM head), appended to *out; ids from
// tokenizer_size on (no token) never among them. Rows go through the head a few at a time: a (R,V)
// block of logits would be large for a long prompt. Returns false, appending nothing more, at the
// first row whose logits are not finite.
bool append_lens(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, int k, int tokenizer_size,
                 Activations& a, std::vector<TokenProbability>& out) {
  constexpr int kRowsAtOnce = 16;
  std::vector<float> logits(std::size_t(std::min(R, kRowsAtOnce)) * c.vocab_size);
  for (int r0 = 0; r0 < R; r0 += kRowsAtOnce) {
    const int n = std::min(kRowsAtOnce, R - r0);
    const float* normed = final_norm(c, w, rows + std::size_t(r0) * c.n_embd, n, a);
    linear(logits.data(), normed, w.lm_head, nullptr, n, a);   // (n,C) @ lm_head^T -> (n,V)
    if (mask_and_check(logits.data(), std::size_t(n), c.vocab_size, tokenizer_size)) return false;
    for (int r = 0; r < n; ++r) {
      const auto top = most_probable(std::span(logits).subspan(std::size_t(r) * c.vocab_size, c.vocab_size), k);
      out.insert(out.end(), top.begin(), top.end());
    }
  }
  return true;
}

void check_forward_options(const ModelConfig& c, const ForwardOptions& o) {
  if (!o.head_mask.empty()) {
    const std::size_t want = std::size_t(c.n_layer) * c.n_head;
    if (o.head_mask.size() != want)
      throw InvalidArgument("a head mask needs n_layer x n_head = " + std::to_string(c.n_layer) + " x " +
                            std::to_string(c.n_head) + " = " + std::to_string(want) + " factors, got " +
                            std::to_string(o.head_mask.size()));
    for (std::size_t i = 0; i < want; ++i)
      if (!std::isfinite(o.head_mask[i]))
        throw InvalidArgument("head mask: layer " + std::to_string(i / c.n_head) + " head " +
                              std::to_string(i % c.n_head) + " has a factor that is not a finite number");
  }
  if (o.lens && (o.lens_k < 1 || o.lens_k > c.vocab_size))
    throw InvalidArgument("the lens shows 1 to " + std::to_string(c.vocab_size) +
                          " tokens per layer (the vocabulary), got " + std::to_string(o.lens_k));
}

// ForwardOptions::logit_rows for a call of T tokens: increasing positions below T, and neither
// all_logits nor the lens beside them (which rows those would cover is then unclear).
void check_logit_rows(const ForwardOptions& o, int T) {
  if (o.logit_rows.empty()) return;
  if (o.all_logits || o.lens) throw InvalidArgument("logit rows go without all_logits and the lens");
  for (std::size_t i = 0; i < o.logit_rows.size(); ++i) {
    const std::int32_t t = o.logit_rows[i];
    if (t < 0 || t >= T || (i > 0 && t <= o.logit_rows[i - 1]))
      throw InvalidArgument("logit rows must be increasing positions below " + std::to_string(T) + ", got " +
                            std::to_string(t));
  }
}

// Where the first non-finite value of a pass over `tokens` (at positions cache.size() ..) appears:
// the pass again, with a hook that looks at every tensor (forward()'s failure path only). Leaves
// the cache's size as it was. `head`: what comes after the blocks, if not the LM head.
[[gnu::cold, gnu::noinline]] std::string locate_non_finite(const ModelConfig& c, const ModelWeights& w,
                                                           std::span<const float> inv_freq,
                                                           std::span<const std::int32_t> tokens, KVCache& cache,
                                                           const ForwardOptions& given, const char* head = nullptr) {
  const int T = static_cast<int>(tokens.size());
  NonFiniteFinder finder(cache.size(), c.vocab_size, given.tokenizer_size);
  const TensorHook hook = finder.hook();
  ForwardOptions o;
  o.hook = &hook;
  o.causal = given.causal;
  o.encoder_states = given.encoder_states;
  o.head_mask = given.head_mask;
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, cache.size() + T);
  run_blocks(c, w, inv_freq, std::span(&seq, 1), a, o);
  if (head) return finder.where(head);
  if (!finder.found()) lm_logits(c, w, a.x.data(), T, a, o);
  return finder.where("the logits");
}

// forward_batch's refusals, out of its way (once per failed call).
[[gnu::cold, gnu::noinline]] void throw_batch_too_large(std::uint64_t tokens, int V) {
  throw InvalidArgument("the batch asks for " + std::to_string(tokens * std::uint64_t(V)) + " logits (" +
                        std::to_string(tokens) + " tokens x " + std::to_string(V) + "), more than the " +
                        std::to_string(Model::kMaxBatchLogits) + " one call returns at most: split it");
}

// A batch's sequence b whose logits are not finite, alone through forward() (its logits are
// exactly its own forward's), which names where it went non-finite.
[[gnu::cold, gnu::noinline]] void throw_non_finite_sequence(const Model& model, std::span<const std::int32_t> ids,
                                                            std::size_t b, int tokenizer_size) {
  KVCache cache = model.new_cache();
  try {
    model.forward(ids, cache, {.all_logits = true, .tokenizer_size = tokenizer_size});
  } catch (const ModelFormatError& e) {
    throw ModelFormatError("sequence " + std::to_string(b), e.what());
  }
  throw non_finite_error("sequence " + std::to_string(b) + "'s logits");
}

}   // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

int context_length(const ModelConfig& c, int asked) {
  if (asked < 0 || asked > c.n_positions)
    throw InvalidArgument("the context must be 1.." + std::to_string(c.n_positions) +
                          " positions (the model's n_positions; 0: at most " + std::to_string(kDefaultContext) +
                          "), got " + std::to_string(asked));
  return asked ? asked : std::min(c.n_positions, kDefaultContext);
}

std::uint64_t kv_cache_bytes(const ModelConfig& c, int context) {
  return KVCache::peak_bytes(c.n_layer, context, c.kv_heads() * c.head_dim());
}

Model Model::from_weights(const std::string& config_json, ModelConfig config, const LoadOptions& options,
                          ModelWeights&& weights) {
  auto impl = std::make_unique<Impl>();
  impl->context = context_length(config, options.context);
  impl->config = std::move(config);
  impl->config_json = config_json;
  impl->quantization = options.quantize;
  impl->w = std::move(weights);
  if (impl->config.position_encoding == PositionEncoding::Rotary)
    impl->inv_freq = rotary_inv_freq(impl->config.rotary, impl->config.rotary_dim());
  return Model(std::move(impl));
}

const ModelConfig& Model::config() const { return impl_->config; }
const std::string& Model::config_json() const { return impl_->config_json; }
Quantization Model::quantization() const { return impl_->quantization; }
int Model::context() const { return impl_->context; }

std::vector<float> silencing_head_mask(const ModelConfig& c, std::span<const std::array<int, 2>> heads) {
  std::vector<float> mask(std::size_t(c.n_layer) * c.n_head, 1.0f);
  for (const auto& [layer, head] : heads) {
    if (layer < 0 || layer >= c.n_layer)
      throw InvalidArgument("there is no layer " + std::to_string(layer) + ": the model has layers 0.." +
                            std::to_string(c.n_layer - 1));
    if (head < 0 || head >= c.n_head)
      throw InvalidArgument("there is no head " + std::to_string(head) + ": the model's layers have heads 0.." +
                            std::to_string(c.n_head - 1));
    mask[std::size_t(layer) * c.n_head + head] = 0.0f;
  }
  return mask;
}

KVCache Model::new_cache() const {
  const auto& c = impl_->config;
  return KVCache(c.n_layer, impl_->context, c.kv_heads() * c.head_dim());
}

std::vector<float> Model::forward(std::span<const std::int32_t> tokens, KVCache& cache, const ForwardOptions& o) const {
  const ModelConfig& c = impl_->config;
  if (cache.capacity() != impl_->context || cache.n_embd() != c.kv_heads() * c.head_dim() ||
      cache.n_layer() != c.n_layer)
    throw InvalidArgument("the KV cache was made for another model (use this model's new_cache())");
  check_tokens(c, impl_->context, tokens, cache.size(), "");
  if (!is_causal(c, o) && cache.size() > 0)   // the cached positions never saw these tokens
    throw InvalidArgument(std::string(c.bidirectional ? "this model is bidirectional (an encoder): its attention needs"
                                                      : "bidirectional attention needs") +
                          " the whole sequence in one call, from an empty cache (this one holds " +
                          std::to_string(cache.size()) + " positions)");
  if (!o.encoder_states.empty()) {
    if (!c.add_cross_attention)
      throw InvalidArgument(
          "this model has no cross-attention (config.json: add_cross_attention), so it takes no encoder states");
    if (o.encoder_states.size() % std::size_t(c.n_embd) != 0)
      throw InvalidArgument("encoder states must be (S, n_embd) floats: " + std::to_string(o.encoder_states.size()) +
                            " is not a multiple of n_embd " + std::to_string(c.n_embd));
  }
  check_forward_options(c, o);
  const int T = static_cast<int>(tokens.size()), C = c.n_embd;
  check_logit_rows(o, T);
  const int R = o.all_logits ? T : 1;
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, cache.size() + T);
  // Hidden states and the lens are read off the residual stream between blocks.
  if (o.hidden_states) o.hidden_states->clear();
  if (o.lens) o.lens->clear();
  ResidualTap tap;   // made only when asked for: a decoded token makes none
  bool lens_finite = true;
  if (o.hidden_states || o.lens) {
    tap = [&](int l, const float* x) {
      if (o.hidden_states) o.hidden_states->insert(o.hidden_states->end(), x, x + std::size_t(T) * C);
      if (o.lens && l >= 0 && lens_finite)
        lens_finite = append_lens(c, impl_->w, x + std::size_t(T - R) * C, R, o.lens_k, o.tokenizer_size, a, *o.lens);
    };
  }
  cache.reserve(cache.size() + T);
  run_blocks(c, impl_->w, impl_->inv_freq, std::span(&seq, 1), a, o, tap ? &tap : nullptr);
  if (o.hidden_states) {   // Hugging Face's last hidden state is after the final norm
    const float* last = final_norm(c, impl_->w, a.x.data(), T, a);
    std::copy(last, last + std::size_t(T) * C, o.hidden_states->end() - std::ptrdiff_t(T) * C);
  }
  std::vector<float> logits;
  if (!o.logit_rows.empty()) {   // the rows asked for, gathered (R,C), into a.branch (T,C)
    float* rows = a.branch.data();
    for (const std::int32_t t : o.logit_rows) rows = std::copy_n(a.x.data() + std::size_t(t) * C, C, rows);
    logits = lm_logits(c, impl_->w, a.branch.data(), static_cast<int>(o.logit_rows.size()), a, o);
  } else {
    logits = lm_logits(c, impl_->w, a.x.data() + std::size_t(T - R) * C, R, a, o);
  }
  const bool finite = !mask_and_check(logits.data(), logits.size() / c.vocab_size, c.vocab_size, o.tokenizer_size);
  if (!finite || !lens_finite)
    throw non_finite_error(locate_non_finite(c, impl_->w, impl_->inv_freq, tokens, cache, o));
  cache.advance(T);
  return logits;
}

void Model::check_sequence(std::span<const std::int32_t> tokens, std::size_t index) const {
  check_tokens(impl_->config, impl_->context, tokens, 0, "sequence " + std::to_string(index) + ": ");
}

std::vector<std::vector<float>> Model::forward_batch(std::span<const std::vector<std::int32_t>> batch,
                                                     int tokenizer_size) const {
  const ModelConfig& c = impl_->config;
  const int C = c.n_embd, V = c.vocab_size;
  if (batch.empty()) throw InvalidArgument("the batch holds no sequences");
  std::size_t longest = 0;
  std::uint64_t tokens = 0;
  for (std::size_t b = 0; b < batch.size(); ++b) {
    check_sequence(batch[b], b);
    longest = std::max(longest, batch[b].size());
    tokens += batch[b].size();
  }
  if (tokens * std::uint64_t(V) > kMaxBatchLogits) throw_batch_too_large(tokens, V);
  // Right-padded to the longest with id 0 (any id would do: the mask hides padding), each
  // sequence with a cache of its own for this pass.
  const int B = static_cast<int>(batch.size()), T = static_cast<int>(longest);
  std::vector<std::vector<std::int32_t>> padded(batch.begin(), batch.end());
  std::vector<KVCache> caches;
  std::vector<Sequence> seqs;
  caches.reserve(std::size_t(B));
  for (auto& ids : padded) {
    const int valid = static_cast<int>(ids.size());
    ids.resize(longest, 0);
    caches.push_back(new_cache());
    caches.back().reserve(T);
    seqs.push_back({ids, valid, &caches.back()});
  }
  Activations a(c, B * T, T);
  const ForwardOptions o;
  run_blocks(c, impl_->w, impl_->inv_freq, seqs, a, o);
  // The real rows only, gathered, through the final norm and the LM head.
  std::vector<float> real;
  for (int b = 0; b < B; ++b) {
    const float* first = a.x.data() + std::size_t(b) * T * C;
    real.insert(real.end(), first, first + std::size_t(seqs[b].valid) * C);
  }
  const int R = static_cast<int>(real.size() / std::size_t(C));
  std::vector<float> logits = lm_logits(c, impl_->w, real.data(), R, a, o);
  if (const auto bad = mask_and_check(logits.data(), std::size_t(R), V, tokenizer_size)) {
    std::size_t b = 0;   // sequence b's rows end at `end`
    for (int end = seqs[0].valid; end <= *bad; end += seqs[b].valid) ++b;
    throw_non_finite_sequence(*this, batch[b], b, tokenizer_size);
  }
  std::vector<std::vector<float>> out;
  std::size_t row = 0;
  for (const Sequence& seq : seqs) {
    out.emplace_back(logits.begin() + std::ptrdiff_t(row * V), logits.begin() + std::ptrdiff_t((row + seq.valid) * V));
    row += std::size_t(seq.valid);
  }
  return out;
}

std::vector<float> Model::classify(std::span<const std::int32_t> tokens, std::span<const float> head_mask,
                                   const TensorHook* hook) const {
  const ModelConfig& c = impl_->config;
  const int C = c.n_embd;
  if (c.labels.empty())
    throw InvalidArgument(
        "this model has no classification head (a classifier's config.json names "
        "GPT2ForSequenceClassification in \"architectures\")");
  check_tokens(c, impl_->context, tokens, 0, "");
  ForwardOptions options;
  options.head_mask = head_mask;
  options.hook = hook;
  check_forward_options(c, options);
  const int T = static_cast<int>(tokens.size());
  KVCache cache = new_cache();
  cache.reserve(T);
  const Sequence seq{tokens, T, &cache};
  Activations a(c, T, T);
  run_blocks(c, impl_->w, impl_->inv_freq, std::span(&seq, 1), a, options);
  const float* last = final_norm(c, impl_->w, a.x.data() + std::size_t(T - 1) * C, 1, a);   // (1,C)
  std::vector<float> logits(c.labels.size());   // (1,C) @ score^T -> (n_labels): a few dot products
  for (std::size_t k = 0; k < logits.size(); ++k) {
    const float* row = impl_->w.score + k * std::size_t(C);
    float sum = 0;
    for (int i = 0; i < C; ++i) sum += row[i] * last[i];
    logits[k] = sum;
  }
  if (mask_and_check(logits.data(), 1, static_cast<int>(logits.size()), 0)) {
    cache.clear();
    throw non_finite_error(locate_non_finite(c, impl_->w, impl_->inv_freq, tokens, cache, options,
                                             "the final norm or the classification head (ln_f, score.weight)"));
  }
  return logits;
}

}   // namespace glassbox
