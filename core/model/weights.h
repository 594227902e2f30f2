// The model's parameters in the layouts the kernels want, read from safetensors: F32 arrays, and
// the matrices optionally as int8 blocks (kernels/quantized.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
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
  const float* ln_1_w;      // (C)
  const float* ln_1_b;      // (C)
  Matrix qkv_w;             // (3C, C)   attn.c_attn
  const float* qkv_b;       // (3C)
  Matrix proj_w;            // (C, C)    attn.c_proj
  const float* proj_b;      // (C)
  const float* ln_2_w;      // (C)
  const float* ln_2_b;      // (C)
  Matrix fc_w;              // (F, C)    mlp.c_fc
  const float* fc_b;        // (F)
  Matrix fc_proj_w;         // (C, F)  mlp.c_proj
  const float* fc_proj_b;   // (C)
  // Cross-attention (config add_cross_attention; otherwise null/empty): queries from this block's
  // stream, keys and values from an encoder's outputs.
  const float* ln_cross_w = nullptr;   // (C)       ln_cross_attn
  const float* ln_cross_b = nullptr;
  Matrix cross_q_w;   // (C, C)    crossattention.q_attn
  const float* cross_q_b = nullptr;
  Matrix cross_kv_w;   // (2C, C)   crossattention.c_attn: [k | v]
  const float* cross_kv_b = nullptr;
  Matrix cross_proj_w;   // (C, C)    crossattention.c_proj
  const float* cross_proj_b = nullptr;
};

struct ModelWeights {
  const float* wte;   // (V, C) token embedding, F32 rows for looking tokens up
  Matrix lm_head;     // (V, C) the same weights (tied), packed or int8, as the LM head's matrix
  const float* wpe;   // (P, C) position embedding
  std::vector<LayerWeights> layers;
  const float* ln_f_w = nullptr;   // (C) gpt2 only
  const float* ln_f_b = nullptr;
  const float* score = nullptr;   // (n_labels, C) classifiers only: score.weight, F32 rows

  SafeTensors file;   // keeps mapped F32 tensors alive (used in place)
  // Converted, packed or quantized tensors, on huge pages where there are (arena.h says why).
  // Uninitialised on allocation (every element is written once): zero-filling GPT-2 small's
  // 500 MB first would cost a pass over fresh memory for nothing.
  Arena owned;
};

// Where the file's bytes are while its tensors are converted.
enum class WeightSource {
  Kept,       // all of it, for as long as the model lives (a mapping, or a buffer the model owns):
              // aligned F32 tensors that stay F32 rows are used where they are, not copied
  Streamed,   // a tensor at a time as they arrive (ModelLoader): every array is the model's own
};

// A matrix's packed or int8 destination (Matrix's arrays, writable), and how the file holds it.
struct MatrixJob {
  float* packed = nullptr;    // (N,K) packed F32, or null when quantized
  std::int8_t* q = nullptr;   // int8 blocks and their scales (kernels/quantized.h)
  float* d = nullptr;
  int N = 0, K = 0;
  bool transpose = false;   // stored (K,N), as GPT's Conv1D weights
  bool int8 = false;        // quantized (q, d) rather than packed
};

// What becomes of one tensor of the file: planned from the header, before its bytes are read.
// A tensor with neither (a causal-mask buffer, the tied copy of the LM head, a stored sinusoidal
// table) is checked and skipped.
struct TensorJob {
  const TensorInfo* tensor = nullptr;
  bool to_rows = false;   // kept as F32 rows: `rows` (null when only counting)
  float* rows = nullptr;
  std::optional<MatrixJob> matrix;   // the tensor as a matrix for the kernels (made from the rows when both)
  bool skipped() const { return !to_rows && !matrix; }
};

// The model's arrays, allocated but not yet written, and one job for each tensor of the file in
// the order of their bytes (by offset). Finds and checks every tensor (dtype, shape against the
// config, no unexpected tensors) first: throws ModelFormatError naming the file and the tensor.
// With Quantization::Int8 every matrix is quantized (the F32 form is not kept); the embeddings,
// biases and LayerNorm parameters stay F32. `file` may be a header alone (SafeTensors::parse_header)
// when the source is Streamed.
struct WeightPlan {
  ModelWeights weights;
  std::vector<TensorJob> jobs;
};
WeightPlan plan_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize, WeightSource source);

// Writes a job's arrays from `bytes`, the whole tensor as in the file (any alignment); or, for a
// job with F32 rows, from its rows once the tensor's F32 bytes have been written there.
void convert_tensor(const TensorJob& job, std::span<const std::byte> bytes);

// The model's parameters from a whole file in memory (WeightSource::Kept): planned, then
// converted in file order, each tensor's pages dropped after it (SafeTensors::drop_pages).
ModelWeights load_weights(const ModelConfig& config, const SafeTensors& file, Quantization quantize);

// What loading allocates for this config and file, counted from the plan without allocating
// anything (the file may be a header alone): the arrays the model keeps; with a Streamed source,
// the buffer that gathers each tensor that cannot be written straight into its place (the largest
// one's bytes); and the largest F32 copy a matrix passes through on the way, freed at once.
struct LoadFootprint {
  std::uint64_t owned = 0;
  std::uint64_t staging = 0;
  std::uint64_t transient = 0;
  std::uint64_t peak() const { return owned + staging + transient; }
};
LoadFootprint load_footprint(const ModelConfig& config, const SafeTensors& file, Quantization quantize,
                             WeightSource source);

// Bytes of a tensor's data in the file.
std::uint64_t tensor_bytes(const TensorInfo& t);

// Whether a Streamed job's bytes go straight into its F32 rows (no staging): F32 in the file.
bool streams_into_rows(const TensorJob& job);

// The staging buffer a Streamed load needs: the largest tensor it gathers whole before converting
// (one that is neither skipped nor streamed into its rows).
std::uint64_t staging_bytes(const std::vector<TensorJob>& jobs);

}   // namespace glassbox
