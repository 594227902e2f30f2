// A tokenizer.json's decoder chain for the text token representation (pipeline.h): the tokens'
// own strings ("▁the", "<0xE4>") through the steps in order, each taking the list of token strings
// to a new list, then joined, as the Hugging Face library's Decoder::decode_chain does. The steps
// are per token, except Fuse (joins them all into one) and the token index Metaspace looks at.
// Byte-level pipelines never get here: their tokens are stored as raw bytes, so decoding them is
// concatenation (tokenizer.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/regex.h"

namespace glassbox {

struct DecoderStep {
  enum class Kind {
    ByteLevel,      // byte-level characters back to bytes, all tokens joined (lossy UTF-8)
    Replace,        // each match of `literal` (or `regex`) by `content`, per token
    ByteFallback,   // runs of "<0xAB>" tokens to their bytes; a run that is not UTF-8: one U+FFFD per token
    Fuse,           // all tokens into one
    Strip,          // up to `start` leading and `stop` trailing `strip` characters, per token
    Metaspace,      // `replacement` to ' ', dropped in the first token unless prepend_scheme is never
    BpeSuffix,      // BPEDecoder: end_of_word_suffix (`literal`) to ' ', to "" in the last token
  };
  Kind kind;
  std::string literal, content;   // Replace
  std::shared_ptr<const Regex> regex;
  char32_t strip = U' ';   // Strip
  std::size_t start = 0, stop = 0;
  std::string replacement;   // Metaspace
  bool prepend_never = false;
};

// The decoded text of `tokens` (the vocabulary's strings, in order).
std::string decode_chain(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens);

// The text one token stands for alone, inside a text (not the first token): what token_bytes
// shows. A "<0xAB>" token is its byte where the chain has ByteFallback.
std::string token_text(const std::vector<DecoderStep>& steps, const std::string& token);

// The byte a "<0xAB>" token stands for (ByteFallback's test), or -1.
int fallback_byte(std::string_view token);

}   // namespace glassbox
