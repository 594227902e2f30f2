// The model's parameters as F32 arrays in the layouts the kernels want, read from safetensors.
#pragma once

#include <memory>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/safetensors.h"

namespace glassbox {

// Matrices are (out, in), as nn.Linear: GPT's Conv1D weights, stored (in, out), are transposed
// on load so that every product is kernels::matmul.
struct LayerWeights {
  const float* ln_1_w;   // (C)
  const float* ln_1_b;   // (C)
  const float* qkv_w;    // (3C, C)   attn.c_attn
  const float* qkv_b;    // (3C)
  const float* proj_w;   // (C, C)    attn.c_proj
  const float* proj_b;   // (C)
  const float* ln_2_w;   // (C)
  const float* ln_2_b;   // (C)
  const float* fc_w;     // (F, C)    mlp.c_fc
  const float* fc_b;     // (F)
  const float* fc_proj_w;  // (C, F)  mlp.c_proj
  const float* fc_proj_b;  // (C)
};

struct ModelWeights {
  const float* wte;      // (V, C) token embedding, also the LM head
  const float* wpe;      // (P, C) position embedding
  std::vector<LayerWeights> layers;
  const float* ln_f_w = nullptr;   // (C) gpt2 only
  const float* ln_f_b = nullptr;

  SafeTensors file;                    // keeps mapped F32 tensors alive (used in place)
  // Converted or transposed tensors. Uninitialised on allocation (every element is written once):
  // zero-filling GPT-2 small's 500 MB first would cost a pass over fresh memory for nothing.
  std::vector<std::unique_ptr<float[]>> owned;
};

// Finds, checks (dtype, shape against the config, no unexpected tensors) and converts every
// parameter. Throws ModelFormatError naming the file and the tensor.
ModelWeights load_weights(const ModelConfig& config, const SafeTensors& file);

}  // namespace glassbox
