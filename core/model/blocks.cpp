#include "model/blocks.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernels.h"
#include "model/thread_pool.h"

namespace glassbox {

Activations::Activations(const ModelConfig& c, int T, int n_keys) : scratch(std::size_t(c.n_head) * n_keys), T(T) {
  const std::size_t C = std::size_t(T) * c.n_embd, Q = std::size_t(T) * q_width(c), F = std::size_t(T) * c.n_inner,
                    W = std::size_t(T) * (q_width(c) + 2 * kv_width(c));
  std::span<float>* arrays[] = {&x, &h, &qkv, &q, &heads, &branch, &fc, &up, &attn};
  const std::size_t sizes[] = {C, C, W, Q, Q, C, F, c.mlp == Mlp::Gated ? F : 0, c.parallel_residual ? C : 0};
#ifdef GLASSBOX_ASAN   // each array its own allocation, so that AddressSanitizer checks its bounds (arena.h)
  for (std::size_t i = 0; i < std::size(arrays); ++i) *arrays[i] = separate_.emplace_back(sizes[i]);
  return;
#endif
  const auto padded = [](std::size_t n) { return (n + 15) / 16 * 16; };   // each array on a 64-byte line
  std::size_t total = 0;
  for (std::size_t n : sizes) total += padded(n);
  memory_ = LargeBlock(total * sizeof(float));
  float* p = reinterpret_cast<float*>(memory_.data());
  if (!memory_.on_huge_pages()) std::fill_n(p, total, 0.0f);   // a fresh mapping is zero already
  for (std::size_t i = 0; i < std::size(arrays); ++i) {
    *arrays[i] = {p, sizes[i]};
    p += padded(sizes[i]);
  }
}

namespace {

// Rows of a step between the products across the threads (blocks.h: kNormCost and the rest).
template <class F>
void for_rows(int T, int width, double cost, F&& fn) {
  parallel_for(T, 1, double(T) * width * cost, fn);
}

}   // namespace

// Runs products that share their input as one: the input quantized once (int8, int4), and the rows of
// every matrix split across the threads (glassbox/threads.h) in slices of 16 rows of one matrix
// each, in one parallel_for (one wake-up of the threads, where three products would take three).
// Every output is computed the same way whatever the slice, so the result does not depend on the
// thread count.
void linear(std::initializer_list<Product> products, const float* in, int T, Activations& a) {
  constexpr int kGrain = 16;   // a multiple of the kernels' row tiles (8 for F32, 4 for int8 and int4)
  const int K = products.begin()->w.K;
  const bool quantized = products.begin()->w.f32 == nullptr;
  if (quantized) {
    kernels::size_activations_q8(a.xq, T, K);
    for_rows(T, K, kQuantizeCost, [&](int t0, int t1) { kernels::quantize_activation_rows_q8(a.xq, in, K, t0, t1); });
  }
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
      const kernels::Q8Shape s(p.w.N, K);
      if (p.w.f32)
        (p.w.fused ? kernels::matmul_fused : kernels::matmul)(p.out + lo, in, p.w.f32 + std::size_t(lo) * K, bias, T, K,
                                                              hi - lo, p.out_stride);
      else if (p.w.q)
        kernels::matmul_q8(p.out + lo, a.xq, p.w.q + std::size_t(lo) * s.Kp, p.w.d + std::size_t(lo) * s.blocks, bias,
                           hi - lo, p.out_stride);
      else
        kernels::matmul_q4(p.out + lo, a.xq, p.w.q4 + std::size_t(lo) * s.Kp / 2, p.w.d + std::size_t(lo) * s.blocks,
                           bias, hi - lo, p.out_stride);
    }
  });
}

// out (T,N) = in (T,K) @ w^T + bias: F32, or int8 or int4 after quantizing `in` block by block.
void linear(float* out, const float* in, const Matrix& w, const float* bias, int T, Activations& a) {
  linear({{out, w.N, w, bias}}, in, T, a);
}

// Whether self-attention hides later positions: unless asked not to, or the model is an encoder.
bool is_causal(const ModelConfig& c, const ForwardOptions& o) { return o.causal && !c.bidirectional; }

namespace {

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

// Overwrites rows of `out` (rows, width, `column` its first column) as the edits of layer l at
// `site` say.
void apply_edits(std::span<const BlockEdit> edits, BlockEdit::Site site, int l, float* out, int width, int hd) {
  for (const BlockEdit& e : edits) {
    if (e.site != site || e.layer != l) continue;
    const int n = site == BlockEdit::Site::HeadZ ? hd : width,
              column = site == BlockEdit::Site::HeadZ ? e.head * hd : 0;
    for (int r = 0; r < e.count; ++r)
      std::copy_n(e.values + std::size_t(r) * e.values_stride, n, out + std::size_t(e.row + r) * width + column);
  }
}

// Hugging Face GPT2Attention: scores / sqrt(head_dim) [/ (layer_idx + 1)], self and cross.
float attention_scale(const ModelConfig& c, int l) {
  float scale = c.scale_attn_weights ? 1.0f / std::sqrt(static_cast<float>(c.head_dim())) : 1.0f;
  if (c.scale_attn_by_inverse_layer_idx) scale /= static_cast<float>(l + 1);
  return scale;
}

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
                     std::span<const Sequence> seqs, Activations& a, const ForwardOptions& o,
                     std::span<const BlockEdit> edits) {
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
    const double work = 2.0 * T * S * Dq;   // scores and weighted sums over every head
    if (T == 1) {
      parallel_for(H, 1, work, [&](int h0, int h1) {   // head h reads columns h*hd .. of q, (h/group)*hd .. of k, v
        for (int h = h0; h < h1;) {                    // each cache row read once for the heads of one key/value head
          const int g = h / group, end = group == 1 ? h1 : std::min(h1, (g + 1) * group);
          kernels::attention_one_query(heads + h * hd, q + h * hd, K + g * hd, V + g * hd, Dkv, S, end - h, hd, scale,
                                       o.hook ? a.probs.data() + std::size_t(h) * S : nullptr,
                                       a.scratch.data() + std::size_t(h) * S, mask, factors ? factors + h : nullptr,
                                       /*shared_kv=*/group > 1);
          h = end;
        }
      });
    } else {
      // Jobs of one head's rows rb*R .. : with heads alone, a 12-head model would leave threads
      // idle past 12. A causal query row's output does not depend on the rows computed beside it;
      // without the causal mask (every row sees pos0+T keys) or when the probabilities are
      // captured (rows pos0+T apart), a head's rows stay one job.
      const int R = mask.causal && !o.hook ? kAttentionRows : T, blocks = (T + R - 1) / R;
      parallel_for(H * blocks, 1, work, [&](int i0, int i1) {
        std::vector<float> scratch(static_cast<std::size_t>(S));   // one row of scores
        for (int i = i0; i < i1; ++i) {
          const int h = i / blocks, g = h / group, t0 = i % blocks * R, rows = std::min(R, T - t0);
          float* probs = o.hook ? a.probs.data() + std::size_t(h) * T * S : nullptr;
          kernels::attention(heads + std::size_t(t0) * Dq + h * hd, Dq, q + std::size_t(t0) * Dq + h * hd, Dq,
                             K + g * hd, V + g * hd, Dkv, rows, pos0 + t0, hd, scale, probs, scratch.data(), mask,
                             factors ? factors[h] : 1.0f);
        }
      });
    }
    emit(o, "attn_probs", l, {H, T, S}, 3, a.probs.data());
    row0 += std::size_t(T);
  }
  apply_edits(edits, BlockEdit::Site::HeadZ, l, a.heads.data(), Dq, hd);
  emit(o, "attn_z", l, {rows, Dq}, 2, a.heads.data());
  linear(a.branch.data(), a.heads.data(), L.proj_w, L.proj_b, rows, a);   // (rows,Dq) -> (rows,C)
  apply_edits(edits, BlockEdit::Site::AttnOut, l, a.branch.data(), c.n_embd, hd);
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
               const ForwardOptions& o, std::span<const BlockEdit> edits) {
  const int F = c.n_inner;
  const bool gated = c.mlp == Mlp::Gated;
  if (gated)   // (T,C) -> (T,F) twice
    linear({{a.fc.data(), F, L.gate_w, L.gate_b}, {a.up.data(), F, L.fc_w, L.fc_b}}, in, T, a);
  else
    linear(a.fc.data(), in, L.fc_w, L.fc_b, T, a);        // (T,C) -> (T,F)
  for_rows(T, F, kActivationCost, [&](int t0, int t1) {   // act(gate) [* up]
    const std::size_t at = std::size_t(t0) * F, n = std::size_t(t1 - t0) * F;
    activation(c.activation, a.fc.data() + at, n);
    if (gated) kernels::multiply(a.fc.data() + at, a.up.data() + at, n);
  });
  emit(o, "mlp_act", l, {T, F}, 2, a.fc.data());
  linear(a.branch.data(), a.fc.data(), L.fc_proj_w, L.fc_proj_b, T, a);   // (T,F) -> (T,C)
  apply_edits(edits, BlockEdit::Site::MlpOut, l, a.branch.data(), c.n_embd, 0);
  emit(o, "mlp_out", l, {T, c.n_embd}, 2, a.branch.data());
}

// A block's norm: LayerNorm or RMSNorm (config.h's Norm), in (T,C) -> out (T,C); out may alias in.
void norm(const ModelConfig& c, float* out, const float* in, const float* weight, const float* bias, int T) {
  const float eps = static_cast<float>(c.layer_norm_epsilon);
  const int C = c.n_embd;
  for_rows(T, C, kNormCost, [&](int t0, int t1) {
    const std::size_t at = std::size_t(t0) * C;
    if (c.norm == Norm::RMSNorm)
      kernels::rmsnorm(out + at, in + at, weight, t1 - t0, C, eps);
    else
      kernels::layernorm(out + at, in + at, weight, bias, t1 - t0, C, eps);
  });
}

}   // namespace

// The embeddings of every sequence's rows into a.x (rows,C), and each row's rotary angles.
void embed(const ModelConfig& c, const ModelWeights& w, std::span<const float> inv_freq, std::span<const Sequence> seqs,
           Activations& a) {
  const int C = c.n_embd, T = a.rows(), half = static_cast<int>(inv_freq.size());
  // x (T,C) = wte[token] (+ wpe[position]); with rotary positions, each row's angles instead
  a.cos.resize(std::size_t(T) * half);
  a.sin.resize(a.cos.size());
  std::size_t row = 0;
  for (const Sequence& seq : seqs) {
    for (int t = 0; t < seq.T(); ++t, ++row) {
      const int pos = seq.cache->size() + t;
      float* x = a.x.data() + row * C;
      w.wte.row(seq.tokens[t], x);
      if (w.wpe) {
        const float* pe = w.wpe + std::size_t(pos) * C;
        for (int i = 0; i < C; ++i) x[i] += pe[i];
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
}

// Blocks first .. n_layer-1 on the residual stream in a.x (rows,C).
void run_layers(const ModelConfig& c, const ModelWeights& w, std::span<const Sequence> seqs, Activations& a,
                const ForwardOptions& o, int first, std::span<const BlockEdit> edits, const ResidualTap* tap) {
  const int C = c.n_embd, T = a.rows();
  for (int l = first; l < c.n_layer; ++l) {
    const LayerWeights& L = w.layers[l];
    if (l == o.steer_layer && !o.steer.empty())   // activation addition: x += v at every row
      for (int t = 0; t < T; ++t) kernels::add(a.x.data() + std::size_t(t) * C, o.steer.data(), std::size_t(C));
    if (c.architecture == Architecture::OpenAIGPT) {
      // post-LN (original GPT): x = ln_1(x + attn(x)); x = ln_2(x + mlp(x))
      attention_block(c, L, l, a.x.data(), seqs, a, o, edits);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      norm(c, a.x.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      mlp_block(c, L, l, a.x.data(), T, a, o, edits);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      norm(c, a.x.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
    } else if (c.parallel_residual) {
      // parallel (gpt_neox): x = x + (mlp(ln_2(x)) + attn(ln_1(x)))
      norm(c, a.h.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      attention_block(c, L, l, a.h.data(), seqs, a, o, edits);
      std::copy(a.branch.begin(), a.branch.end(), a.attn.begin());
      norm(c, a.h.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
      mlp_block(c, L, l, a.h.data(), T, a, o, edits);
      kernels::add(a.branch.data(), a.attn.data(), a.branch.size());
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
    } else {
      // pre-norm: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
      norm(c, a.h.data(), a.x.data(), L.ln_1_w, L.ln_1_b, T);
      attention_block(c, L, l, a.h.data(), seqs, a, o, edits);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
      if (c.add_cross_attention && !o.encoder_states.empty()) {   // x = x + cross(ln_cross(x), encoder)
        norm(c, a.h.data(), a.x.data(), L.ln_cross_w, L.ln_cross_b, T);
        cross_attention_block(c, L, l, a.h.data(), seqs, o.encoder_states, a, o);
        kernels::add(a.x.data(), a.branch.data(), a.x.size());
      }
      norm(c, a.h.data(), a.x.data(), L.ln_2_w, L.ln_2_b, T);
      mlp_block(c, L, l, a.h.data(), T, a, o, edits);
      kernels::add(a.x.data(), a.branch.data(), a.x.size());
    }
    emit(o, "block_out", l, {T, C}, 2, a.x.data());
    if (tap) (*tap)(l, a.x.data());
  }
}

// The blocks over every sequence's rows: embeddings -> n_layer blocks -> a.x (rows,C), the
// residual stream before the final norm.
void run_blocks(const ModelConfig& c, const ModelWeights& w, std::span<const float> inv_freq,
                std::span<const Sequence> seqs, Activations& a, const ForwardOptions& o, const ResidualTap* tap) {
  embed(c, w, inv_freq, seqs, a);
  emit(o, "inp_embd", -1, {a.rows(), c.n_embd}, 2, a.x.data());
  if (tap) (*tap)(-1, a.x.data());
  run_layers(c, w, seqs, a, o, 0, {}, tap);
}

// rows (R,C) of the residual stream -> the final hidden states (R,C) the heads read: the final
// norm into a.h, or the rows themselves (openai-gpt has none).
const float* final_norm(const ModelConfig& c, const ModelWeights& w, const float* rows, int R, Activations& a) {
  if (!w.ln_f_w) return rows;
  norm(c, a.h.data(), rows, w.ln_f_w, w.ln_f_b, R);
  return a.h.data();
}

}   // namespace glassbox
