// The generation loop: prompt in one forward pass, then one token at a time through the KV cache.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include "glassbox/model.h"
#include "glassbox/sampler.h"

namespace glassbox {

enum class StopReason {
  MaxTokens,    // produced max_tokens tokens
  EndOfText,    // sampled the config's eos_token_id (not passed to the callback)
  ContextFull,  // the last token produced has no position left to be run at
  Cancelled,    // the callback returned false
};
std::string_view stop_reason_name(StopReason reason);   // "max_tokens", "end_of_text", ...

struct GenerateOptions {
  int max_tokens = 64;
  SamplingSettings sampling;
  bool attention = false;   // fill GeneratedToken::attention (costs a copy of L*H*S floats per token)
};

struct GeneratedToken {
  std::int32_t id;
  int position;   // where the token stands in the sequence: prompt length + index
  // With GenerateOptions::attention: the attention row of the query that produced this token
  // (the previous position), (n_layer, n_head, position) laid out [layer][head][key]. Valid only
  // during the callback.
  std::span<const float> attention;
};

// Returns false to stop generating.
using TokenCallback = std::function<bool(const GeneratedToken&)>;

// Runs the prompt, then samples up to max_tokens tokens, calling on_token for each.
// Throws InvalidArgument for an empty prompt, a prompt longer than the context, out-of-range ids,
// a negative max_tokens, or bad sampling settings, before any token is produced.
StopReason generate(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options,
                    const TokenCallback& on_token);

}  // namespace glassbox
