// generation_config.json: a checkpoint's stop tokens and sampling defaults, and how they combine
// with the user's settings: what the user gives beats the file, the file beats glassbox's defaults
// (SamplingSettings' own: temperature 1, top_k 0, top_p 1, repetition_penalty 1).
//
// A key the file leaves out (or gives as null) keeps glassbox's default, also where transformers'
// GenerationConfig would use its own (top_k 50). "do_sample": false makes the file's default greedy
// (temperature 0), as transformers ignores the sampling keys then; a temperature the user gives
// still samples.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/sampler.h"

namespace glassbox {

// What a generation_config.json says; each field empty where the file does not give it.
struct GenerationConfig {
  std::optional<std::vector<std::int32_t>> eos_token_ids;   // "eos_token_id": one id or a list
  std::optional<float> temperature;
  std::optional<int> top_k;
  std::optional<float> top_p;
  std::optional<float> repetition_penalty;
  std::optional<bool> do_sample;

  // Parses generation_config.json text; other keys are ignored. Throws ModelFormatError naming
  // `source` and the key for a value of the wrong type or out of range (temperature < 0, top_k < 0,
  // top_p outside (0, 1], repetition_penalty <= 0, an eos id < 0).
  static GenerationConfig parse(std::string_view json_text, const std::string& source = "generation_config.json");
  // dir/generation_config.json, or an empty config (glassbox's defaults) where the file is absent.
  static GenerationConfig load(const std::filesystem::path& dir);
};

// The settings a user gave; empty: not given.
struct GenerationOverrides {
  std::optional<float> temperature;
  std::optional<int> top_k;
  std::optional<float> top_p;
  std::optional<float> repetition_penalty;
  std::optional<std::vector<std::int32_t>> eos_token_ids;
};

struct EffectiveGeneration {
  SamplingSettings sampling;   // seed 0: the caller sets it
  // The ids that stop generation: the user's, else generation_config.json's, else config.json's.
  std::vector<std::int32_t> eos_token_ids;
};

// user beats file beats glassbox's default; config_eos: config.json's eos_token_id
// (ModelConfig::eos_token_ids), used where neither the user nor the file names stop tokens.
// Throws InvalidArgument as SamplingSettings::validate() for the settings that result.
EffectiveGeneration effective_generation(const GenerationConfig& file, const GenerationOverrides& user,
                                         std::span<const std::int32_t> config_eos = {});

}   // namespace glassbox
