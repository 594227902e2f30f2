// tokenizer.json on arbitrary bytes (the input split at its first NUL byte: the file, then a text):
// reading it must end in a Tokenizer or a glassbox::Error (a regex past its step budget
// included), never another exception, a crash or a hang; a Tokenizer then encodes the text (its
// own, or a fixed one with special tokens, digits, CJK and emoji when none is given), decodes the
// ids, and streams them.
#include <string>

#include "fuzz.h"
#include "glassbox/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const auto [file, given] = fuzz::split_at_nul(fuzz::as_text(data, size));
  const std::string text = given.empty()
                               ? "Hello world, 123 <|endoftext|><s> caf\xc3\xa9 \xe4\xbd\xa0 \xf0\x9f\x99\x82\n\n  x"
                               : std::string(given);
  try {
    const Tokenizer tokenizer = Tokenizer::from_tokenizer_json(file);
    for (const bool allow_special : {false, true}) {
      const auto ids = tokenizer.encode(text, allow_special, allow_special);
      tokenizer.decode(ids);
      StreamingDecoder decoder(tokenizer);
      for (const auto id : ids) decoder.push(id);
      decoder.finish();
    }
  } catch (const Error&) {
  }
  return 0;
}
