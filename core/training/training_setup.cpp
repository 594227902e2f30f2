#include "glassbox/training_setup.h"

#include <nlohmann/json.hpp>

#include "glassbox/error.h"

namespace glassbox {

ModelConfig training_model_config(const TrainingSettings& s, int vocab_size) {
  const std::string& arch = s.architecture;
  if (arch != "gpt2" && arch != "openai-gpt")
    throw InvalidArgument("the architecture must be gpt2 or openai-gpt, got " + arch);
  if (s.positions != "learned" && s.positions != "sinusoidal")
    throw InvalidArgument("the position encoding must be learned or sinusoidal, got " + s.positions);
  // config.json as Hugging Face names its fields, so that ModelConfig::parse checks the shape as
  // it checks any model's
  const std::string json = nlohmann::json{
      {"model_type", arch},
      {"vocab_size", vocab_size},
      {"n_positions", s.n_positions},
      {"n_embd", s.n_embd},
      {"n_layer", s.n_layer},
      {"n_head", s.n_head},
      {arch == "gpt2" ? "activation_function" : "afn", !s.activation.empty() ? s.activation
                                                       : arch == "gpt2"      ? "gelu_new"
                                                                             : "gelu"},
      {"position_encoding",
       s.positions}}.dump();
  try {
    return ModelConfig::parse(json, "the model shape options");
  } catch (const ModelFormatError& e) {   // a shape the caller chose, not a damaged file
    throw InvalidArgument(e.what());
  }
}

TrainingSetup set_up_training(TrainingInputs in, const TrainingSettings& s) {
  if (!(s.valid_fraction >= 0 && s.valid_fraction < 1))
    throw InvalidArgument("the held-out fraction must be at least 0 and less than 1, got " +
                          std::to_string(s.valid_fraction));
  if (in.config.has_value() != in.options.has_value() || (in.config && !in.tokenizer))
    throw InvalidArgument("a run that goes on is set up with its config, its options and its tokenizer");

  // 1. The run's shape and options, checked before any work is done: with the given tokenizer's
  // vocabulary, or settings.vocab_size (the learned vocabulary is at most that).
  std::optional<Tokenizer> tokenizer;
  if (in.tokenizer) tokenizer.emplace(Tokenizer::from_strings(in.tokenizer->vocab_json, in.tokenizer->merges_txt));
  const TrainingOptions options = in.options ? *in.options : s.options;
  ModelConfig config =
      in.config ? *in.config : training_model_config(s, tokenizer ? tokenizer->vocab_size() : s.vocab_size);
  options.validate(config);
  if (in.checked) in.checked(config, options);

  // 2. The held-out part, cut before anything is learned.
  if (in.valid.empty() && s.valid_fraction > 0) in.valid.push_back(hold_out(in.train, s.valid_fraction));

  // 3. The tokenizer: the given one, or learned from the training part (never the held-out text).
  TokenizerFiles files;
  if (in.tokenizer) {
    files = std::move(*in.tokenizer);
  } else {
    std::string text;
    for (const auto& d : in.train) {
      if (auto bad = first_invalid_utf8(d.text))
        throw InvalidArgument(d.name + ": not valid UTF-8 at byte " + std::to_string(*bad));
      text += d.text;
    }
    TokenizerTrainingOptions learn;
    learn.vocab_size = s.vocab_size;
    learn.special_tokens.insert(learn.special_tokens.end(), in.special_tokens.begin(), in.special_tokens.end());
    if (in.learning) in.learning(text.size());
    files = train_tokenizer(text, learn);
    tokenizer.emplace(Tokenizer::from_strings(files.vocab_json, files.merges_txt));
  }
  if (!in.config) {   // a new run: the learned vocabulary may be smaller than asked
    config = training_model_config(s, tokenizer->vocab_size());
    if (auto eot = tokenizer->special_token("<|endoftext|>")) config.eos_token_ids = {*eot};
  }

  // 4. The texts as ids, documents joined by <|endoftext|>.
  std::vector<std::int32_t> train, valid;
  if (in.encode) {
    train = encode_documents(*tokenizer, in.train);
    valid = encode_documents(*tokenizer, in.valid);
  }
  return {std::move(files), std::move(*tokenizer), std::move(config), options, std::move(train), std::move(valid)};
}

}   // namespace glassbox
