#include "sampling_options.h"

void add_sampling_options(CLI::App* cmd, SamplingOptions& options, int default_max_tokens) {
  options.max_tokens = default_max_tokens;
  cmd->add_option("-n,--max-tokens", options.max_tokens, "how many tokens to generate at most")->capture_default_str();
  const char* from_file = " (default: generation_config.json's, else ";
  cmd->add_option("--temperature", options.user.temperature,
                  std::string("0 is greedy") + from_file + "1; its do_sample false: 0)");
  cmd->add_option("--top-k", options.user.top_k,
                  std::string("keep the k most probable tokens") + from_file + "0: all)");
  cmd->add_option("--top-p", options.user.top_p,
                  std::string("nucleus: keep the most probable tokens up to this mass") + from_file + "1)");
  cmd->add_option("--repetition-penalty", options.user.repetition_penalty,
                  std::string("divide the logits > 0 of tokens already in the text by this, multiply those < 0 "
                              "(transformers' repetition_penalty)") +
                      from_file + "1: none)");
  cmd->add_option("--seed", options.seed, "random seed (default: random, printed at the end)");
  cmd->add_option("--context-full", options.when_context_full,
                  "when the context is full: slide (keep its most recent half and go on) or stop")
      ->capture_default_str();
}

void check_sampling_options(const SamplingOptions& options) {
  glassbox::effective_generation({}, options.user);
  glassbox::parse_when_context_full(options.when_context_full);
}

glassbox::GenerateOptions generate_options(const std::string& model_dir, const SamplingOptions& options,
                                           std::uint64_t random_seed, std::span<const std::int32_t> config_eos) {
  const glassbox::GenerationConfig file = glassbox::GenerationConfig::load(model_dir);
  const glassbox::EffectiveGeneration effective = glassbox::effective_generation(file, options.user, config_eos);
  glassbox::GenerateOptions o;
  o.max_tokens = options.max_tokens;
  o.sampling = effective.sampling;
  o.sampling.seed = options.seed ? *options.seed : random_seed;
  o.when_context_full = glassbox::parse_when_context_full(options.when_context_full);
  o.eos_token_ids = effective.eos_token_ids;
  return o;
}
