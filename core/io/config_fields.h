// Reading config.json's fields with checks, shared by the two parsers: config.cpp (gpt2,
// openai-gpt) and config_decoders.cpp (llama, mistral, qwen2, qwen3, gpt_neox, gpt_neo). Each
// names the key and the file in its ModelFormatError.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "glassbox/config.h"

namespace glassbox::config_fields {

// An integer field in [lo, hi]; `fallback` when the key is absent or null.
int int_field(const nlohmann::json& j, const char* key, int fallback, int lo, int hi, const std::string& source);
// A number field in [lo, hi]; `fallback` when the key is absent or null.
double number_field(const nlohmann::json& j, const char* key, double fallback, double lo, double hi,
                    const std::string& source);
bool bool_field(const nlohmann::json& j, const char* key, bool fallback, const std::string& source);
// A string field; `fallback` when the key is absent or null.
std::string string_field(const nlohmann::json& j, const char* key, const std::string& fallback,
                         const std::string& source);
// Hugging Face's name of an activation, with `arch`'s meaning of it (config.h, Activation).
Activation activation_of(Architecture arch, const std::string& name, const std::string& source);
// eos_token_id: an id or a list of ids, each in the vocabulary; `fallback` when absent or null.
std::vector<std::int32_t> eos_ids(const nlohmann::json& j, std::vector<std::int32_t> fallback, int vocab_size,
                                  const std::string& source);

}   // namespace glassbox::config_fields
