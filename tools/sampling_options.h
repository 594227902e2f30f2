// The sampling options generate and chat share, and the settings they make with the model
// directory's generation_config.json: what the user gives beats the file, the file beats
// glassbox's defaults (glassbox/generation_config.h).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "glassbox/generate.h"
#include "glassbox/generation_config.h"
#include "glassbox/model.h"

struct SamplingOptions {
  glassbox::GenerationOverrides user;   // --temperature, --top-k, --top-p, --repetition-penalty
  std::optional<std::uint64_t> seed;    // --seed; default: random, printed at the end
  int max_tokens = 64;                  // -n
  std::string when_context_full = "slide";
};

// Adds -n, --temperature, --top-k, --top-p, --repetition-penalty, --seed and --context-full to cmd.
void add_sampling_options(CLI::App* cmd, SamplingOptions& options, int default_max_tokens);

// Checks the user's settings alone (before the model directory is looked at). Throws InvalidArgument.
void check_sampling_options(const SamplingOptions& options);

// The sampling settings and stop ids for model_dir: its generation_config.json (when present)
// under the user's options. Before the model is loaded (config_eos empty) it checks the settings;
// after, give the model's config.json eos ids, used where neither the user nor the file names
// some. The seed: the user's, else `random_seed`. Throws InvalidArgument / ModelFormatError.
glassbox::GenerateOptions generate_options(const std::string& model_dir, const SamplingOptions& options,
                                           std::uint64_t random_seed, std::span<const std::int32_t> config_eos = {});
