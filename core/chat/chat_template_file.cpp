// A model directory's chat template (glassbox/chat.h): where transformers finds it, and the
// special tokens it hands the template (tokenization_utils_base.py: chat_template.jinja overrides
// tokenizer_config.json's chat_template; a list of named templates is a dict by name, of which
// apply_chat_template takes "default").
#include "glassbox/chat.h"

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "glassbox/error.h"
#include "io/json_depth.h"
#include "io/mapped_file.h"

namespace glassbox {
namespace {

using json = nlohmann::ordered_json;

// Deeper JSON than this is refused before parsing (real messages and configs nest a few levels).
constexpr int kMaxJsonDepth = 64;

// A special token as tokenizer_config.json gives it: a string, an AddedToken object
// {"content": ..., "__type": "AddedToken"}, or null / absent (no token).
std::optional<std::string> special_token(const json& config, const char* key, const std::string& file) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    const auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
  }
  throw ModelFormatError(
      file, std::string(key) + " must be a string or an object with a string \"content\", got " + it->dump());
}

// tokenizer_config.json's chat_template: a string, or [{"name", "template"}, ...] of which
// "default" is taken. nullopt where it has none.
std::optional<std::string> template_in_config(const json& config, const std::string& file) {
  const auto it = config.find("chat_template");
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array())
    throw ModelFormatError(file, "chat_template must be a string or a list of {\"name\", \"template\"}, got " +
                                     std::string(it->type_name()));
  std::string names;
  for (const json& entry : *it) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() || !entry.contains("template") ||
        !entry["template"].is_string())
      throw ModelFormatError(file, "chat_template's list entries must be {\"name\": string, \"template\": string}");
    const std::string name = entry["name"].get<std::string>();
    if (name == "default") return entry["template"].get<std::string>();
    names += (names.empty() ? "" : ", ") + name;
  }
  throw ModelFormatError(
      file, "chat_template is a list of named templates and none is named \"default\" (names: " + names + ")");
}

json parse_json(std::string_view text, const std::string& what, bool file) {
  const auto fail = [&](const std::string& problem) -> json {
    if (file) throw ModelFormatError(what, problem);
    throw InvalidArgument(what + ": " + problem);
  };
  if (json_nests_deeper(text, kMaxJsonDepth))
    return fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  try {
    return json::parse(text);
  } catch (const json::exception& e) {   // parse_error, and out_of_range for a number such as 1e999
    return fail(std::string("not valid JSON: ") + e.what());
  }
}

// "YYYY-MM-DD" naming a day of the calendar (2025-02-30 is refused, not moved to March).
void check_date(const std::string& date) {
  const auto digits = [&](std::size_t from, std::size_t n) {
    int v = 0;
    for (std::size_t i = from; i < from + n; ++i) {
      if (date[i] < '0' || date[i] > '9') return -1;
      v = v * 10 + (date[i] - '0');
    }
    return v;
  };
  const bool shape = date.size() == 10 && date[4] == '-' && date[7] == '-';
  const int year = shape ? digits(0, 4) : -1, month = shape ? digits(5, 2) : -1, day = shape ? digits(8, 2) : -1;
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > days[month - 1])
    throw InvalidArgument("the date \"" + date + "\" is not a day written YYYY-MM-DD, like 2025-02-03");
}

}   // namespace

std::optional<ChatTemplateFile> ChatTemplateFile::from_texts(const std::optional<std::string>& chat_template_jinja,
                                                             const std::optional<std::string>& tokenizer_config_json) {
  return from_named_texts(chat_template_jinja, "chat_template.jinja", tokenizer_config_json, "tokenizer_config.json");
}

std::optional<ChatTemplateFile> ChatTemplateFile::from_named_texts(const std::optional<std::string>& jinja_text,
                                                                   const std::string& jinja_name,
                                                                   const std::optional<std::string>& config_text,
                                                                   const std::string& config_name) {
  ChatTemplateFile out;
  std::optional<std::string> source;
  if (config_text) {
    const json config = parse_json(*config_text, config_name, /*file=*/true);
    if (!config.is_object()) throw ModelFormatError(config_name, "must be a JSON object");
    out.bos_token_ = special_token(config, "bos_token", config_name);
    out.eos_token_ = special_token(config, "eos_token", config_name);
    source = template_in_config(config, config_name);
    out.origin_ = config_name + ": chat_template";
  }
  if (jinja_text) {
    source = jinja_text;
    out.origin_ = jinja_name;
  }
  if (!source) return std::nullopt;
  out.source_ = std::move(*source);
  try {
    out.template_ = std::make_shared<const ChatTemplate>(out.source_);
  } catch (const TemplateError& e) {
    throw e.from(out.origin_);
  }
  return out;
}

std::optional<ChatTemplateFile> ChatTemplateFile::load(const std::filesystem::path& dir) {
  const auto jinja_path = dir / "chat_template.jinja";
  const auto config_path = dir / "tokenizer_config.json";
  std::optional<std::string> jinja_text, config_text;
  if (std::filesystem::exists(jinja_path)) jinja_text = read_file(jinja_path);
  if (std::filesystem::exists(config_path)) config_text = read_file(config_path);
  return from_named_texts(jinja_text, jinja_path.string(), config_text, config_path.string());
}

std::string ChatTemplateFile::render(std::string_view messages_json, const ChatRenderOptions& options) const {
  ChatTemplateOptions o;
  o.bos_token = bos_token_;
  o.eos_token = eos_token_;
  o.add_generation_prompt = options.add_generation_prompt;
  if (!options.date.empty()) check_date(options.date);
  o.date = options.date;
  if (!options.variables_json.empty()) {
    o.variables = parse_json(options.variables_json, "the template variables", /*file=*/false);
    if (!o.variables.is_object())
      throw InvalidArgument("the template variables must be a JSON object like {\"enable_thinking\": false}, got " +
                            std::string(o.variables.type_name()));
  }
  const json messages = parse_json(messages_json, "the messages", /*file=*/false);
  if (!messages.is_array())
    throw InvalidArgument("the messages must be a JSON array of {\"role\": ..., \"content\": ...}, got " +
                          std::string(messages.type_name()));
  try {
    return template_->render(messages, o);
  } catch (const TemplateError& e) {
    throw e.from(origin_);
  }
}

}   // namespace glassbox
