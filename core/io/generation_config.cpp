// generation_config.json (glassbox/generation_config.h): the keys transformers' GenerationConfig
// reads for stopping and sampling, checked one by one so that an error names the key.
#include "glassbox/generation_config.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "io/json_depth.h"
#include "io/mapped_file.h"

namespace glassbox {
namespace {

using json = nlohmann::json;

// The value of `key`, or nullptr where it is absent or null (transformers' None: not set).
const json* field(const json& doc, const char* key) {
  const auto it = doc.find(key);
  return it == doc.end() || it->is_null() ? nullptr : &*it;
}

std::optional<float> number(const json& doc, const char* key, const std::string& source) {
  const json* v = field(doc, key);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw ModelFormatError(source, std::string(key) + " must be a number, got " + v->dump());
  const double d = v->get<double>();
  if (!std::isfinite(d) || std::fabs(d) > std::numeric_limits<float>::max())
    throw ModelFormatError(source, std::string(key) + " must be a finite number, got " + v->dump());
  return static_cast<float>(d);
}

std::int64_t integer(const json& v, const std::string& what, const std::string& source) {
  if (!v.is_number_integer()) throw ModelFormatError(source, what + " must be an integer, got " + v.dump());
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(INT32_MAX))
    throw ModelFormatError(source, what + " is out of range: " + v.dump());
  const std::int64_t i = v.get<std::int64_t>();
  if (i < INT32_MIN || i > INT32_MAX) throw ModelFormatError(source, what + " is out of range: " + v.dump());
  return i;
}

std::int32_t token_id(const json& v, const std::string& source) {
  const std::int64_t id = integer(v, "eos_token_id", source);
  if (id < 0) throw ModelFormatError(source, "eos_token_id must be token ids >= 0, got " + v.dump());
  return static_cast<std::int32_t>(id);
}

}   // namespace

GenerationConfig GenerationConfig::parse(std::string_view json_text, const std::string& source) {
  if (json_nests_deeper(json_text, 64)) throw ModelFormatError(source, "JSON nested deeper than 64 levels");
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number such as 1e999
    throw ModelFormatError(source, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) throw ModelFormatError(source, "must be a JSON object");
  GenerationConfig c;
  if (const json* eos = field(doc, "eos_token_id")) {
    std::vector<std::int32_t> ids;
    if (eos->is_array()) {
      for (const json& id : *eos) ids.push_back(token_id(id, source));
    } else {
      ids.push_back(token_id(*eos, source));
    }
    c.eos_token_ids = std::move(ids);
  }
  c.temperature = number(doc, "temperature", source);
  if (c.temperature && *c.temperature < 0)
    throw ModelFormatError(source, "temperature must be >= 0, got " + doc["temperature"].dump());
  if (const json* k = field(doc, "top_k")) {
    const std::int64_t top_k = integer(*k, "top_k", source);
    if (top_k < 0) throw ModelFormatError(source, "top_k must be >= 0, got " + k->dump());
    c.top_k = static_cast<int>(top_k);
  }
  c.top_p = number(doc, "top_p", source);
  if (c.top_p && !(*c.top_p > 0 && *c.top_p <= 1))
    throw ModelFormatError(source, "top_p must be in (0, 1], got " + doc["top_p"].dump());
  c.repetition_penalty = number(doc, "repetition_penalty", source);
  if (c.repetition_penalty && !(*c.repetition_penalty > 0))
    throw ModelFormatError(source, "repetition_penalty must be > 0, got " + doc["repetition_penalty"].dump());
  if (const json* s = field(doc, "do_sample")) {
    if (!s->is_boolean()) throw ModelFormatError(source, "do_sample must be true or false, got " + s->dump());
    c.do_sample = s->get<bool>();
  }
  return c;
}

GenerationConfig GenerationConfig::load(const std::filesystem::path& dir) {
  const auto path = dir / "generation_config.json";
  if (!std::filesystem::exists(path)) return {};
  return parse(read_file(path), path.string());
}

EffectiveGeneration effective_generation(const GenerationConfig& file, const GenerationOverrides& user,
                                         std::span<const std::int32_t> config_eos) {
  EffectiveGeneration out;
  SamplingSettings& s = out.sampling;
  const bool greedy_file = file.do_sample == false;
  if (file.temperature && !greedy_file) s.temperature = *file.temperature;
  if (greedy_file) s.temperature = 0.0f;
  if (file.top_k) s.top_k = *file.top_k;
  if (file.top_p) s.top_p = *file.top_p;
  if (file.repetition_penalty) s.repetition_penalty = *file.repetition_penalty;
  if (user.temperature) s.temperature = *user.temperature;
  if (user.top_k) s.top_k = *user.top_k;
  if (user.top_p) s.top_p = *user.top_p;
  if (user.repetition_penalty) s.repetition_penalty = *user.repetition_penalty;
  s.validate();
  if (user.eos_token_ids)
    out.eos_token_ids = *user.eos_token_ids;
  else if (file.eos_token_ids)
    out.eos_token_ids = *file.eos_token_ids;
  else
    out.eos_token_ids.assign(config_eos.begin(), config_eos.end());
  return out;
}

}   // namespace glassbox
