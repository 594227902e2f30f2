// The GPT-2 tokenizer on arbitrary bytes: the input as text to encode (valid UTF-8 must round-trip
// through decode; anything else must be refused), and as little-endian 16-bit ids to decode, some
// of them outside the vocabulary.
#include <cstdlib>
#include <vector>

#include "fuzz.h"
#include "glassbox/tokenizer.h"

namespace {
const glassbox::Tokenizer& gpt2() {
  static const auto tokenizer = glassbox::Tokenizer::load(GLASSBOX_FIXTURES_DIR "/tokenizer/gpt2");
  return tokenizer;
}
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const Tokenizer& tokenizer = gpt2();
  const std::string_view text = fuzz::as_text(data, size);
  for (const bool allow_special : {false, true}) {
    try {
      const auto ids = tokenizer.encode(text, allow_special);
      if (tokenizer.decode(ids) != text) std::abort();   // BPE over bytes loses nothing
    } catch (const InvalidArgument&) {
      if (!first_invalid_utf8(text)) std::abort();   // refused only for invalid UTF-8
    }
  }
  std::vector<std::int32_t> ids;
  for (std::size_t i = 0; i + 1 < size; i += 2)
    ids.push_back((data[i] | data[i + 1] << 8) % (tokenizer.vocab_size() + 16));
  try {
    tokenizer.decode(ids);
  } catch (const InvalidArgument&) {
  }
  StreamingDecoder decoder(tokenizer);
  for (const auto id : ids) {
    if (id >= tokenizer.vocab_size()) continue;
    decoder.push(id);
  }
  decoder.finish();
  return 0;
}
