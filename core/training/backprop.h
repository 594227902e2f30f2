// The training forward and backward pass of a GPT-2-family model, written as in llm.c: one
// forward and one backward function per layer kind (embedding, LayerNorm, matmul, attention,
// activation, cross-entropy), each with its shapes, and the whole model as the chain of them.
//
// Templated on the number type: float for training, double for the finite-difference gradient
// check. Matrix products go through training::gemm (products.h: the engine's kernels, the same
// bits natively and in WebAssembly, or Eigen's GEMM in native-fast); the rest are plain loops and
// the engine's vector kernels (GELU, softmax).
//
// Shapes: b sequences of T tokens, N = b*T rows; C = n_embd, H = n_head, hd = C/H, F = n_inner,
// V = vocab_size.
#pragma once

#include <cstdint>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/trainer.h"   // kIgnoreTarget
#include "training/parameters.h"

namespace glassbox::training {

// What the forward pass keeps for the backward pass, per block (see backprop.cpp for the meaning
// of each buffer in the two architectures), and the backward pass's scratch space. Reused across
// calls; grows to the largest (b, T) seen.
template <class Real>
struct Workspace {
  struct Block {
    std::vector<Real> x_in;                  // (N,C)    input of the block
    std::vector<Real> a_in;                  // (N,C)    input of attention (gpt2: ln_1(x_in))
    std::vector<Real> ln1_mean, ln1_rstd;    // (N)      statistics of ln_1's input (gpt2: x_in; openai-gpt: s1)
    std::vector<Real> qkv;                   // (N,3C)
    std::vector<Real> probs;                 // (b,H,T,T) attention probabilities, 0 above the diagonal
    std::vector<Real> heads;                 // (N,C)    attention output before c_proj
    std::vector<Real> s1;                    // (N,C)    x_in + attention branch
    std::vector<Real> m_in;                  // (N,C)    input of the MLP
    std::vector<Real> ln2_mean, ln2_rstd;    // (N)      statistics of ln_2's input (gpt2: s1; openai-gpt: s2)
    std::vector<Real> fc_pre, fc_act;        // (N,F)    MLP hidden layer before / after the activation
    std::vector<Real> s2;                    // (N,C)    m_in or s1 + MLP branch
    std::vector<Real> attn_mask, mlp_mask;   // (N,C)    dropout multipliers of the two branches
  };
  std::vector<Block> blocks;
  std::vector<Real> emb_mask;                  // (N,C)    dropout multipliers of the embeddings
  std::vector<Real> x_final;                   // (N,C)    output of the last block
  std::vector<Real> lnf, lnf_mean, lnf_rstd;   // (N,C), (N), (N)   gpt2's final LayerNorm
  std::vector<Real> logits;                    // (N,V)    logits, then d loss / d logits
  std::vector<Real> label_logits;              // (n_labels) one sequence's, then d loss / d them
  // backward scratch
  std::vector<Real> dx, dtmp, dheads, dbranch;   // (N,C)
  std::vector<Real> dqkv;                        // (N,3C)
  std::vector<Real> dfc;                         // (N,F)
  std::vector<Real> dprobs;                      // (T,T)
};

// Dropout as in GPT-2 (embd_pdrop, resid_pdrop): each element of the embeddings and of the
// attention and MLP branches is zeroed with probability p, the rest scaled by 1/(1-p). The masks
// come from (seed, sequence index, site) alone, so they do not depend on how a batch is split into
// shards, and a loss recomputed with the same seed sees the same masks (finite differences).
struct Dropout {
  double p = 0;             // 0: off (evaluation)
  std::uint64_t seed = 0;   // per training step
  int first_sequence = 0;   // index of this call's first sequence in the whole batch
};

// What one call scores: b sequences of T tokens.
struct Batch {
  const std::int32_t* inputs;    // (b,T) ids
  const std::int32_t* targets;   // (b,T) the token each position predicts, or kIgnoreTarget
  int b, T;
  const std::int32_t* labels = nullptr;            // (b) classifiers: each sequence's class
  const std::int32_t* label_positions = nullptr;   // (b) the position whose final hidden state is classified
};

// The gradient computed is that of  lm * (sum of the LM losses) + label * (sum of the label
// losses): callers that split a batch pass the whole batch's normalisers (lm = 1 / predicted
// tokens, label = 1 / sequences) and add the sums.
struct LossWeights {
  double lm = 1;
  double label = 0;
};

struct Losses {
  double lm_sum = 0;                // cross-entropy of the targets that are not kIgnoreTarget, summed (nats)
  std::int64_t lm_count = 0;        // how many
  double label_sum = 0;             // cross-entropy of the labels, summed (classifiers)
  std::int64_t label_correct = 0;   // labels whose logit is the largest
};

// The losses of a batch: next-token (or masked-token) cross-entropy through the tied LM head at
// every position with a target, and for a classifier the cross-entropy of each sequence's label.
// Attention is causal unless config.bidirectional. If grads is not null, adds the gradient
// (weighted as LossWeights says) with respect to every parameter to grads (laid out as params).
// Ids and labels must be in range and T <= n_positions (the caller checks).
template <class Real>
Losses loss_and_gradients(const ModelConfig& config, const ParameterLayout& layout, const Real* params, Real* grads,
                          const Batch& batch, const LossWeights& weights, Workspace<Real>& ws,
                          const Dropout& dropout = {});

}   // namespace glassbox::training
