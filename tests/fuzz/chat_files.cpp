// The small JSON files of an instruct model on arbitrary bytes: generation_config.json (first byte
// even) and tokenizer_config.json's chat template and special tokens (first byte odd). Either a
// result the generator can rely on, or an error naming the problem.
#include <cmath>
#include <cstdlib>

#include "fuzz.h"
#include "glassbox/chat.h"
#include "glassbox/generation_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  if (size == 0) return 0;
  const std::string text(fuzz::as_text(data + 1, size - 1));
  try {
    if (data[0] % 2 == 0) {
      const GenerationConfig c = GenerationConfig::parse(text);
      // What parse() promises: settings the sampler accepts, ids >= 0.
      const EffectiveGeneration e = effective_generation(c, {});
      if (!std::isfinite(e.sampling.temperature) || e.sampling.temperature < 0 || e.sampling.top_k < 0 ||
          !(e.sampling.top_p > 0 && e.sampling.top_p <= 1) || !(e.sampling.repetition_penalty > 0))
        std::abort();
      for (const auto id : e.eos_token_ids)
        if (id < 0) std::abort();
    } else if (const auto chat = ChatTemplateFile::from_texts(std::nullopt, text)) {
      if (chat->origin() != "tokenizer_config.json: chat_template") std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}
