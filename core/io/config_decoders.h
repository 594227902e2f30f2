// config.json of the decoders described by features (config.h): llama, mistral, qwen2, qwen3,
// gpt_neox, gpt_neo. config.cpp hands these model types to this parser.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "glassbox/config.h"

namespace glassbox {

// The decoder a model_type names, or nothing (gpt2, openai-gpt and unknown names).
std::optional<Architecture> decoder_architecture(std::string_view model_type);
// The config of a decoder `arch`, with its type's defaults for what the file leaves out.
ModelConfig parse_decoder(const nlohmann::json& j, Architecture arch, const std::string& source);
// config.json text in the classic hub form, which parse_decoder reads back to `c`.
std::string decoder_to_json(const ModelConfig& c);

}   // namespace glassbox
