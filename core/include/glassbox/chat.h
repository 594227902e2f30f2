// A model's chat template: how a conversation becomes the text an instruct model was trained on,
// rendered exactly as transformers' apply_chat_template renders it with Python's jinja2.
//
// The template comes from the model directory: chat_template.jinja (transformers v5's file) or
// else tokenizer_config.json's "chat_template" (a string, or a list of {"name", "template"} of
// which "default" is taken), with the bos_token and eos_token tokenizer_config.json names.
//
//   const auto chat = ChatTemplateFile::load(dir);   // nullopt: the directory has no chat template
//   std::string prompt = chat->render(R"([{"role": "user", "content": "Hi"}])");
//   auto ids = tokenizer.encode(prompt, /*allow_special=*/true, /*add_special=*/false);
//
// The rendered text carries the template's special tokens (<|im_start|>, <|begin_of_text|>, ...)
// as text: encode it with allow_special, and without add_special, as apply_chat_template(tokenize=
// True) calls tokenizer(text, add_special_tokens=False): a template that wants a BOS writes it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace glassbox {

class ChatTemplate;   // the template engine (core/chat/), kept out of the public headers

struct ChatRenderOptions {
  // End with the header of the assistant's turn, so that the model writes the reply next.
  bool add_generation_prompt = true;
  // The day strftime_now formats, "YYYY-MM-DD"; empty: today (local time).
  std::string date;
  // More template variables, as a JSON object's text, e.g. {"enable_thinking": false} or
  // {"tools": [...]}; empty: none. They override messages, add_generation_prompt and the tokens.
  std::string variables_json;
};

class ChatTemplateFile {
 public:
  // Reads dir/chat_template.jinja, or else dir/tokenizer_config.json's chat_template; nullopt when
  // the directory has neither. Throws ModelFormatError naming the file for a malformed
  // tokenizer_config.json or chat_template value, TemplateError naming the file for a template
  // syntax error.
  static std::optional<ChatTemplateFile> load(const std::filesystem::path& dir);
  static bool has_chat_template(const std::filesystem::path& dir) { return load(dir).has_value(); }

  // The same from the files' texts (for callers that hold the files, such as the browser): either
  // may be absent (nullopt).
  static std::optional<ChatTemplateFile> from_texts(const std::optional<std::string>& chat_template_jinja,
                                                    const std::optional<std::string>& tokenizer_config_json);

  // messages_json: a JSON array of {"role", "content", ...}. Throws TemplateError naming the file,
  // line and column when the template fails or calls raise_exception (whose message is its
  // problem()), InvalidArgument for malformed messages, variables or date.
  std::string render(std::string_view messages_json, const ChatRenderOptions& options = {}) const;

  const std::string& source() const { return source_; }   // the template text
  // Where the template came from: "chat_template.jinja" or "tokenizer_config.json: chat_template".
  const std::string& origin() const { return origin_; }
  // tokenizer_config.json's bos_token / eos_token text; nullopt where it gives none (the template
  // then sees them undefined, as transformers does).
  const std::optional<std::string>& bos_token() const { return bos_token_; }
  const std::optional<std::string>& eos_token() const { return eos_token_; }

 private:
  ChatTemplateFile() = default;
  static std::optional<ChatTemplateFile> from_named_texts(const std::optional<std::string>& jinja_text,
                                                          const std::string& jinja_name,
                                                          const std::optional<std::string>& config_text,
                                                          const std::string& config_name);

  std::shared_ptr<const ChatTemplate> template_;   // parsed once; immutable, so copies share it
  std::string source_;
  std::string origin_;
  std::optional<std::string> bos_token_;
  std::optional<std::string> eos_token_;
};

}   // namespace glassbox
