#include "training/backprop.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "glassbox/random.h"
#include "kernels/kernels.h"
#include "training/products.h"

namespace glassbox::training {
namespace {

template <class Real>
void grow(std::vector<Real>& v, std::size_t n) {
  if (v.size() < n) v.resize(n);
}

// ---------------------------------------------------------------------------------------------
// Embedding: x (N,C) = wte[inputs] + wpe[position in its sequence]

template <class Real>
void embedding_forward(Real* x, const std::int32_t* inputs, const Real* wte, const Real* wpe, int N, int T, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* te = wte + std::size_t(inputs[n]) * C;
    const Real* pe = wpe + std::size_t(n % T) * C;
    for (int c = 0; c < C; ++c) x[std::size_t(n) * C + c] = te[c] + pe[c];
  }
}

template <class Real>
void embedding_backward(Real* dwte, Real* dwpe, const Real* dx, const std::int32_t* inputs, int N, int T, int C) {
  for (int n = 0; n < N; ++n) {
    Real* te = dwte + std::size_t(inputs[n]) * C;
    Real* pe = dwpe + std::size_t(n % T) * C;
    for (int c = 0; c < C; ++c) {
      te[c] += dx[std::size_t(n) * C + c];
      pe[c] += dx[std::size_t(n) * C + c];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// LayerNorm over the last dimension: out (N,C) = (x - mean) * rstd * w + b, biased variance.

template <class Real>
void layernorm_forward(Real* out, Real* mean, Real* rstd, const Real* x, const Real* w, const Real* b, int N, int C,
                       Real eps) {
  for (int n = 0; n < N; ++n) {
    const Real* row = x + std::size_t(n) * C;
    Real m = 0;
    for (int c = 0; c < C; ++c) m += row[c];
    m /= C;
    Real var = 0;
    for (int c = 0; c < C; ++c) var += (row[c] - m) * (row[c] - m);
    var /= C;
    const Real s = Real(1) / std::sqrt(var + eps);
    for (int c = 0; c < C; ++c) out[std::size_t(n) * C + c] = (row[c] - m) * s * w[c] + b[c];
    mean[n] = m;
    rstd[n] = s;
  }
}

// dx (N,C) += d/dx; dw, db (C) += their gradients.
template <class Real>
void layernorm_backward(Real* dx, Real* dw, Real* db, const Real* dout, const Real* x, const Real* w, const Real* mean,
                        const Real* rstd, int N, int C) {
  for (int n = 0; n < N; ++n) {
    const Real* xr = x + std::size_t(n) * C;
    const Real* dr = dout + std::size_t(n) * C;
    // with xhat = (x - mean) * rstd and g = dout * w:  dx = rstd * (g - mean(g) - xhat * mean(g * xhat))
    Real g_mean = 0, gx_mean = 0;
    for (int c = 0; c < C; ++c) {
      const Real xhat = (xr[c] - mean[n]) * rstd[n];
      const Real g = dr[c] * w[c];
      g_mean += g;
      gx_mean += g * xhat;
    }
    g_mean /= C;
    gx_mean /= C;
    for (int c = 0; c < C; ++c) {
      const Real xhat = (xr[c] - mean[n]) * rstd[n];
      db[c] += dr[c];
      dw[c] += dr[c] * xhat;
      dx[std::size_t(n) * C + c] += rstd[n] * (dr[c] * w[c] - g_mean - xhat * gx_mean);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Linear (Conv1D layout): out (N,O) = x (N,I) @ W (I,O) + b (O)

template <class Real>
void matmul_forward(Real* out, const Real* x, const Real* W, const Real* b, int N, int I, int O) {
  gemm(out, O, x, I, Op::N, W, O, Op::N, N, O, I, false);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o) out[std::size_t(n) * O + o] += b[o];
}

// dx (N,I) = dout @ W^T (overwritten); dW (I,O) += x^T @ dout; db (O) += column sums of dout.
template <class Real>
void matmul_backward(Real* dx, Real* dW, Real* db, const Real* dout, const Real* x, const Real* W, int N, int I,
                     int O) {
  gemm(dx, I, dout, O, Op::N, W, O, Op::T, N, I, O, false);
  gemm(dW, O, x, I, Op::T, dout, O, Op::N, I, O, N, true);
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o) db[o] += dout[std::size_t(n) * O + o];
}

// ---------------------------------------------------------------------------------------------
// Activations, element-wise over the MLP's hidden layer: forward, and dx *= f'(pre).

template <class Real>
Real activate(Activation a, Real x) {
  switch (a) {
    case Activation::GeluTanh: {
      const Real u = Real(0.7978845608028654) * (x + Real(0.044715) * x * x * x);   // sqrt(2/pi)
      return Real(0.5) * x * (Real(1) + std::tanh(u));
    }
    case Activation::GeluErf:
      return Real(0.5) * x * (Real(1) + std::erf(x * Real(0.7071067811865476)));
    case Activation::Relu:
      return x > 0 ? x : Real(0);
    case Activation::Silu:
      return x / (Real(1) + std::exp(-x));
  }
  return x;
}

template <class Real>
Real activation_slope(Activation a, Real x) {
  switch (a) {
    case Activation::GeluTanh: {
      const Real s = Real(0.7978845608028654);
      const Real t = std::tanh(s * (x + Real(0.044715) * x * x * x));
      return Real(0.5) * (Real(1) + t) + Real(0.5) * x * (Real(1) - t * t) * s * (Real(1) + Real(3 * 0.044715) * x * x);
    }
    case Activation::GeluErf:   // Phi(x) + x phi(x)
      return Real(0.5) * (Real(1) + std::erf(x * Real(0.7071067811865476))) +
             x * std::exp(Real(-0.5) * x * x) * Real(0.3989422804014327);
    case Activation::Relu:
      return x > 0 ? Real(1) : Real(0);
    case Activation::Silu: {
      const Real sig = Real(1) / (Real(1) + std::exp(-x));
      return sig * (Real(1) + x * (Real(1) - sig));
    }
  }
  return 1;
}

// In float, GPT-2's activation and its slope run on the engine's kernels, 8 lanes at a time and
// exp-based, where libm's tanhf is a scalar call (a visible share of a training step).
template <class Real>
void activation_forward(Activation a, Real* out, const Real* pre, std::size_t n) {
  if constexpr (std::is_same_v<Real, float>) {
    if (a == Activation::GeluTanh) {
      std::copy(pre, pre + n, out);
      kernels::gelu_tanh(out, n);
      return;
    }
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = activate(a, pre[i]);
}

template <class Real>
void activation_backward(Activation a, Real* d, const Real* pre, std::size_t n) {
  if constexpr (std::is_same_v<Real, float>) {
    if (a == Activation::GeluTanh) {
      kernels::gelu_tanh_backward(d, pre, n);
      return;
    }
  }
  for (std::size_t i = 0; i < n; ++i) d[i] *= activation_slope(a, pre[i]);
}

// ---------------------------------------------------------------------------------------------
// Self-attention of b sequences: qkv (N,3C) = [q | k | v] -> heads (N,C), probs (b,H,T,T).
// Head h uses columns h*hd .. (h+1)*hd of each of q, k, v, read in place with a row stride.
// Causal: query i sees keys 0..i (the rest of its row is 0); else every key (an encoder's).

template <class Real>
void attention_forward(Real* heads, Real* probs, const Real* qkv, int b, int T, int C, int H, Real scale, bool causal) {
  const int hd = C / H;
  for (int s = 0; s < b; ++s) {
    const Real* seq = qkv + std::size_t(s) * T * 3 * C;
    for (int h = 0; h < H; ++h) {
      const Real *q = seq + h * hd, *k = seq + C + h * hd, *v = seq + 2 * C + h * hd;   // (T,hd), row stride 3C
      Real* p = probs + (std::size_t(s) * H + h) * T * T;
      gemm(p, T, q, 3 * C, Op::N, k, 3 * C, Op::T, T, T, hd, false);   // (T,T) scores q k^T
      for (int i = 0; i < T; ++i) {   // softmax over the keys seen, of the scaled scores; the future gets 0
        Real* row = p + std::size_t(i) * T;
        const int seen = causal ? i + 1 : T;
        for (int j = 0; j < seen; ++j) row[j] *= scale;
        const Real max = *std::max_element(row, row + seen);
        Real sum = 0;
        for (int j = 0; j < seen; ++j) sum += (row[j] = std::exp(row[j] - max));
        for (int j = 0; j < seen; ++j) row[j] /= sum;
        std::fill(row + seen, row + T, Real(0));
      }
      gemm(heads + std::size_t(s) * T * C + h * hd, C, p, T, Op::N, v, 3 * C, Op::N, T, hd, T, false);   // (T,hd)
    }
  }
}

// dqkv (N,3C) = gradient of q, k and v (overwritten), from dheads (N,C).
template <class Real>
void attention_backward(Real* dqkv, Real* dprobs, const Real* dheads, const Real* probs, const Real* qkv, int b, int T,
                        int C, int H, Real scale, bool causal) {
  const int hd = C / H;
  for (int s = 0; s < b; ++s) {
    const Real* seq = qkv + std::size_t(s) * T * 3 * C;
    Real* dseq = dqkv + std::size_t(s) * T * 3 * C;
    for (int h = 0; h < H; ++h) {
      const Real *q = seq + h * hd, *k = seq + C + h * hd, *v = seq + 2 * C + h * hd;   // (T,hd), row stride 3C
      const Real* dout = dheads + std::size_t(s) * T * C + h * hd;                      // (T,hd), row stride C
      const Real* p = probs + (std::size_t(s) * H + h) * T * T;                         // (T,T)
      Real* dp = dprobs;
      gemm(dseq + 2 * C + h * hd, 3 * C, p, T, Op::T, dout, C, Op::N, T, hd, T, false);   // dv = p^T dout
      gemm(dp, T, dout, C, Op::N, v, 3 * C, Op::T, T, T, hd, false);                      // d probs = dout v^T
      // softmax backward, row by row: dscore_j = p_j (dp_j - sum_k p_k dp_k); masked entries have p = 0
      for (int i = 0; i < T; ++i) {
        const Real* pr = p + std::size_t(i) * T;
        Real* dr = dp + std::size_t(i) * T;
        const int seen = causal ? i + 1 : T;
        Real dot = 0;
        for (int j = 0; j < seen; ++j) dot += pr[j] * dr[j];
        for (int j = 0; j < seen; ++j) dr[j] = pr[j] * (dr[j] - dot) * scale;   // d (q.k), scale folded in
        std::fill(dr + seen, dr + T, Real(0));
      }
      gemm(dseq + h * hd, 3 * C, dp, T, Op::N, k, 3 * C, Op::N, T, hd, T, false);       // dq = dscores k
      gemm(dseq + C + h * hd, 3 * C, dp, T, Op::T, q, 3 * C, Op::N, T, hd, T, false);   // dk = dscores^T q
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Cross-entropy of one row of logits (n) against `target`: returns -log softmax(row)[target] and,
// when asked, leaves weight * d(it)/d row = weight * (softmax(row) - one_hot(target)) in row.
template <class Real>
double cross_entropy(Real* row, int n, int target, bool want_gradient, Real weight) {
  // In float on the engine's softmax, 8 lanes of exp at a time (libm: two expf calls per logit).
  if constexpr (std::is_same_v<Real, float>) {
    const float x = row[target];
    const double loss = static_cast<double>(kernels::softmax_log_sum(row, n) - x);
    if (want_gradient) {
      for (int v = 0; v < n; ++v) row[v] *= weight;
      row[target] -= weight;
    }
    return loss;
  } else {
    const Real max = *std::max_element(row, row + n);
    Real sum = 0;
    for (int v = 0; v < n; ++v) sum += std::exp(row[v] - max);
    const Real log_sum = std::log(sum) + max;
    const double loss = static_cast<double>(log_sum - row[target]);
    if (want_gradient) {
      for (int v = 0; v < n; ++v) row[v] = std::exp(row[v] - log_sum) * weight;
      row[target] -= weight;
    }
    return loss;
  }
}

// Tied LM head and cross-entropy: logits (N,V) = x (N,C) @ wte^T; adds the loss of every row
// with a target to `losses` and, when asked, leaves weight * d(loss sum)/d logits in `logits`
// (0 in the rows without a target).
template <class Real>
void lm_head_loss(Real* logits, const Real* x, const Real* wte, const std::int32_t* targets, int N, int C, int V,
                  bool want_gradient, Real weight, Losses& losses) {
  gemm(logits, V, x, C, Op::N, wte, C, Op::T, N, V, C, false);
  for (int n = 0; n < N; ++n) {
    Real* row = logits + std::size_t(n) * V;
    if (targets[n] == kIgnoreTarget) {
      std::fill(row, row + V, Real(0));
      continue;
    }
    losses.lm_sum += cross_entropy(row, V, targets[n], want_gradient, weight);
    ++losses.lm_count;
  }
}

// A classifier's head (HF GPT2ForSequenceClassification's score, no bias): for each sequence s,
// label logits (K) = x[s, position_s] (C) @ score^T (K,C); adds the label losses to `losses`
// and, with gradients, weight * d(their sum) to dscore (K,C) and to the rows dx (N,C) read.
template <class Real>
void label_head_loss(const Real* x, const Real* score, const Batch& batch, int C, int K, Real* dx, Real* dscore,
                     Real weight, std::vector<Real>& logits, Losses& losses) {
  grow(logits, std::size_t(K));
  for (int s = 0; s < batch.b; ++s) {
    const Real* row = x + (std::size_t(s) * batch.T + batch.label_positions[s]) * C;
    Real* z = logits.data();
    gemm(z, K, row, C, Op::N, score, C, Op::T, 1, K, C, false);   // (1,K) = row (1,C) score^T
    const int label = batch.labels[s];
    const int best = int(std::max_element(logits.begin(), logits.begin() + K) - logits.begin());
    losses.label_correct += best == label;
    losses.label_sum += cross_entropy(logits.data(), K, label, dx != nullptr, weight);
    if (!dx) continue;
    gemm(dscore, C, z, K, Op::T, row, C, Op::N, K, C, 1, true);   // (K,C) += z^T row
    gemm(dx + (std::size_t(s) * batch.T + batch.label_positions[s]) * C, C, z, K, Op::N, score, C, Op::N, 1, C, K,
         true);
  }
}

// ---------------------------------------------------------------------------------------------
// Dropout: mask (N,C) of 0 or 1/(1-p) for one site, drawn per sequence; x (N,C) *= mask.

template <class Real>
void dropout_mask(Real* mask, const Dropout& d, int site, int b, int T, int C) {
  const Real keep_scale = Real(1.0 / (1.0 - d.p));
  for (int s = 0; s < b; ++s) {
    const std::uint64_t sequence = std::uint64_t(d.first_sequence + s);
    Rng rng(d.seed ^ (sequence * 0xD1B54A32D192ED03ull) ^ (std::uint64_t(site) * 0x8CB92BA72F3D8DD7ull));
    Real* m = mask + std::size_t(s) * T * C;
    for (std::size_t i = 0; i < std::size_t(T) * C; ++i) m[i] = rng.uniform() < d.p ? Real(0) : keep_scale;
  }
}

template <class Real>
void multiply(Real* x, const Real* mask, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= mask[i];
}

}   // namespace

// The two block types, as the forward pass below computes them:
//   gpt2 (pre-LN):        a_in = ln_1(x_in);  s1 = x_in + attn(a_in);  m_in = ln_2(s1);  s2 = s1 + mlp(m_in);  out = s2
//   openai-gpt (post-LN): a_in = x_in;        s1 = x_in + attn(a_in);  m_in = ln_1(s1);  s2 = m_in + mlp(m_in); out =
//   ln_2(s2)
// With dropout, the embeddings and the attn(...) and mlp(...) branches are multiplied by masks.
// The final hidden states (after ln_f for gpt2) feed the tied LM head and, for a classifier, the
// label head at each sequence's label position.
template <class Real>
Losses loss_and_gradients(const ModelConfig& c, const ParameterLayout& layout, const Real* params, Real* grads,
                          const Batch& batch, const LossWeights& weights, Workspace<Real>& ws, const Dropout& dropout) {
  const int C = c.n_embd, H = c.n_head, F = c.n_inner, V = c.vocab_size, L = c.n_layer;
  const int b = batch.b, T = batch.T, N = b * T;
  const std::int32_t* inputs = batch.inputs;
  const bool causal = !c.bidirectional;
  const std::size_t NC = std::size_t(N) * C, NF = std::size_t(N) * F;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  const Real eps = static_cast<Real>(c.layer_norm_epsilon);
  const ModelView<const Real> p = layout.view(params);

  ws.blocks.resize(L);
  for (auto& a : ws.blocks) {
    for (auto* v : {&a.x_in, &a.a_in, &a.heads, &a.s1, &a.m_in, &a.s2}) grow(*v, NC);
    for (auto* v : {&a.ln1_mean, &a.ln1_rstd, &a.ln2_mean, &a.ln2_rstd}) grow(*v, std::size_t(N));
    grow(a.qkv, 3 * NC);
    grow(a.probs, std::size_t(b) * H * T * T);
    grow(a.fc_pre, NF);
    grow(a.fc_act, NF);
  }
  for (auto* v : {&ws.x_final, &ws.lnf, &ws.dx, &ws.dtmp, &ws.dheads}) grow(*v, NC);
  const bool drop = dropout.p > 0;
  if (drop) {
    grow(ws.emb_mask, NC);
    grow(ws.dbranch, NC);
    for (auto& a : ws.blocks) {
      grow(a.attn_mask, NC);
      grow(a.mlp_mask, NC);
    }
  }
  grow(ws.lnf_mean, std::size_t(N));
  grow(ws.lnf_rstd, std::size_t(N));
  grow(ws.logits, std::size_t(N) * V);

  // ---- forward
  embedding_forward(ws.blocks[0].x_in.data(), inputs, p.wte, p.wpe, N, T, C);
  if (drop) {
    dropout_mask(ws.emb_mask.data(), dropout, 0, b, T, C);
    multiply(ws.blocks[0].x_in.data(), ws.emb_mask.data(), NC);
  }
  for (int l = 0; l < L; ++l) {
    auto& a = ws.blocks[l];
    const auto& w = p.layers[l];
    Real scale = c.scale_attn_weights ? Real(1) / std::sqrt(Real(C / H)) : Real(1);
    if (c.scale_attn_by_inverse_layer_idx) scale /= Real(l + 1);
    if (gpt2)
      layernorm_forward(a.a_in.data(), a.ln1_mean.data(), a.ln1_rstd.data(), a.x_in.data(), w.ln_1_w, w.ln_1_b, N, C,
                        eps);
    else
      std::copy_n(a.x_in.data(), NC, a.a_in.data());
    matmul_forward(a.qkv.data(), a.a_in.data(), w.qkv_w, w.qkv_b, N, C, 3 * C);
    attention_forward(a.heads.data(), a.probs.data(), a.qkv.data(), b, T, C, H, scale, causal);
    matmul_forward(a.s1.data(), a.heads.data(), w.proj_w, w.proj_b, N, C, C);
    if (drop) {
      dropout_mask(a.attn_mask.data(), dropout, 1 + 2 * l, b, T, C);
      multiply(a.s1.data(), a.attn_mask.data(), NC);
    }
    for (std::size_t i = 0; i < NC; ++i) a.s1[i] += a.x_in[i];
    if (gpt2)
      layernorm_forward(a.m_in.data(), a.ln2_mean.data(), a.ln2_rstd.data(), a.s1.data(), w.ln_2_w, w.ln_2_b, N, C,
                        eps);
    else
      layernorm_forward(a.m_in.data(), a.ln1_mean.data(), a.ln1_rstd.data(), a.s1.data(), w.ln_1_w, w.ln_1_b, N, C,
                        eps);
    matmul_forward(a.fc_pre.data(), a.m_in.data(), w.fc_w, w.fc_b, N, C, F);
    activation_forward(c.activation, a.fc_act.data(), a.fc_pre.data(), NF);
    matmul_forward(a.s2.data(), a.fc_act.data(), w.fc_proj_w, w.fc_proj_b, N, F, C);
    if (drop) {
      dropout_mask(a.mlp_mask.data(), dropout, 2 + 2 * l, b, T, C);
      multiply(a.s2.data(), a.mlp_mask.data(), NC);
    }
    const Real* residual = gpt2 ? a.s1.data() : a.m_in.data();
    for (std::size_t i = 0; i < NC; ++i) a.s2[i] += residual[i];
    Real* out = l + 1 < L ? ws.blocks[l + 1].x_in.data() : ws.x_final.data();
    if (gpt2)
      std::copy_n(a.s2.data(), NC, out);
    else
      layernorm_forward(out, a.ln2_mean.data(), a.ln2_rstd.data(), a.s2.data(), w.ln_2_w, w.ln_2_b, N, C, eps);
  }
  const Real* head_in = ws.x_final.data();
  if (gpt2) {
    layernorm_forward(ws.lnf.data(), ws.lnf_mean.data(), ws.lnf_rstd.data(), ws.x_final.data(), p.ln_f_w, p.ln_f_b, N,
                      C, eps);
    head_in = ws.lnf.data();
  }
  Losses losses;
  lm_head_loss(ws.logits.data(), head_in, p.wte, batch.targets, N, C, V, grads != nullptr, Real(weights.lm), losses);
  const bool classifier = batch.labels != nullptr;
  if (!grads) {
    if (classifier)
      label_head_loss<Real>(head_in, p.score, batch, C, int(c.labels.size()), nullptr, nullptr, 0, ws.label_logits,
                            losses);
    return losses;
  }

  // ---- backward; ws.logits holds d loss / d logits
  const ModelView<Real> g = layout.view(grads);
  grow(ws.dqkv, 3 * NC);
  grow(ws.dfc, NF);
  grow(ws.dprobs, std::size_t(T) * T);
  Real* dx = ws.dx.data();
  Real* dtmp = ws.dtmp.data();
  gemm(g.wte, C, ws.logits.data(), V, Op::T, head_in, C, Op::N, V, C, N, true);   // d wte += dlogits^T x
  Real* dhead = gpt2 ? dtmp : dx;
  gemm(dhead, C, ws.logits.data(), V, Op::N, p.wte, C, Op::N, N, C, V, false);   // d x = dlogits wte
  if (classifier)
    label_head_loss(head_in, p.score, batch, C, int(c.labels.size()), dhead, g.score, Real(weights.label),
                    ws.label_logits, losses);
  if (gpt2) {
    std::fill_n(dx, NC, Real(0));
    layernorm_backward(dx, g.ln_f_w, g.ln_f_b, dtmp, ws.x_final.data(), p.ln_f_w, ws.lnf_mean.data(),
                       ws.lnf_rstd.data(), N, C);
  }
  // d loss / d branch, given d loss / d (residual + mask * branch): through the mask if any
  auto branch_grad = [&](const Real* d_sum, const std::vector<Real>& mask) -> const Real* {
    if (!drop) return d_sum;
    for (std::size_t i = 0; i < NC; ++i) ws.dbranch[i] = d_sum[i] * mask[i];
    return ws.dbranch.data();
  };
  for (int l = L - 1; l >= 0; --l) {   // dx holds d loss / d (block output)
    auto& a = ws.blocks[l];
    const auto& w = p.layers[l];
    const auto& gw = g.layers[l];
    Real scale = c.scale_attn_weights ? Real(1) / std::sqrt(Real(C / H)) : Real(1);
    if (c.scale_attn_by_inverse_layer_idx) scale /= Real(l + 1);
    if (gpt2) {
      // s2 = s1 + mlp(ln_2(s1))  ->  d s1 = d s2 + ln_2'(mlp'(d s2))
      matmul_backward(ws.dfc.data(), gw.fc_proj_w, gw.fc_proj_b, branch_grad(dx, a.mlp_mask), a.fc_act.data(),
                      w.fc_proj_w, N, F, C);
      activation_backward(c.activation, ws.dfc.data(), a.fc_pre.data(), NF);
      matmul_backward(dtmp, gw.fc_w, gw.fc_b, ws.dfc.data(), a.m_in.data(), w.fc_w, N, C, F);
      layernorm_backward(dx, gw.ln_2_w, gw.ln_2_b, dtmp, a.s1.data(), w.ln_2_w, a.ln2_mean.data(), a.ln2_rstd.data(), N,
                         C);
      // s1 = x_in + attn(ln_1(x_in))  ->  d x_in = d s1 + ln_1'(attn'(d s1))
      matmul_backward(ws.dheads.data(), gw.proj_w, gw.proj_b, branch_grad(dx, a.attn_mask), a.heads.data(), w.proj_w, N,
                      C, C);
      attention_backward(ws.dqkv.data(), ws.dprobs.data(), ws.dheads.data(), a.probs.data(), a.qkv.data(), b, T, C, H,
                         scale, causal);
      matmul_backward(dtmp, gw.qkv_w, gw.qkv_b, ws.dqkv.data(), a.a_in.data(), w.qkv_w, N, C, 3 * C);
      layernorm_backward(dx, gw.ln_1_w, gw.ln_1_b, dtmp, a.x_in.data(), w.ln_1_w, a.ln1_mean.data(), a.ln1_rstd.data(),
                         N, C);
    } else {
      // out = ln_2(s2)  ->  d s2 (in dtmp)
      std::fill_n(dtmp, NC, Real(0));
      layernorm_backward(dtmp, gw.ln_2_w, gw.ln_2_b, dx, a.s2.data(), w.ln_2_w, a.ln2_mean.data(), a.ln2_rstd.data(), N,
                         C);
      // s2 = m_in + mlp(m_in)  ->  d m_in = d s2 + mlp'(d s2)   (in dx)
      matmul_backward(ws.dfc.data(), gw.fc_proj_w, gw.fc_proj_b, branch_grad(dtmp, a.mlp_mask), a.fc_act.data(),
                      w.fc_proj_w, N, F, C);
      activation_backward(c.activation, ws.dfc.data(), a.fc_pre.data(), NF);
      matmul_backward(dx, gw.fc_w, gw.fc_b, ws.dfc.data(), a.m_in.data(), w.fc_w, N, C, F);
      for (std::size_t i = 0; i < NC; ++i) dx[i] += dtmp[i];
      // m_in = ln_1(s1)  ->  d s1 (in dtmp)
      std::fill_n(dtmp, NC, Real(0));
      layernorm_backward(dtmp, gw.ln_1_w, gw.ln_1_b, dx, a.s1.data(), w.ln_1_w, a.ln1_mean.data(), a.ln1_rstd.data(), N,
                         C);
      // s1 = x_in + attn(x_in)  ->  d x_in = d s1 + attn'(d s1)   (in dx)
      matmul_backward(ws.dheads.data(), gw.proj_w, gw.proj_b, branch_grad(dtmp, a.attn_mask), a.heads.data(), w.proj_w,
                      N, C, C);
      attention_backward(ws.dqkv.data(), ws.dprobs.data(), ws.dheads.data(), a.probs.data(), a.qkv.data(), b, T, C, H,
                         scale, causal);
      matmul_backward(dx, gw.qkv_w, gw.qkv_b, ws.dqkv.data(), a.x_in.data(), w.qkv_w, N, C, 3 * C);
      for (std::size_t i = 0; i < NC; ++i) dx[i] += dtmp[i];
    }
  }
  if (drop) multiply(dx, ws.emb_mask.data(), NC);
  embedding_backward(g.wte, g.wpe, dx, inputs, N, T, C);
  return losses;
}

template Losses loss_and_gradients<float>(const ModelConfig&, const ParameterLayout&, const float*, float*,
                                          const Batch&, const LossWeights&, Workspace<float>&, const Dropout&);
template Losses loss_and_gradients<double>(const ModelConfig&, const ParameterLayout&, const double*, double*,
                                           const Batch&, const LossWeights&, Workspace<double>&, const Dropout&);

}   // namespace glassbox::training
