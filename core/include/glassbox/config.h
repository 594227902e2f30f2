// The model's hyper-parameters, read from a Hugging Face config.json.
//
// Architectures (model_type), with Hugging Face's names and defaults:
//   "gpt2"        pre-LayerNorm blocks and a final LayerNorm (GPT2Config)
//   "openai-gpt"  post-LayerNorm blocks, no final LayerNorm, as in the original GPT (OpenAIGPTConfig)
// and the decoders described by features (config_decoders.cpp; every one pre-norm with a final norm):
//   "llama"       RMSNorm, rotary, SwiGLU, grouped-query attention (LlamaConfig)
//   "mistral"     as llama, with a sliding window on every layer (MistralConfig)
//   "qwen2"       as llama, with q/k/v biases; windows only with use_sliding_window (Qwen2Config)
//   "qwen3"       as qwen2 without the biases, with a per-head RMSNorm of q and k (Qwen3Config)
//   "gpt_neox"    LayerNorm, partial rotary, GELU MLP, parallel residual (GPTNeoXConfig)
//   "gpt_neo"     LayerNorm, learned positions, global and local layers, unscaled scores (GPTNeoConfig)
// The forward pass asks the features (norm, mlp, position_encoding, rotary, biases, windows, ...),
// never which of these it is; the architecture names the checkpoint's tensor layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox {

enum class Architecture { GPT2, OpenAIGPT, Llama, Mistral, Qwen2, Qwen3, GPTNeoX, GPTNeo };

// The MLP non-linearity. Hugging Face's names map onto these as follows (the same name means
// different things in the two configs, which is why parsing is per architecture):
//   gpt2 activation_function: "gelu" -> GeluErf, "gelu_new" / "gelu_pytorch_tanh" / "gelu_fast" -> GeluTanh
//   openai-gpt afn:           "gelu" -> GeluTanh (the original GPT code's approximation)
//   both: "relu" -> Relu, "silu" / "swish" -> Silu
//   the decoders' hidden_act / activation_function: as gpt2's (transformers' ACT2FN), so gpt_neox's
//   "gelu" is the erf form and gpt_neo's "gelu_new" the tanh form
enum class Activation { GeluTanh, GeluErf, Relu, Silu };

// How positions enter the residual stream. Learned: a trained (n_positions, n_embd) table, GPT-2's
// wpe (the default, and what every Hugging Face checkpoint has). Sinusoidal: the fixed table of
// "Attention Is All You Need" (sinusoidal_positions below), never trained; a config choice for
// models this project trains ("position_encoding": "sinusoidal" in config.json). Its models
// still store the table as wpe.weight, so other GPT-2 loaders run them unchanged.
// Rotary: no table; q and k are rotated by their position (ModelConfig::rotary, model/rotary.h).
enum class PositionEncoding { Learned, Sinusoidal, Rotary };

// The normalisation of every block and of the final norm. LayerNorm: (x - mean) / sqrt(var + eps)
// * weight + bias. RMSNorm: x / sqrt(mean(x^2) + eps) * weight, no bias (LlamaRMSNorm).
enum class Norm { LayerNorm, RMSNorm };

// The MLP. Plain: down(act(up(x))), GPT-2's c_fc / c_proj. Gated: down(act(gate(x)) * up(x)),
// Llama's gate_proj / up_proj / down_proj; with act silu it is SwiGLU.
enum class Mlp { Plain, Gated };

// How rotary frequencies are scaled (rope_scaling / rope_parameters "rope_type"); other types
// are refused when the config is read.
//   Default: inv_freq[i] = 1 / theta^(2i / rot_dim)
//   Linear:  inv_freq / factor
//   Llama3:  low frequencies / factor, high ones kept, a smooth blend between (model/rotary.cpp)
enum class RopeScaling { Default, Linear, Llama3 };

// Rotary positions, rotate-half convention: each head's first rotary_dim() dimensions are
// rotated, dimension i paired with i + rotary_dim()/2; the rest pass unchanged.
struct Rotary {
  double theta = 10000.0;   // rope_theta (gpt_neox: rotary_emb_base)
  double fraction = 1.0;    // partial_rotary_factor (gpt_neox: rotary_pct, default 0.25)
  RopeScaling scaling = RopeScaling::Default;
  double factor = 1.0;                        // Linear and Llama3
  double low_freq_factor = 1.0;               // Llama3
  double high_freq_factor = 4.0;              // Llama3
  int original_max_position_embeddings = 0;   // Llama3: the context the model was trained for
  bool operator==(const Rotary&) const = default;
};

// table (P, C): row p, column 2i = sin(p / 10000^(2i/C)), column 2i+1 = cos(p / 10000^(2i/C)).
void sinusoidal_positions(float* table, int P, int C);

struct ModelConfig {
  Architecture architecture = Architecture::GPT2;
  int vocab_size = 0;
  int n_positions = 0;   // context length: learned position embeddings for 0..n_positions-1
                         // (max_position_embeddings for the decoders)
  int n_embd = 0;        // hidden_size for the decoders
  int n_layer = 0;       // num_hidden_layers (gpt_neo: num_layers)
  int n_head = 0;        // query heads: num_attention_heads (gpt_neo: num_heads)
  int n_inner = 0;       // MLP width (Hugging Face: null means 4 * n_embd; intermediate_size for the decoders)
  PositionEncoding position_encoding = PositionEncoding::Learned;
  double layer_norm_epsilon = 1e-5;   // eps of every norm, as the config gives it (the forward pass
                                      // uses it as float): layer_norm_epsilon, layer_norm_eps or
                                      // rms_norm_eps, whichever the model type has
  Activation activation = Activation::GeluTanh;
  bool scale_attn_weights = true;                 // divide scores by sqrt(head_dim)
  bool scale_attn_by_inverse_layer_idx = false;   // gpt2 option: also divide by (layer + 1)
  bool add_cross_attention = false;               // gpt2 option: each block also attends to an encoder's outputs
                                                  // (ForwardOptions::encoder_states), between attention and MLP
  std::vector<std::int32_t> eos_token_ids;        // generation stops when one is sampled

  // The decoders' features. Their defaults are GPT-2's, so that a config built by hand (the
  // trainer's) and every gpt2 / openai-gpt config keep meaning what they meant.
  int n_kv_head = 0;    // key/value heads (num_key_value_heads); 0: n_head. Query head h reads
                        // key/value head h / (n_head / kv_heads()): grouped-query attention,
                        // multi-query with 1
  int n_head_dim = 0;   // head_dim where the config gives it (qwen3: 128 by default, so that
                        // n_head * head_dim may differ from n_embd); 0: n_embd / n_head
  Norm norm = Norm::LayerNorm;
  Mlp mlp = Mlp::Plain;
  Rotary rotary;                     // with PositionEncoding::Rotary
  bool qkv_bias = true;              // q, k, v projections have biases
  bool attn_out_bias = true;         // the attention's output projection has one
  bool mlp_bias = true;              // the MLP's projections have them
  bool qk_norm = false;              // qwen3: RMSNorm over each head's q and k (weight (head_dim)),
                                     // after the projections, before the rotation
  bool parallel_residual = false;    // gpt_neox: x + attn(norm1(x)) + mlp(norm2(x)); otherwise the
                                     // MLP reads x + attn(norm1(x))
  bool tie_word_embeddings = true;   // the output head is the token embedding; false: its own matrix
                                     // (lm_head.weight, gpt_neox's embed_out.weight)
  // Per layer, how many keys back a query sees: 0 all (causal), W > 0 a window: the query at
  // position p sees keys p-W+1 .. p (mistral's sliding_window; qwen2/qwen3's sliding layers;
  // gpt_neo's "local" layers with window_size). Empty: every layer 0.
  std::vector<int> attention_windows;
  std::int32_t bos_token_id = -1;   // the decoders' bos_token_id, or -1 (none; gpt2 / openai-gpt)

  // An encoder and a classifier, as config choices for models this project trains (glassbox's
  // own keys: other GPT-2 loaders ignore them and would run such a model as a causal LM):
  //   "bidirectional": true   an encoder: attention without the causal mask, every position sees
  //                           every other (BERT); trained with the masked-LM objective, it predicts
  //                           the tokens at mask_token_id positions, and cannot generate text
  bool bidirectional = false;
  std::int32_t mask_token_id = -1;   // "mask_token_id": the [MASK] of a masked-LM model, or -1
  // A classification head (Hugging Face's GPT2ForSequenceClassification, named so in
  // "architectures"): score.weight (n_labels, C) reads the final hidden state at the last token.
  // Label names by id, from id2label; empty for a language model.
  std::vector<std::string> labels;

  int head_dim() const { return n_head_dim > 0 ? n_head_dim : n_embd / n_head; }
  int kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }
  // Dimensions of each head that rotate: int(head_dim * fraction), as transformers rounds; even.
  int rotary_dim() const;
  int attention_window(int layer) const;   // attention_windows' entry, 0 past its end
  // The config.json model_type: "gpt2", "llama", ...
  std::string_view architecture_name() const;
  bool operator==(const ModelConfig&) const = default;

  // Parses and validates config.json text. `source` names the file in errors (ModelFormatError).
  static ModelConfig parse(std::string_view json_text, const std::string& source = "config.json");
  // Reads and parses a config.json file.
  static ModelConfig load(const std::filesystem::path& path);
  // config.json text with Hugging Face's field names, which parse() reads back to this config.
  // Throws InvalidArgument for what the architecture cannot express (openai-gpt has no erf GELU).
  // The decoders are written in the classic hub form (rope_theta, rope_scaling, rotary_pct).
  std::string to_json() const;
};

std::string_view activation_name(Activation activation);

// The model_type names config.json may give, in the order messages list them.
const std::vector<std::string_view>& supported_model_types();

}   // namespace glassbox
