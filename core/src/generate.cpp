#include "glassbox/generate.h"

#include <algorithm>
#include <string>

#include "glassbox/error.h"

namespace glassbox {

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::MaxTokens: return "max_tokens";
    case StopReason::EndOfText: return "end_of_text";
    case StopReason::ContextFull: return "context_full";
    case StopReason::Cancelled: return "cancelled";
  }
  return "?";
}

StopReason generate(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options,
                    const TokenCallback& on_token) {
  const ModelConfig& c = model.config();
  if (options.max_tokens < 0) throw InvalidArgument("max tokens must be >= 0, got " + std::to_string(options.max_tokens));
  if (prompt.empty()) throw InvalidArgument("the prompt is empty: give at least one token");
  if (prompt.size() > static_cast<std::size_t>(c.n_positions))
    throw InvalidArgument("the prompt is " + std::to_string(prompt.size()) + " tokens, longer than the context of " +
                          std::to_string(c.n_positions));
  Sampler sampler(options.sampling);   // validates the settings before any work

  // With attention on, keep the last query row of every layer's probabilities: (L, H, S).
  std::vector<float> attention;
  TensorHook keep_last_row = [&](const NamedTensor& t) {
    if (std::string_view(t.name) != "attn_probs") return;
    const int H = t.shape[0], T = t.shape[1], S = t.shape[2];
    attention.resize(std::size_t(c.n_layer) * H * S);
    for (int h = 0; h < H; ++h) {
      const float* row = t.data + (std::size_t(h) * T + (T - 1)) * S;
      std::copy(row, row + S, attention.begin() + (std::size_t(t.layer) * H + h) * S);
    }
  };
  ForwardOptions fo;
  fo.hook = options.attention ? &keep_last_row : nullptr;

  KVCache cache = model.new_cache();
  std::vector<float> logits = model.forward(prompt, cache, fo);
  for (int produced = 0;; ++produced) {
    if (produced == options.max_tokens) return StopReason::MaxTokens;
    const std::int32_t id = sampler.sample(logits);
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) != c.eos_token_ids.end()) return StopReason::EndOfText;
    if (!on_token(GeneratedToken{id, cache.size(), attention})) return StopReason::Cancelled;
    if (cache.size() == c.n_positions) return StopReason::ContextFull;
    const std::int32_t next[1] = {id};
    logits = model.forward(next, cache, fo);
  }
}

}  // namespace glassbox
