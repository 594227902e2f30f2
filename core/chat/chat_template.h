// Chat templates: a model's Jinja `chat_template` rendered over a conversation exactly as
// transformers' apply_chat_template renders it with Python's jinja2 (an ImmutableSandboxedEnvironment
// with trim_blocks and lstrip_blocks, raise_exception, strftime_now, and transformers' tojson).
//
// The template language is the subset real chat templates use (jinja_lexer.h, jinja_parser.h,
// jinja_builtins.h list what is there); anything else is a TemplateError naming its place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/chat_error.h"
#include "chat/jinja_ast.h"

namespace glassbox {

struct ChatTemplateOptions {
  // The tokenizer's special tokens; an absent one is undefined in the template, as a token the
  // tokenizer does not have is missing from transformers' special_tokens_map.
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  bool add_generation_prompt = false;
  // More variables (enable_thinking, tools, ...): a JSON object; they override the ones above.
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  // The day strftime_now formats, "YYYY-MM-DD" (at midnight); empty: the local time now.
  std::string date;
  // Statements, expressions and loop rounds one render may evaluate before it fails: a bound for
  // hostile templates, far above what real templates over long conversations need.
  uint64_t max_steps = 10'000'000;
};

class ChatTemplate {
 public:
  // Parses the template; throws TemplateError on a syntax error.
  explicit ChatTemplate(const std::string& source);

  // messages: a JSON array of {role, content, ...}. Throws TemplateError when the template fails
  // or calls raise_exception (whose message is the error's problem()), InvalidArgument when the
  // messages or options are malformed.
  std::string render(const nlohmann::ordered_json& messages, const ChatTemplateOptions& options) const;

 private:
  jinja::Body body_;
};

// One render of a template.
std::string render_chat_template(const std::string& source, const nlohmann::ordered_json& messages,
                                 const ChatTemplateOptions& options);

}   // namespace glassbox
