#include "glassbox/generate.h"

#include <algorithm>
#include <string>

#include "glassbox/error.h"

namespace glassbox {

std::string_view stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::MaxTokens:
      return "max_tokens";
    case StopReason::EndOfText:
      return "end_of_text";
    case StopReason::ContextFull:
      return "context_full";
    case StopReason::Cancelled:
      return "cancelled";
  }
  return "?";
}

WhenContextFull parse_when_context_full(std::string_view name) {
  if (name == "slide") return WhenContextFull::Slide;
  if (name == "stop") return WhenContextFull::Stop;
  throw InvalidArgument("context-full policy must be \"slide\" or \"stop\", got \"" + std::string(name) + "\"");
}

Generator::Generator(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options)
    : model_(model), options_(options), sampler_(options.sampling), cache_(model.new_cache()) {
  const ModelConfig& c = model.config();
  if (options.max_tokens < 0)
    throw InvalidArgument("max tokens must be >= 0, got " + std::to_string(options.max_tokens));
  if (options.lens < 0)
    throw InvalidArgument("the lens' K must be >= 1 (0: no lens), got " + std::to_string(options.lens));
  if (model.config().bidirectional)   // each token would change what every earlier one saw
    throw InvalidArgument(
        "this model is bidirectional (a masked-LM encoder): it predicts masked tokens "
        "(forward), it does not generate text");
  if (prompt.empty()) throw InvalidArgument("the prompt is empty: give at least one token");
  if (prompt.size() > static_cast<std::size_t>(model.context()))
    throw InvalidArgument("the prompt is " + std::to_string(prompt.size()) + " tokens, longer than the context of " +
                          std::to_string(model.context()));
  // With attention on, keep the last query row of every layer's probabilities: (L, H, S).
  keep_last_row_ = [this, L = c.n_layer](const NamedTensor& t) {
    if (std::string_view(t.name) != "attn_probs") return;
    const int H = t.shape[0], T = t.shape[1], S = t.shape[2];
    attention_.resize(std::size_t(L) * H * S);
    for (int h = 0; h < H; ++h) {
      const float* row = t.data + (std::size_t(h) * T + (T - 1)) * S;
      std::copy(row, row + S, attention_.begin() + (std::size_t(t.layer) * H + h) * S);
    }
  };
  // Every position this generation can fill, reserved before the prompt: the cache then never
  // grows (and copies itself) between two tokens. Sliding past the context reuses the same block.
  const std::int64_t positions = std::int64_t(prompt.size()) + std::max(0, options.max_tokens - 1);
  cache_.reserve(static_cast<int>(std::min<std::int64_t>(positions, model.context())));
  run(prompt);
  see(prompt);
}

void Generator::see(std::span<const std::int32_t> ids) {
  if (options_.sampling.repetition_penalty == 1.0f) return;   // nothing reads them
  seen_mask_.resize(std::size_t(model_.config().vocab_size));
  for (const std::int32_t id : ids)
    if (!seen_mask_[id]) {   // ids are in range: forward() checked them
      seen_mask_[id] = true;
      seen_.push_back(id);
    }
}

void Generator::run(std::span<const std::int32_t> ids) {
  logits_ = model_.forward(ids, cache_,
                           {.all_logits = false,
                            .hook = options_.attention ? &keep_last_row_ : nullptr,
                            .head_mask = options_.head_mask,
                            .lens_k = options_.lens,
                            .lens = options_.lens > 0 ? &lens_ : nullptr,
                            .tokenizer_size = options_.tokenizer_size,
                            .steer = options_.steer,
                            .steer_layer = options_.steer_layer});
  window_.insert(window_.end(), ids.begin(), ids.end());
}

std::optional<GeneratedToken> Generator::stop(StopReason reason) {
  stopped_ = reason;
  return std::nullopt;
}

std::optional<GeneratedToken> Generator::next() {
  if (stopped_) return std::nullopt;
  const ModelConfig& c = model_.config();
  if (pending_) {
    // The previous token has a position only if the context has room for it.
    const bool full = cache_.size() == model_.context();
    if (full && options_.when_context_full == WhenContextFull::Stop) return stop(StopReason::ContextFull);
    if (produced_ == options_.max_tokens) return stop(StopReason::MaxTokens);
    const std::int32_t id[1] = {*pending_};
    pending_.reset();
    if (!full) {
      run(id);
    } else {
      // Slide: the most recent half of the context, the new token included, from position 0.
      const std::size_t keep = std::max(1, model_.context() / 2);
      std::vector<std::int32_t> kept(window_.end() - static_cast<std::ptrdiff_t>(keep - 1), window_.end());
      kept.push_back(id[0]);
      window_start_ += static_cast<int>(window_.size() + 1 - keep);
      window_.clear();
      cache_.clear();
      run(kept);
    }
  }
  if (produced_ == options_.max_tokens) return stop(StopReason::MaxTokens);
  const std::int32_t id = sampler_.sample(logits_, seen_);
  const std::vector<std::int32_t>& eos = options_.eos_token_ids ? *options_.eos_token_ids : c.eos_token_ids;
  if (std::find(eos.begin(), eos.end(), id) != eos.end()) return stop(StopReason::EndOfText);
  pending_ = id;
  const std::int32_t produced_id[1] = {id};
  see(produced_id);
  ++produced_;
  return GeneratedToken{id, window_start_ + cache_.size(), window_start_, attention_, logits_, lens_};
}

StopReason generate(const Model& model, std::span<const std::int32_t> prompt, const GenerateOptions& options,
                    const TokenCallback& on_token) {
  Generator generator(model, prompt, options);
  while (const auto token = generator.next())
    if (!on_token(*token)) return StopReason::Cancelled;
  return *generator.stop_reason();
}

}   // namespace glassbox
