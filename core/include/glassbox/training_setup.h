// Setting up a training run from texts: the settings a person chooses, with their defaults, and
// what a Trainer needs made of them and of the texts: the held-out end of the text, the tokenizer
// (given, or learned from the rest), the model's shape with that vocabulary, and the texts as
// token ids. `glassbox train` and the JS API's train() both set their runs up here, so that the
// same texts and settings give the same run, bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "glassbox/trainer.h"
#include "glassbox/training_text.h"

namespace glassbox {

// The settings of a run and their defaults: the one table of them. `glassbox train`'s options and
// train()'s (wasm/training_bindings.cpp) take their defaults from here; docs/training.md lists them.
struct TrainingSettings {
  // The tokenizer, when none is given: a BPE vocabulary of this many tokens, learned from the
  // training part of the text (the tokenizer trainer's default size).
  int vocab_size = TokenizerTrainingOptions{}.vocab_size;
  // Without held-out texts: this fraction of the end of the training text is held out.
  double valid_fraction = 0.1;
  // The model's shape.
  std::string architecture = "gpt2";   // or openai-gpt
  std::string activation;              // as config.json names it; empty: gpt2 gelu_new, openai-gpt gelu
                                       // (both the tanh approximation)
  std::string positions = "learned";   // or sinusoidal (PositionEncoding)
  int n_layer = 4;
  int n_embd = 256;
  int n_head = 4;
  int n_positions = 256;
  // The optimisation: steps, batch, learning rates, ... (their defaults are TrainingOptions').
  TrainingOptions options;
  // The held-out loss every eval_every steps (0: only at the end), over at most eval_tokens
  // predictions (0: all; the last one always covers all).
  int eval_every = 200;
  std::int64_t eval_tokens = 0;
  // A masked LM's share of the tokens chosen to be predicted (mask_tokens).
  double mask_rate = kBertMaskRate;
};

// The model a new run of these settings trains, with a vocabulary of vocab_size tokens
// (eos_token_ids empty). Throws InvalidArgument naming a bad setting (an architecture or position
// encoding it does not know, a width the heads do not divide, ...).
ModelConfig training_model_config(const TrainingSettings& settings, int vocab_size);

// What set_up_training starts from beside the settings.
struct TrainingInputs {
  std::vector<TrainingDocument> train;       // the text to train on
  std::vector<TrainingDocument> valid;       // held-out text; none: settings.valid_fraction of train's end
  std::optional<TokenizerFiles> tokenizer;   // used as it is; none: one is learned from train
  std::vector<std::string> special_tokens;   // a learned tokenizer's, after <|endoftext|>
  // A run that goes on (a checkpoint's): its config and options, not the settings' (whose
  // tokenizer must then be given: the run's own).
  std::optional<ModelConfig> config;
  std::optional<TrainingOptions> options;
  bool encode = true;   // false: no token streams (a caller that encodes its texts otherwise)
  // Called once the settings are checked, before the text is worked on (the vocabulary learned
  // with the given tokenizer's or settings.vocab_size tokens): a caller refuses a run it cannot
  // hold here. May be empty.
  std::function<void(const ModelConfig& config, const TrainingOptions& options)> checked;
  // Called before a vocabulary is learned (the longest part) from this many bytes. May be empty.
  std::function<void(std::size_t bytes)> learning;
};

// A run, set up.
struct TrainingSetup {
  TokenizerFiles tokenizer_files;    // vocab.json and merges.txt: the given ones, or those learned
  Tokenizer tokenizer;               // made of them
  ModelConfig config;                // the settings' shape with the tokenizer's vocabulary, and
                                     // <|endoftext|> as the end of a text where it has it
  TrainingOptions options;           // settings.options
  std::vector<std::int32_t> train;   // the training text as ids (encode_documents)
  std::vector<std::int32_t> valid;   // the held-out text as ids
};

// Checks the settings against the model they make, holds out the end of the text (unless held-out
// texts are given), learns the vocabulary from the rest (unless a tokenizer is given, never from
// the held-out text), and encodes both parts. Throws InvalidArgument naming a bad setting, or a
// document that is not UTF-8.
TrainingSetup set_up_training(TrainingInputs inputs, const TrainingSettings& settings);

}   // namespace glassbox
