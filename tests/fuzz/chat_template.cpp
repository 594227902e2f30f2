// A chat template on arbitrary bytes (the input split at its first NUL byte: the template, then
// the messages as JSON, or a fixed conversation where they are not a JSON array), rendered with
// and without the generation prompt.
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "fuzz.h"
#include "io/json_depth.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const auto [source, messages_text] = fuzz::split_at_nul(fuzz::as_text(data, size));
  nlohmann::ordered_json messages =
      nlohmann::ordered_json::array({{{"role", "system"}, {"content", " Be brief. "}},
                                     {{"role", "user"}, {"content", "Hi \xf0\x9f\x99\x82"}},
                                     {{"role", "assistant"}, {"content", "<think>\nhm\n</think>\n\nHello"}},
                                     {{"role", "user"}, {"content", "x"}}});
  if (!json_nests_deeper(messages_text, 32)) {
    auto parsed = nlohmann::ordered_json::parse(messages_text, nullptr, false);
    if (parsed.is_array()) messages = std::move(parsed);
  }
  try {
    const ChatTemplate chat_template{std::string(source)};
    ChatTemplateOptions options;
    options.bos_token = "<s>";
    options.eos_token = "</s>";
    options.date = "2025-02-03";
    options.max_steps = 200000;
    chat_template.render(messages, options);
    options.add_generation_prompt = true;
    options.variables = {{"enable_thinking", false}};
    chat_template.render(messages, options);
  } catch (const Error&) {
  }
  return 0;
}
