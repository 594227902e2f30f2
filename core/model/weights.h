// The model's parameters in the layouts the kernels want, read from safetensors: F32 arrays, and
// the matrices optionally as int8 blocks (kernels/quantized.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "model/arena.h"
#include "glassbox/config.h"
#include "glassbox/model.h"
#include "glassbox/safetensors.h"

namespace glassbox {

// A weight matrix (N,K) in nn.Linear layout, the operand of every matrix product: F32 packed for
// the kernels (kernels.h's layout), or int8 blocks with their scales (quantized.h's layout) when
// the model was loaded with Quantization::Int8.
struct Matrix {
  const float* f32 = nullptr;       // (N,K) packed, or null when quantized
  const std::int8_t* q = nullptr;   // (Np,Kp) int8 blocks
  const float* d = nullptr;         // their scales
  int N = 0, K = 0;
};

// Matrices are (out, in), as nn.Linear: GPT's Conv1D weights, stored (in, out), are transposed
// on load so that every product is kernels::matmul.
struct LayerWeights {
  const float* ln_1_w;   // (C)
  const float* ln_1_b;   // (C)
  Matrix qkv_w;          // (3C, C)   attn.c_attn
  const float* qkv_b;    // (3C)
  Matrix proj_w;         // (C, C)    attn.c_proj
  const float* proj_b;   // (C)
  const float* ln_2_w;   // (C)
  const float* ln_2_b;   // (C)
  Matrix fc_w;           // (F, C)    mlp.c_fc
  const float* fc_b;     // (F)
  Matrix fc_proj_w;        // (C, F)  mlp.c_proj
  const float* fc_proj_b;  // (C)
  // Cross-attention (config add_cross_attention; otherwise null/empty): queries from this block's
  // stream, keys and values from an encoder's outputs.
  const float* ln_cross_w = nullptr;   // (C)       ln_cross_attn
  const float* ln_cross_b = nullptr;
  Matrix cross_q_w;                    // (C, C)    crossattention.q_attn
  const float* cross_q_b = nullptr;
  Matrix cross_kv_w;                   // (2C, C)   crossattention.c_attn: [k | v]
  const float* cross_kv_b = nullptr;
  Matrix cross_proj_w;                 // (C, C)    crossattention.c_proj
  const float* cross_proj_b = nullptr;
};

struct ModelWeights {
  const float* wte;      // (V, C) token embedding, F32 rows for looking tokens up
  Matrix lm_head;        // (V, C) the same weights (tied), packed or int8, as the LM head's matrix
  const float* wpe;      // (P, C) position embedding
  std::vector<LayerWeights> layers;
  const float* ln_f_w = nullptr;   // (C) gpt2 only
  const float* ln_f_b = nullptr;
  const float* score = nullptr;    // (n_labels, C) classifiers only: score.weight, F32 rows

  SafeTensors file;                    // keeps mapped F32 tensors alive (used in place)
  // Converted, packed or quantized tensors, on huge pages where there are (arena.h says why).
  // Uninitialised on allocation (every element is written once): zero-filling GPT-2 small's
  // 500 MB first would cost a pass over fresh memory for nothing.
  Arena owned;
};

// Finds, checks (dtype, shape against the config, no unexpected tensors) and converts every
// parameter. Throws ModelFormatError naming the file and the tensor.
// With Quantization::Int8 every matrix is quantized as it is read (the F32 form is not kept); the
// embeddings, biases and LayerNorm parameters stay F32.
ModelWeights load_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize);

// What load_weights allocates for this config and file, counted without converting anything (the
// file may be a header alone, SafeTensors::parse_header): the arrays the model keeps, and the
// largest F32 copy it makes on the way and frees at once. Checks the tensors as load_weights does.
struct LoadFootprint {
  std::uint64_t owned = 0;
  std::uint64_t transient = 0;
};
LoadFootprint load_footprint(const ModelConfig& config, const SafeTensors& file, Quantization quantize);

}  // namespace glassbox
