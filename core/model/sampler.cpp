#include "glassbox/sampler.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "glassbox/error.h"

namespace glassbox {

void SamplingSettings::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    throw InvalidArgument("temperature must be a finite number >= 0 (0 is greedy), got " + std::to_string(temperature));
  if (top_k < 0) throw InvalidArgument("top-k must be >= 0 (0 keeps every token), got " + std::to_string(top_k));
  if (!(top_p > 0.0f && top_p <= 1.0f))   // also false for NaN
    throw InvalidArgument("top-p must be in (0, 1] (1 keeps every token), got " + std::to_string(top_p));
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    throw InvalidArgument("repetition penalty must be a finite number > 0 (1 is none), got " +
                          std::to_string(repetition_penalty));
}

void apply_repetition_penalty(std::span<float> logits, std::span<const std::int32_t> seen, float penalty) {
  for (const std::int32_t id : seen)
    if (id < 0 || std::size_t(id) >= logits.size())
      throw InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary of " +
                            std::to_string(logits.size()));
  // transformers gathers every seen id's logit first and scatters the penalised values back, so an
  // id seen twice is penalised once.
  std::vector<std::int32_t> ids(seen.begin(), seen.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (const std::int32_t id : ids) {
    float& l = logits[id];
    l = l < 0.0f ? l * penalty : l / penalty;   // torch.where(score < 0, score * penalty, score / penalty)
  }
}

Sampler::Sampler(const SamplingSettings& settings) : settings_(settings), rng_(settings.seed) { settings_.validate(); }

std::int32_t Sampler::sample(std::span<const float> logits, std::span<const std::int32_t> seen) {
  if (logits.empty()) throw InvalidArgument("no logits to sample from");
  if (settings_.repetition_penalty != 1.0f) {   // 1 leaves the logits as they are (and their bits)
    penalized_.assign(logits.begin(), logits.end());
    apply_repetition_penalty(penalized_, seen, settings_.repetition_penalty);
    logits = penalized_;
  }
  std::int32_t best = -1;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (std::isnan(v) || v == INFINITY)
      throw InvalidArgument("logit " + std::to_string(i) + " is " + std::to_string(v) +
                            ": the model produced non-finite values");
    if (v != -INFINITY && (best < 0 || v > logits[best])) best = static_cast<std::int32_t>(i);
  }
  if (best < 0) throw InvalidArgument("every logit is -inf: no token can be chosen");
  if (settings_.temperature == 0.0f) return best;   // greedy

  // Candidates sorted by probability, most probable first (ties: lower id first).
  // Hugging Face's warper order: temperature, then top-k, then top-p.
  // Scaled logits are (logit - max) / temperature in double: <= 0, exactly 0 for the best token,
  // so that even a temperature of 1e-30 gives exp() values in [0, 1] and never inf or NaN.
  const double max = logits[best];
  candidates_.clear();
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (logits[i] != -INFINITY)
      candidates_.emplace_back((logits[i] - max) / settings_.temperature, static_cast<std::int32_t>(i));
  auto more_probable = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::size_t keep = candidates_.size();
  if (settings_.top_k > 0) keep = std::min(keep, static_cast<std::size_t>(settings_.top_k));
  if (keep < candidates_.size() || settings_.top_p < 1.0f) {
    // Only the kept head needs ordering: a partial sort of k elements, not all V.
    std::partial_sort(candidates_.begin(), candidates_.begin() + keep, candidates_.end(), more_probable);
    candidates_.resize(keep);
  }

  std::vector<double>& probs = probs_;
  probs.resize(candidates_.size());
  double total = 0.0;   // >= 1: the best token contributes exp(0)
  for (std::size_t i = 0; i < candidates_.size(); ++i) total += probs[i] = std::exp(candidates_[i].first);

  if (settings_.top_p < 1.0f) {   // nucleus: the smallest prefix with mass >= top_p (at least one)
    double mass = 0.0;
    std::size_t n = 0;
    while (n < probs.size() && mass < settings_.top_p * total) mass += probs[n++];
    probs.resize(n);
    total = mass;
  }

  double u = rng_.uniform() * total;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    if (u < probs[i]) return candidates_[i].second;
    u -= probs[i];
  }
  return candidates_[probs.size() - 1].second;   // u fell past the end through rounding
}

std::vector<TokenProbability> most_probable(std::span<const float> logits, int n) {
  if (n < 0) throw InvalidArgument("the number of most probable tokens must be >= 0, got " + std::to_string(n));
  double max = -INFINITY;
  for (float l : logits) {
    if (std::isnan(l) || l == INFINITY)
      throw InvalidArgument("a logit is NaN or infinite: the model's weights are broken");
    max = std::max(max, double(l));
  }
  if (max == -INFINITY && !logits.empty()) throw InvalidArgument("every logit is -inf: no token is possible");
  double sum = 0;
  for (float l : logits) sum += std::exp(double(l) - max);
  std::vector<std::int32_t> ids(logits.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i);
  const std::size_t k = std::min<std::size_t>(std::size_t(n), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](std::int32_t a, std::int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  std::vector<TokenProbability> top;
  for (std::size_t i = 0; i < k; ++i)
    top.push_back({ids[i], static_cast<float>(std::exp(double(logits[ids[i]]) - max) / sum)});
  return top;
}

}   // namespace glassbox
