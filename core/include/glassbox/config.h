// The model's hyper-parameters, read from a Hugging Face config.json.
//
// Two architectures, with Hugging Face's names and defaults:
//   "gpt2"        pre-LayerNorm blocks and a final LayerNorm (GPT2Config)
//   "openai-gpt"  post-LayerNorm blocks, no final LayerNorm, as in the original GPT (OpenAIGPTConfig)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox {

enum class Architecture { GPT2, OpenAIGPT };

// The MLP non-linearity. Hugging Face's names map onto these as follows (the same name means
// different things in the two configs, which is why parsing is per architecture):
//   gpt2 activation_function: "gelu" -> GeluErf, "gelu_new" / "gelu_pytorch_tanh" / "gelu_fast" -> GeluTanh
//   openai-gpt afn:           "gelu" -> GeluTanh (the original GPT code's approximation)
//   both: "relu" -> Relu, "silu" / "swish" -> Silu
enum class Activation { GeluTanh, GeluErf, Relu, Silu };

// How positions enter the residual stream. Learned: a trained (n_positions, n_embd) table, GPT-2's
// wpe (the default, and what every Hugging Face checkpoint has). Sinusoidal: the fixed table of
// "Attention Is All You Need" (sinusoidal_positions below), never trained; a config choice for
// models this project trains ("position_encoding": "sinusoidal" in config.json). Its models
// still store the table as wpe.weight, so other GPT-2 loaders run them unchanged.
enum class PositionEncoding { Learned, Sinusoidal };

// table (P, C): row p, column 2i = sin(p / 10000^(2i/C)), column 2i+1 = cos(p / 10000^(2i/C)).
void sinusoidal_positions(float* table, int P, int C);

struct ModelConfig {
  Architecture architecture = Architecture::GPT2;
  int vocab_size = 0;
  int n_positions = 0;   // context length: learned position embeddings for 0..n_positions-1
  int n_embd = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_inner = 0;   // MLP width (Hugging Face: null means 4 * n_embd)
  PositionEncoding position_encoding = PositionEncoding::Learned;
  double layer_norm_epsilon = 1e-5;   // as the config gives it (the forward pass uses it as float)
  Activation activation = Activation::GeluTanh;
  bool scale_attn_weights = true;                 // divide scores by sqrt(head_dim)
  bool scale_attn_by_inverse_layer_idx = false;   // gpt2 option: also divide by (layer + 1)
  bool add_cross_attention = false;               // gpt2 option: each block also attends to an encoder's outputs
                                                  // (ForwardOptions::encoder_states), between attention and MLP
  std::vector<std::int32_t> eos_token_ids;        // generation stops when one is sampled

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

  int head_dim() const { return n_embd / n_head; }
  std::string_view architecture_name() const;

  // Parses and validates config.json text. `source` names the file in errors (ModelFormatError).
  static ModelConfig parse(std::string_view json_text, const std::string& source = "config.json");
  // Reads and parses a config.json file.
  static ModelConfig load(const std::filesystem::path& path);
  // config.json text with Hugging Face's field names, which parse() reads back to this config.
  // Throws InvalidArgument for what the architecture cannot express (openai-gpt has no erf GELU).
  std::string to_json() const;
};

std::string_view activation_name(Activation activation);

}   // namespace glassbox
