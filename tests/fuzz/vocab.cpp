// vocab.json and merges.txt on arbitrary bytes (the input split at its first NUL byte), then, if
// they load, a round of encoding and decoding with the tokenizer they make.
#include "fuzz.h"
#include "glassbox/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const auto [vocab, merges] = fuzz::split_at_nul(fuzz::as_text(data, size));
  try {
    const Tokenizer tokenizer = Tokenizer::from_strings(vocab, merges);
    const auto ids = tokenizer.encode("Hello world, 123 <|endoftext|> caf\xc3\xa9 \xf0\x9f\x99\x82\n\n  x", true);
    tokenizer.decode(ids);
    StreamingDecoder decoder(tokenizer);
    for (const auto id : ids) decoder.push(id);
    decoder.finish();
  } catch (const Error&) {
  }
  return 0;
}
