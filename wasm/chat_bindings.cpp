// Embind bindings of the chat module (glassbox-chat.mjs/.wasm, loaded by engine.mjs's chat.mjs at
// a model's first applyChatTemplate or chat): a model's chat template (glassbox/chat.h) apart from
// the engine, whose module every page downloads, and which a page that never talks to an instruct
// model does not need.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <optional>
#include <string>

#include "glassbox/chat.h"
#include "js_glue.h"

namespace {

using emscripten::val;
using glassbox::js::guarded;

std::optional<std::string> text_of(const val& v) {
  if (v.isNull() || v.isUndefined()) return std::nullopt;
  return v.as<std::string>();
}

// A model's chat template, from chat_template.jinja's and tokenizer_config.json's texts (each null
// where the model has no such file).
class ChatTemplate {
 public:
  // null where neither file gives a template; throws (a TemplateError, a ModelFormatError) for one
  // that cannot be read.
  static ChatTemplate* create(const val& jinja, const val& tokenizer_config) {
    return guarded([&]() -> ChatTemplate* {
      auto file = glassbox::ChatTemplateFile::from_texts(text_of(jinja), text_of(tokenizer_config));
      return file ? new ChatTemplate(std::move(*file)) : nullptr;
    });
  }
  explicit ChatTemplate(glassbox::ChatTemplateFile file) : file_(std::move(file)) {}

  // messages_json: the conversation as JSON text; options {addGenerationPrompt: bool, date: string
  // ('' for today), templateVars: a JSON object's text, or ''} -> the rendered text.
  val render(const std::string& messages_json, const val& options) const {
    return guarded([&] {
      glassbox::ChatRenderOptions o;
      o.add_generation_prompt = options["addGenerationPrompt"].as<bool>();
      o.date = options["date"].as<std::string>();
      o.variables_json = options["templateVars"].as<std::string>();
      return glassbox::js::js_text(file_.render(messages_json, o));
    });
  }

 private:
  glassbox::ChatTemplateFile file_;
};

}   // namespace

EMSCRIPTEN_BINDINGS(glassbox_chat) {
  emscripten::class_<ChatTemplate>("ChatTemplate")
      .class_function("create", &ChatTemplate::create, emscripten::allow_raw_pointers())
      .function("render", &ChatTemplate::render);
}
