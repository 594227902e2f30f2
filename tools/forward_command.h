// glassbox forward: logits, and on request attention, hidden states, the logit lens, saliency and
// the MLP's neurons of a prompt, as JSON; with a head mask, some heads switched off. And the --head-mask option that
// generate shares.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/model.h"

// What `forward` prints besides the logits, and how it runs the model.
struct ForwardRequest {
  bool attention = false;                  // "attention": [layer][head][query][key]
  std::string mask = "causal";             // or "bidirectional"
  bool hidden_states = false;              // "hidden_states": [n_layer + 1][T][n_embd]
  std::optional<int> lens;                 // K: "lens": [n_layer][T] lists of K {"id", "p"}
  std::string head_mask;                   // --head-mask as given: "L:H[,L:H...]", those heads silenced
  bool saliency = false;                   // "saliency": [T] gradient x input, and "target"
  std::optional<std::string> target;       // --target TOK as given
  std::optional<std::int32_t> target_id;   // and as an id (the caller reads TOK with the tokenizer)
  std::optional<int> neurons;              // K: "neurons": [n_layer][T] lists of K {"index", "value"}
  std::string neuron;                      // --neuron "L:N": "neuron": [T]
};

// {"logits": [T][V], ...} on stdout for the prompt `ids`; errors are thrown.
int run_forward(const std::string& model_dir, const glassbox::LoadOptions& load, const std::vector<std::int32_t>& ids,
                const ForwardRequest& request);

// --batch FILE: a JSON array of token-id arrays -> {"logits": [sequence][position][vocab]}, run
// in passes of at most kBatchPart sequences and kBatchPartLogits floats of logits (64 MB; a
// longer sequence runs alone) through Model::forward_batch, each written as it ends, so that
// memory holds one pass's logits, not the whole output. At most kMaxBatchSequences sequences.
inline constexpr std::size_t kBatchPart = 64;
inline constexpr std::size_t kBatchPartLogits = std::size_t(1) << 24;
inline constexpr std::size_t kMaxBatchSequences = 65536;
int run_forward_batch(const std::string& model_dir, const glassbox::LoadOptions& load, const std::string& file);

// The ids of model_dir's tokenizer (ForwardOptions::tokenizer_size): 0 (every id) for a directory
// without vocab.json. Throws as Tokenizer::load for a broken one.
int tokenizer_size_of(const std::string& model_dir);

// --head-mask "L:H[,L:H...]" -> the model's (n_layer, n_head) factors, 0 for the heads listed and 1
// for the rest ("" -> none). Throws InvalidArgument for a malformed list or a head the model lacks.
std::vector<float> parse_head_mask(const std::string& text, const glassbox::ModelConfig& config);
