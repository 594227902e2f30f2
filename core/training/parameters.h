// The parameters of a model being trained: every tensor of the Hugging Face layout, in one flat
// array, so that the optimizer, gradient clipping and checkpoints treat them as one vector while
// the layers see named matrices.
//
// Matrices keep Hugging Face's storage order, which is what a saved model must contain anyway:
//   gpt2 / openai-gpt Conv1D weights are (in, out): y (N,out) = x (N,in) @ W (in,out) + b
//   wte (V,C), wpe (P,C): one row per token / position; the LM head is wte (tied)
//   score.weight (n_labels, C): a classifier's head (nn.Linear layout, no bias), last
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "glassbox/config.h"

namespace glassbox::training {

// Where one named tensor lives in the flat array.
struct TensorSlot {
  std::string name;   // Hugging Face name, without the "transformer." prefix
  std::vector<std::int64_t> shape;
  std::size_t offset;      // in elements
  std::size_t size;        // elements
  bool decay;              // AdamW weight decay applies: the 2-D tensors (matrices)
  bool trainable = true;   // false: fixed (sinusoidal positions): no gradient, no update
};

// The tensors of one block, as pointers into a flat array (parameters or their gradients).
template <class Real>
struct LayerView {
  Real* ln_1_w;      // (C)
  Real* ln_1_b;      // (C)
  Real* qkv_w;       // (C, 3C)  attn.c_attn
  Real* qkv_b;       // (3C)
  Real* proj_w;      // (C, C)   attn.c_proj
  Real* proj_b;      // (C)
  Real* ln_2_w;      // (C)
  Real* ln_2_b;      // (C)
  Real* fc_w;        // (C, F)   mlp.c_fc
  Real* fc_b;        // (F)
  Real* fc_proj_w;   // (F, C)   mlp.c_proj
  Real* fc_proj_b;   // (C)
};

template <class Real>
struct ModelView {
  Real* wte;   // (V, C)
  Real* wpe;   // (P, C)
  std::vector<LayerView<Real>> layers;
  Real* ln_f_w = nullptr;   // (C) gpt2 only
  Real* ln_f_b = nullptr;
  Real* score = nullptr;   // (n_labels, C) classifiers only: score.weight
};

// The list of tensors a config implies, in a fixed order (the order of the flat array).
class ParameterLayout {
 public:
  explicit ParameterLayout(const ModelConfig& config);

  const std::vector<TensorSlot>& slots() const { return slots_; }
  std::size_t size() const { return size_; }   // elements in all
  const TensorSlot* find(const std::string& name) const;

  // Named pointers into `base`, an array of size() elements laid out as slots() says.
  template <class Real>
  ModelView<Real> view(Real* base) const;

 private:
  ModelConfig config_;
  std::vector<TensorSlot> slots_;
  std::size_t size_ = 0;
  int ln_f_slot_ = -1, score_slot_ = -1;
};

// GPT-2's initialisation (as in OpenAI's and nanoGPT's code): weights ~ N(0, 0.02); the two
// projections back into the residual stream (attn.c_proj, mlp.c_proj) ~ N(0, 0.02/sqrt(2 n_layer))
// so that the residual stream's variance does not grow with depth; biases 0; LayerNorm weights 1.
// Deterministic for a seed, on every platform (its own generator, no std:: distributions).
std::vector<float> initial_parameters(const ParameterLayout& layout, int n_layer, std::uint64_t seed);

}   // namespace glassbox::training
