// The model's parameters in the layouts the kernels want, read from safetensors: F32 arrays, and
// the matrices optionally as int8 or int4 blocks (kernels/quantized.h).
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
// the kernels (kernels.h's layout), or int8 or int4 blocks with their scales (quantized.h's
// layouts) when the model was loaded with Quantization::Int8 or Int4. One of f32, q, q4 is set.
struct Matrix {
  const float* f32 = nullptr;         // (N,K) packed, or null when quantized
  const std::int8_t* q = nullptr;     // (Np,Kp) int8 blocks
  const std::uint8_t* q4 = nullptr;   // (Np,Kp/2) int4 blocks
  const float* d = nullptr;           // the blocks' scales
  int N = 0, K = 0;
  bool fused = false;   // F32 products with fused multiply-adds (kernels::matmul_fused; Arithmetic::Fused)
};

// Matrices are (out, in), as nn.Linear: GPT's Conv1D weights, stored (in, out), are transposed
// on load so that every product is kernels::matmul. Shapes: C the width (n_embd), F the MLP's,
// Dq = n_head * head_dim and Dkv = kv_heads * head_dim the widths of q and of k and v. A weight a
// model does not have is null (biases, LayerNorm's bias under RMSNorm) or an empty Matrix.
struct LayerWeights {
  const float* ln_1_w = nullptr;   // (C)  the attention's norm
  const float* ln_1_b = nullptr;   // (C)  LayerNorm only
  // q, k and v: one fused matrix (gpt2's attn.c_attn, [q | k | v]; gpt_neox's query_key_value,
  // [q_h | k_h | v_h] head after head), or three (q_proj, k_proj, v_proj): QkvLayout says which.
  Matrix qkv_w;                   // (Dq + 2 Dkv, C)
  const float* qkv_b = nullptr;   // (Dq + 2 Dkv)
  Matrix q_w, k_w, v_w;           // (Dq, C), (Dkv, C), (Dkv, C)
  const float *q_b = nullptr, *k_b = nullptr, *v_b = nullptr;
  const float* q_norm_w = nullptr;    // (head_dim) qwen3's per-head RMSNorm of q
  const float* k_norm_w = nullptr;    // (head_dim) and of k
  Matrix proj_w;                      // (C, Dq)   the attention's output projection
  const float* proj_b = nullptr;      // (C)
  const float* ln_2_w = nullptr;      // (C)  the MLP's norm
  const float* ln_2_b = nullptr;      // (C)
  Matrix fc_w;                        // (F, C)    mlp.c_fc; a gated MLP's up_proj
  const float* fc_b = nullptr;        // (F)
  Matrix gate_w;                      // (F, C)    a gated MLP's gate_proj
  const float* gate_b = nullptr;      // (F)
  Matrix fc_proj_w;                   // (C, F)  mlp.c_proj; down_proj
  const float* fc_proj_b = nullptr;   // (C)
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

// Row n of a matrix (K floats) into out: read from the packed form, or the int8 or int4 row times
// its blocks' scales.
void matrix_row(const Matrix& m, int n, float* out);

// Rows looked up one at a time (the token embedding): F32, or a 16-bit checkpoint's F16/BF16
// values as the file has them, widened row by row. Half the memory of F32 rows, the same values:
// Llama-3.2-3B's embedding is 1.6 GB as F32 and 0.8 GB as BF16, the difference between fitting in
// WebAssembly's 4 GB with its int4 weights and not.
struct RowTable {
  const std::byte* data = nullptr;   // (rows, cols) of dtype, any alignment
  DType dtype = DType::F32;
  int cols = 0;
  void row(std::int64_t r, float* out) const;   // row r (cols floats) into out
};

// How a checkpoint holds q, k and v (LayerWeights): by its architecture.
enum class QkvLayout {
  Fused,          // qkv_w, rows [q | k | v]                     gpt2, openai-gpt
  FusedPerHead,   // qkv_w, rows [q_0 k_0 v_0 | q_1 k_1 v_1 ..]   gpt_neox (one head's three together)
  Separate,       // q_w, k_w, v_w                               llama, mistral, qwen2, qwen3, gpt_neo
};
QkvLayout qkv_layout(const ModelConfig& c);

struct ModelWeights {
  RowTable wte;                 // (V, C) token embedding, rows for looking tokens up
  Matrix lm_head;               // (V, C) the output head: the same weights (tied) packed or int8, or its own
  const float* wpe = nullptr;   // (P, C) position embedding (null with rotary positions)
  std::vector<LayerWeights> layers;
  const float* ln_f_w = nullptr;   // (C) the final norm (openai-gpt has none)
  const float* ln_f_b = nullptr;   // LayerNorm only
  const float* score = nullptr;    // (n_labels, C) classifiers only: score.weight, F32 rows

  SafeTensors file;   // keeps mapped F32 tensors alive (used in place)
  // Converted, packed or quantized tensors, on huge pages where there are (arena.h says why).
  // Uninitialised on allocation (every element is written once): zero-filling GPT-2 small's
  // 500 MB first would cost a pass over fresh memory for nothing.
  Arena owned;
};

// Sets Matrix::fused on every F32 matrix of the model (Arithmetic::Fused where the CPU has FMA).
void use_fused_products(ModelWeights& w);

// Where the file's bytes are while its tensors are converted.
enum class WeightSource {
  Kept,       // all of it, for as long as the model lives (a mapping, or a buffer the model owns):
              // aligned F32 tensors that stay F32 rows are used where they are, not copied
  Streamed,   // a tensor at a time as they arrive (ModelLoader): every array is the model's own
};

// A matrix's packed or quantized destination (Matrix's arrays, writable), and how the file holds it.
struct MatrixJob {
  float* packed = nullptr;      // (N,K) packed F32, or null when quantized
  std::int8_t* q = nullptr;     // int8 blocks and their scales (kernels/quantized.h)
  std::uint8_t* q4 = nullptr;   // or int4 blocks
  float* d = nullptr;
  int N = 0, K = 0;
  bool transpose = false;   // stored (K,N), as GPT's Conv1D weights
  bool quantized = false;   // int8 or int4 (q or q4, d) rather than packed
};

// What becomes of one tensor of the file: planned from the header, before its bytes are read.
// A tensor with neither (a causal-mask buffer, the tied copy of the LM head, a stored sinusoidal
// table) is checked and skipped.
struct TensorJob {
  const TensorInfo* tensor = nullptr;
  bool to_rows = false;   // kept as F32 rows: `rows` (null when only counting)
  float* rows = nullptr;
  bool to_raw_rows = false;          // or kept as the file's bytes (16-bit rows, RowTable), copied in:
  std::byte* raw_rows = nullptr;     // `raw_rows` (null when only counting)
  std::optional<MatrixJob> matrix;   // the tensor as a matrix for the kernels (made from the rows when both)
  bool skipped() const { return !to_rows && !to_raw_rows && !matrix; }
};

// The model's arrays, allocated but not yet written, and one job for each tensor of the file in
// the order of their bytes (by offset). Finds and checks every tensor (dtype, shape against the
// config, no unexpected tensors) first: throws ModelFormatError naming the file and the tensor.
// With Quantization::Int8 or Int4 every matrix is quantized (the F32 form is not kept); the embeddings,
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

// Whether a Streamed job's bytes go straight into its rows, with no staging (its F32 rows when the
// file has F32, or its raw rows), and where.
bool streams_into_rows(const TensorJob& job);
std::byte* rows_bytes(const TensorJob& job);

// The staging buffer a Streamed load needs: the largest tensor it gathers whole before converting
// (one that is neither skipped nor streamed into its rows).
std::uint64_t staging_bytes(const std::vector<TensorJob>& jobs);

}   // namespace glassbox
