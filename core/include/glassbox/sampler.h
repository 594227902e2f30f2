// Choosing the next token from logits: a repetition penalty, then greedy, or sampling with
// temperature, top-k and top-p, from a seeded random generator of our own (std::*_distribution differs between standard
// libraries, so the same seed would give other tokens in the browser than natively).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "glassbox/random.h"

namespace glassbox {

struct SamplingSettings {
  float temperature = 1.0f;   // 0: greedy (argmax); otherwise logits / temperature
  int top_k = 0;              // keep the k most probable tokens; 0: all
  float top_p = 1.0f;         // keep the smallest set of most probable tokens whose mass >= top_p
  // transformers' RepetitionPenaltyLogitsProcessor, before the rest (and before greedy's argmax):
  // the logit of every token already in the sequence (prompt and generated) is divided by it where
  // > 0 and multiplied by it where < 0. 1: none.
  float repetition_penalty = 1.0f;
  std::uint64_t seed = 0;

  // Throws InvalidArgument naming the bad setting: temperature NaN, infinite or negative; top_k
  // negative; top_p NaN or outside (0, 1]; repetition_penalty NaN, infinite or <= 0.
  void validate() const;
};

// One entry of a next-token distribution.
struct TokenProbability {
  std::int32_t id;
  float probability;
};

// The n most probable tokens of softmax(logits) (temperature 1: the model's own distribution, not
// the sampling settings'), most probable first, ties to the lower id. n is clamped to the
// vocabulary. Throws InvalidArgument for n < 0 or a NaN / +inf logit.
std::vector<TokenProbability> most_probable(std::span<const float> logits, int n);

class Sampler {
 public:
  explicit Sampler(const SamplingSettings& settings);   // validates settings

  // Picks a token id from (V) logits. Ties go to the lowest id. Throws InvalidArgument if a logit
  // is NaN or +inf (a broken model), or if every logit is -inf (after the penalty).
  // seen: the ids already in the sequence, each once (repeats are penalised once, as transformers'
  // gather/scatter does), for the repetition penalty; ignored when it is 1. Throws InvalidArgument
  // for a seen id outside the logits.
  std::int32_t sample(std::span<const float> logits, std::span<const std::int32_t> seen = {});

  const SamplingSettings& settings() const { return settings_; }

 private:
  SamplingSettings settings_;
  Rng rng_;
  std::vector<std::pair<double, std::int32_t>> candidates_;   // (scaled logit, id), reused between calls
  std::vector<double> probs_;
  std::vector<float> penalized_;   // the logits after the repetition penalty, reused between calls
};

// transformers' RepetitionPenaltyLogitsProcessor on (V) logits, in place, in float as it computes:
// for each id in seen, logit < 0 ? logit * penalty : logit / penalty. Repeated ids in seen are
// penalised once. Throws InvalidArgument for an id outside the logits.
void apply_repetition_penalty(std::span<float> logits, std::span<const std::int32_t> seen, float penalty);

}   // namespace glassbox
