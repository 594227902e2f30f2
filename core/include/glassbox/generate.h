// The generation loop: prompt in one forward pass, then one token at a time through the KV cache.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "glassbox/model.h"
#include "glassbox/sampler.h"

namespace glassbox {

enum class StopReason {
  MaxTokens,     // produced max_tokens tokens
  EndOfText,     // sampled a stop token (GenerateOptions::eos_token_ids; not passed to the callback)
  ContextFull,   // WhenContextFull::Stop, and the last token produced has no position left to run at
  Cancelled,     // the callback returned false
};
std::string_view stop_reason_name(StopReason reason);   // "max_tokens", "end_of_text", ...

// What generation does when the context (Model::context(): n_positions, or less) is full.
enum class WhenContextFull {
  // Keep going: keep the most recent half of the context (context / 2 tokens), run them again
  // from position 0 into a fresh cache, and continue from there. Each slide costs one prompt pass
  // over context / 2 tokens, i.e. at most one prefill token per token generated; memory stays
  // that of one context's cache however long the generation.
  Slide,
  Stop,   // stop with StopReason::ContextFull
};
WhenContextFull parse_when_context_full(std::string_view name);   // "slide" or "stop"; else InvalidArgument

struct GenerateOptions {
  int max_tokens = 64;
  SamplingSettings sampling;
  bool attention = false;   // fill GeneratedToken::attention (costs a copy of L*H*S floats per token)
  WhenContextFull when_context_full = WhenContextFull::Slide;
  std::vector<float> head_mask;   // ForwardOptions::head_mask for every step; empty: none
  int lens = 0;                   // K > 0: fill GeneratedToken::lens (ForwardOptions::lens_k)
  // The ids that have a token (the tokenizer's Tokenizer::vocab_size()): ForwardOptions::
  // tokenizer_size. The ids after them (a vocab_size padded past the tokenizer's) get -inf logits,
  // so they are out of the distribution before temperature, top-k and top-p, and never sampled.
  // 0: every id of the config's vocab_size has a token.
  int tokenizer_size = 0;
  // The ids that end generation (StopReason::EndOfText); nullopt: the config's eos_token_ids
  // (config.json's eos_token_id). effective_generation() (glassbox/generation_config.h) gives the
  // list generation_config.json and the user's choice make.
  std::optional<std::vector<std::int32_t>> eos_token_ids;
  // Steering (ForwardOptions::steer) at every step, prompt included: steer (n_embd floats, from
  // steering_vector in glassbox/experiments.h) added to the residual stream entering block
  // steer_layer at every position. Empty: none.
  std::vector<float> steer;
  int steer_layer = 0;
};

struct GeneratedToken {
  std::int32_t id;
  int position;   // where the token stands in the sequence: prompt length + index
  // The position of the first token the model still sees (the window's start): 0 until the
  // context has been full and slid (WhenContextFull::Slide), then later.
  int window_start;
  // With GenerateOptions::attention: the attention row of the query that produced this token
  // (the previous position) over the keys window_start .. position - 1,
  // (n_layer, n_head, position - window_start) laid out [layer][head][key]. Valid only during the
  // callback.
  std::span<const float> attention;
  // The logits (vocab_size) this token was sampled from, before the repetition penalty and
  // temperature; valid as attention.
  std::span<const float> logits;
  // With GenerateOptions::lens = K: the logit lens at the position that produced this token,
  // (n_layer, K), each layer's K most probable next tokens; valid as attention.
  std::span<const TokenProbability> lens;
};

// Pull-based generation: the prompt runs in the constructor, then each next() produces one token.
// A caller that streams to a UI (the JS bindings) takes a token, shows it, and asks for the next
// one when it likes, so stopping early costs nothing. Each token is run through the model only when
// the following one is asked for: the last token produced is never run needlessly.
class Generator {
 public:
  // Throws InvalidArgument for an empty prompt, a prompt longer than the context, out-of-range
  // ids, a negative max_tokens, bad sampling settings, a head mask, lens or steering that forward() refuses,
  // before any work. The constructor and next() throw ModelFormatError, as forward() does, for
  // logits that are not finite.
  Generator(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options);
  Generator(const Generator&) = delete;   // holds a hook that points at itself
  Generator& operator=(const Generator&) = delete;

  // The next token, or nothing once generation has stopped (then stop_reason() says why).
  // The GeneratedToken's attention is valid until the next call.
  std::optional<GeneratedToken> next();
  std::optional<StopReason> stop_reason() const { return stopped_; }

 private:
  std::optional<GeneratedToken> stop(StopReason reason);
  void run(std::span<const std::int32_t> ids);   // through the model into the cache; sets logits_

  const Model& model_;   // must outlive the generator
  GenerateOptions options_;
  Sampler sampler_;
  KVCache cache_;
  TensorHook keep_last_row_;
  std::vector<float> logits_;             // (V) for the next sample
  std::vector<float> attention_;          // (L, H, S) last query row, with options.attention
  std::vector<TokenProbability> lens_;    // (L, K) with options.lens
  std::optional<std::int32_t> pending_;   // produced, not yet run through the model
  std::vector<std::int32_t> window_;      // the ids in the cache, in order (to slide)
  // With a repetition penalty: every id of the sequence so far (prompt and produced, also those
  // slid out of the window, as transformers penalises its whole input_ids), each once.
  std::vector<std::int32_t> seen_;
  std::vector<bool> seen_mask_;   // (V) whether an id is in seen_
  void see(std::span<const std::int32_t> ids);
  int window_start_ = 0;   // position in the sequence of window_[0]
  int produced_ = 0;
  std::optional<StopReason> stopped_;
};

// Returns false to stop generating.
using TokenCallback = std::function<bool(const GeneratedToken&)>;

// Runs a Generator to the end, calling on_token for each token (Cancelled if it returns false).
// Throws as Generator's constructor does.
StopReason generate(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options,
                    const TokenCallback& on_token);

}   // namespace glassbox
