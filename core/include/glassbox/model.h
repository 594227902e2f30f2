// A decoder-only transformer (GPT-2, openai-gpt, Llama, Mistral, Qwen2/3, GPT-NeoX, GPT-Neo): weights,
// and the forward pass with a KV cache.
//
//   tokens (T) -> embeddings (T,C) -> n_layer blocks (T,C) -> [final LayerNorm] -> logits (T,V)
//
// The weights are read once (converted to F32) and never change, so one Model can serve any
// number of KV caches, one per sequence being generated.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/kv_cache.h"
#include "glassbox/safetensors.h"
#include "glassbox/sampler.h"

namespace glassbox {

struct ModelWeights;   // model/weights.h

// An intermediate tensor of the forward pass, shown to a TensorHook as it is computed.
//   name        layer  shape
//   inp_embd    -1     (T, C)        token + position embeddings
//   attn_probs  l      (H, T, S)     attention probabilities; S = positions in the cache after
//                                    this call; zero above the causal diagonal (when causal)
//   attn_z      l      (T, Dq)       attention-weighted values of every head before the output
//                                    projection (TransformerLens's z), head after head;
//                                    Dq = n_head x head_dim
//   attn_out    l      (T, C)        attention output after the projection
//   mlp_act     l      (T, F)        the MLP's neurons: its hidden layer after the nonlinearity (a
//                                    gated MLP's act(gate) * up, what enters down_proj)
//   mlp_out     l      (T, C)        MLP output
//   block_out   l      (T, C)        residual stream leaving block l
//   logits      -1     (R, V)        R = T, 1 or logit_rows.size(), see ForwardOptions
struct NamedTensor {
  const char* name;
  int layer;
  int rank;
  std::array<int, 3> shape;
  const float* data;
};
using TensorHook = std::function<void(const NamedTensor&)>;

struct ForwardOptions {
  bool all_logits = false;   // logits for every position (T,V), not only the last (1,V)
  // Logits for these positions of the call's tokens only, increasing, each below T: (R,V) with R
  // = logit_rows.size(), the final norm and the LM head run on those rows alone (a masked LM
  // needs its masks' rows, not T x V). Each row is bit for bit that position's row with
  // all_logits. Empty: as all_logits says. Not with all_logits or the lens.
  std::span<const std::int32_t> logit_rows = {};
  const TensorHook* hook = nullptr;   // nullptr: no capture, and attention probabilities are never
                                      // written out (the kernel keeps one row at a time)
  bool causal = true;   // false (and always for a "bidirectional" model): every query sees every key, later ones too
                        // (an encoder's bidirectional attention, as BERT's), with the same weights: what a decoder's
                        // mask keeps it from seeing; the whole sequence in one call, from an empty cache
  // (S, C): an encoder's outputs, which the blocks of a model with add_cross_attention attend to
  // (queries from the decoder, keys and values from these); empty: those blocks are skipped, as
  // Hugging Face does.
  std::span<const float> encoder_states = {};
  // Hugging Face's head_mask: (n_layer, n_head) factors that each head's attention probabilities
  // are multiplied by before they weigh the values (1 keeps a head, 0 silences it); a hook sees
  // the multiplied probabilities. Empty: every head as it is.
  std::span<const float> head_mask = {};
  // Hugging Face's output_hidden_states, into *hidden_states when set: (n_layer + 1, T, C), the
  // embeddings, then each block's output, the last one after the final norm where the model has
  // one (gpt2; openai-gpt has none). Costs a copy of the rows per block; nothing when not set.
  std::vector<float>* hidden_states = nullptr;
  // The logit lens, into *lens when set: (n_layer, R, lens_k), R the rows logits are computed for
  // (all_logits): for each block's output, the lens_k most probable next tokens it would give were
  // it the last block (the final norm where the model has one, then the tied LM head), most
  // probable first. Costs one norm and one LM head per block and row; nothing when not set.
  int lens_k = 0;
  std::vector<TokenProbability>* lens = nullptr;
  // The ids that have a token: 0 .. tokenizer_size - 1 (the tokenizer's Tokenizer::vocab_size()).
  // A config vocab_size above it (exports padded to a round number: GPT-2's 50,257 tokens as
  // 50,304) leaves ids with no token: their logits are -inf, so that no sampler picks them and
  // the lens never shows them (the one exception to the rule that results are finite). 0, or
  // vocab_size or more: every id has a token.
  int tokenizer_size = 0;
  // Steering (activation addition): steer (C floats, empty: none) is added to the residual stream
  // entering block steer_layer at every position of the call (glassbox/experiments.h makes one).
  std::span<const float> steer = {};
  int steer_layer = 0;
};

// How the matrices are held in memory (and multiplied).
enum class Quantization {
  None,   // F32, as in the file (F16/BF16 files are widened)
  Int8,   // blocks of 32 int8 values with a float scale each, made at load; products with integer
          // dot products against activations quantized the same way (kernels/quantized.h).
          // ~3.6x fewer bytes to stream per token; embeddings, biases and norms stay F32.
  Int4,   // blocks of 32 values in [-8, 7] with a float scale each (llama.cpp's Q4_0 rule), made at
          // load, against int8 activations: ~6.4x fewer bytes than F32, at a larger error.
};
// "none", "int8" or "int4"; throws InvalidArgument naming the accepted values otherwise.
Quantization parse_quantization(std::string_view name);
const char* quantization_name(Quantization q);

// A head mask (ForwardOptions::head_mask) that silences the heads listed as (layer, head) pairs
// and keeps every other. Throws InvalidArgument naming a layer or head the model does not have.
std::vector<float> silencing_head_mask(const ModelConfig& c, std::span<const std::array<int, 2>> heads);

// How the F32 matrix products (Quantization::None) round each multiply-add. The int8 and int4
// products sum integers, the same either way.
enum class Arithmetic {
  Fused,      // one fused multiply-add (FMA), rounded once, on CPUs that have FMA (x86-64-v3 and
              // later, ARMv8): faster prompts (docs/performance.md, FMA). Its own bits, within float
              // rounding of Portable's (docs/testing.md, Fused multiply-adds). Elsewhere, and in
              // WebAssembly, which has no FMA, the products are Portable's.
  Portable,   // a multiply, then an add, each rounded: the same bits on every CPU and in
              // WebAssembly (the JS API and the page), token for token and logit for logit.
};
// "fused" or "portable"; throws InvalidArgument naming the accepted values otherwise.
Arithmetic parse_arithmetic(std::string_view name);
const char* arithmetic_name(Arithmetic a);

struct LoadOptions {
  Quantization quantize = Quantization::None;
  // The most memory, in bytes, the model may take: Model::load refuses (InvalidArgument, before it
  // allocates anything) a model whose load_memory() plus a full context's KV cache
  // (kv_cache_bytes) is more. 0: the memory the system has available (available_memory()).
  std::uint64_t max_memory = 0;
  // The context: the most positions a sequence (its KV cache) holds, 1 .. n_positions. 0:
  // min(n_positions, kDefaultContext). Models with a long position range (Llama 3.2: 131,072)
  // would otherwise reserve a KV cache, and count it in the memory check, far beyond what most
  // uses need; GPT-2's 1,024 are all kept.
  int context = 0;
  Arithmetic arithmetic = Arithmetic::Fused;
};
inline constexpr int kDefaultContext = 4096;

// The context a model loaded with `asked` (LoadOptions::context) runs with. Throws InvalidArgument
// for a negative one or one beyond the model's n_positions.
int context_length(const ModelConfig& c, int asked);
// The most memory one sequence's KV cache takes at this context (KVCache::peak_bytes for the
// model's key/value width: kv_heads x head_dim per layer, less than n_embd with grouped-query
// attention).
std::uint64_t kv_cache_bytes(const ModelConfig& c, int context);

class Model {
 public:
  // Loads a Hugging Face model directory: config.json + model.safetensors, or else the shards that
  // model.safetensors.index.json names (memory-mapped, joined into one set: SafeTensors::join).
  // Throws ModelFormatError naming the file and the problem.
  static Model load(const std::filesystem::path& dir, const LoadOptions& options = {});
  // The same from a parsed config.json text and an already opened weights file.
  static Model from_parts(const std::string& config_json, const SafeTensors& weights,
                          const std::string& config_source = "config.json", const LoadOptions& options = {});

  // Bytes of memory that loading a model through a ModelLoader takes at most (the file itself is
  // never held): the converted, packed or quantized arrays the model keeps, the loader's staging
  // buffer, and the largest F32 copy a matrix passes through. Needs only config.json and the start
  // of model.safetensors up to the end of its header (`weights_prefix`), so that a caller can check
  // before it reads the rest: the WebAssembly build refuses a model its 4 GB heap cannot hold.
  // Throws as ModelLoader does for a bad header or tensors that do not fit the config.
  static std::uint64_t load_memory(const std::string& config_json, std::span<const std::byte> weights_prefix,
                                   const LoadOptions& options = {});
  // The same for a sharded checkpoint: model.safetensors.index.json's text and each shard's start
  // through its header, in the order of ShardIndex::files.
  static std::uint64_t load_memory(const std::string& config_json, const std::string& index_json,
                                   std::span<const std::span<const std::byte>> shard_prefixes,
                                   const LoadOptions& options = {});

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelConfig& config() const;
  const std::string& config_json() const;   // config.json as given
  Quantization quantization() const;
  // The arithmetic the F32 products use: LoadOptions::arithmetic, or Portable where the products
  // cannot fuse (no FMA on this CPU, WebAssembly, or a quantized model).
  Arithmetic arithmetic() const;
  // The most positions a sequence holds: LoadOptions::context, or its default (context_length).
  int context() const;

  // A cache for one sequence (allocates; see KVCache).
  KVCache new_cache() const;

  // Runs `tokens` at positions cache.size() .. cache.size()+T-1, appends them to the cache and
  // returns logits, (1,V) for the last position or (T,V) with options.all_logits.
  // Throws InvalidArgument for no tokens, an id outside the vocabulary, a sequence longer than
  // the context, a head mask that is not n_layer x n_head finite factors, a lens_k outside
  // 1..vocab_size, or a steering vector that is not n_embd finite floats for a layer the model
  // has; the cache is unchanged then. Throws ModelFormatError, the cache unchanged too,
  // when the results (logits, lens) are not finite (NaN or infinity, but for the -inf of ids
  // without a token: ForwardOptions::tokenizer_size), naming where the first non-finite value
  // appears (the tensor, its layer and position: found by running the pass again, only then).
  std::vector<float> forward(std::span<const std::int32_t> tokens, KVCache& cache,
                             const ForwardOptions& options = {}) const;

  // Several sequences of different lengths in one pass, each from position 0 (no cache kept):
  // they are right-padded to the longest and go through every matrix together (the weights are
  // read once for the whole batch), while a padding mask keeps the padded positions out of every
  // real position's attention, so each sequence's logits are exactly its own forward's. Returns
  // logits (T_b,V) for every position of sequence b. tokenizer_size: as ForwardOptions'. Throws
  // InvalidArgument for an empty batch, for a batch whose logits (every token's V floats) would be
  // more than kMaxBatchLogits floats (512 MB: GPT-2's 50,257 x 2,670 tokens; split such a batch
  // into several calls), or, naming the sequence, for what forward() refuses (ModelFormatError for
  // results that are not finite).
  static constexpr std::uint64_t kMaxBatchLogits = std::uint64_t(1) << 27;
  // Throws InvalidArgument, as forward_batch() does, naming it "sequence `index`", if `tokens`
  // cannot run as a batch's sequence (no tokens, longer than the context, an id outside the
  // vocabulary): a caller that runs a long batch in parts checks it all first.
  void check_sequence(std::span<const std::int32_t> tokens, std::size_t index) const;
  std::vector<std::vector<float>> forward_batch(std::span<const std::vector<std::int32_t>> batch,
                                                int tokenizer_size = 0) const;

  // A classifier's logits over its labels (config().labels names them): the final hidden state at
  // the last token through score.weight, after one forward pass from position 0 (no cache kept;
  // the LM head is not computed). Models trained by `glassbox train --task classify` end every
  // text with <|endoftext|>, the token they classify at: pass the ids with it. head_mask: heads
  // switched off, as ForwardOptions::head_mask; hook: sees the pass's tensors as forward()'s does
  // (attention probabilities, block outputs), so the label and the attention come from one pass.
  // Throws InvalidArgument for a model without a classification head, or for what forward()
  // refuses; ModelFormatError, as forward(), for logits that are not finite.
  std::vector<float> classify(std::span<const std::int32_t> tokens, std::span<const float> head_mask = {},
                              const TensorHook* hook = nullptr) const;

 private:
  friend class ModelLoader;
  friend struct ModelInternals;   // model/model_internals.h: the experiments read the weights
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  // load() in WebAssembly: the file (or each shard in turn) read in pieces into a ModelLoader.
  static Model load_streaming(const std::string& config_json, const std::string& config_source,
                              const std::vector<std::filesystem::path>& paths, const std::string& index_json,
                              const std::string& index_source, const LoadOptions& options);
  // A model of weights loaded elsewhere (ModelLoader's).
  static Model from_weights(const std::string& config_json, ModelConfig config, const LoadOptions& options,
                            ModelWeights&& weights);
  std::unique_ptr<Impl> impl_;
};

}   // namespace glassbox
