// The steps a tokenizer.json describes around its BPE model, in the order the Hugging Face
// tokenizers library runs them on a text:
//
//   added tokens (those not normalized, on the raw text) -> normalizer -> added tokens (normalized)
//   -> pre-tokenizer steps -> BPE per piece -> post-processor (BOS and friends, when asked for)
//
// Built by tokenizer_json.cpp, run by pipeline.cpp. Two token representations:
// - byte-level (GPT-2, Llama 3, Qwen2): pieces are raw UTF-8 bytes and the vocabulary is stored as
//   raw bytes (its byte-level characters decoded once at load), so ByteLevel's byte mapping costs
//   nothing per token, and decoding is concatenation;
// - text (SentencePiece-style: Llama 2, Mistral): the vocabulary is the file's own strings ("▁the",
//   "<0xE4>"), BPE starts from a piece's characters (byte_fallback for those the vocabulary lacks),
//   and decoding runs the file's decoder chain (decoder.h) over those strings.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/decoder.h"
#include "tokenizer/regex.h"

namespace glassbox {

// How a Split keeps what its pattern matched (the library's SplitDelimiterBehavior).
enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

struct PreTokenizerStep {
  enum class Kind {
    ByteLevel,         // optional prefix space, then (use_regex) GPT-2's pattern, isolated
    Split,             // a pattern and a behavior
    Digits,            // \p{N} characters, each alone or in runs
    Metaspace,         // spaces become `replacement`, one prepended (prepend_scheme), split before each
    WhitespaceSplit,   // White_Space removed, the rest in pieces
    Whitespace,        // \w+|[^\w\s]+ kept (Unicode \w: unicode::is_word), the rest removed
    Punctuation,       // each punctuation character a match, kept as `behavior` says
  };
  Kind kind;
  bool add_prefix_space = false;   // ByteLevel
  bool use_regex = false;          // ByteLevel
  // Split: GPT-2's own pattern runs through its hand-written matcher (pretokenizer.h), Llama 3's
  // and Qwen2's through theirs (pattern_llama3.h: llama3_digits 3 or 1), any other through the
  // regex engine.
  bool gpt2_pattern = false;
  int llama3_digits = 0;
  std::shared_ptr<const Regex> regex;
  SplitBehavior behavior = SplitBehavior::Isolated;   // Split, Punctuation
  bool invert = false;
  bool individual_digits = false;   // Digits
  // Metaspace: prepend_scheme "always" (prepend_always), "first" (prepend_first: only to the piece
  // that starts the text), "never" (neither).
  std::string replacement;
  bool prepend_always = false, prepend_first = false, split = false;
};

struct NormalizerStep {
  enum class Kind {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    Lowercase,
    Strip,     // White_Space at the start (strip_left) and / or end (strip_right)
    Prepend,   // `content` before a non-empty text
    Replace,   // each match of `literal` (or `regex`, when set) by `content`
  };
  Kind kind;
  std::string content;
  std::string literal;
  std::shared_ptr<const Regex> regex;
  bool strip_left = false, strip_right = false;
};

using PieceSink = std::function<void(std::string_view)>;

struct AddedToken {
  std::string content;
  std::int32_t id;
  bool special, lstrip, rstrip, single_word, normalized;
};

struct Pipeline {
  std::vector<NormalizerStep> normalizers;
  std::vector<PreTokenizerStep> pre_tokenizers;
  std::vector<AddedToken> added_tokens;
  std::vector<std::int32_t> prefix_ids, suffix_ids;   // the post-processor's tokens around a text
  std::vector<DecoderStep> decoders;                  // the text representation's decoder chain
  bool ignore_merges = false;   // a piece that is a whole vocabulary token is that token, unmerged

  // Cuts a normalized text into the pieces BPE encodes: sink(piece) for each, in order.
  // at_start: `text` begins the encoded text (Metaspace's prepend_scheme "first" prepends only then).
  void pre_tokenize(std::string_view text, const PieceSink& sink, bool at_start = true) const;
  // The same, collected.
  void pre_tokenize(std::string_view text, std::vector<std::string>& pieces) const;
};

// Applies the normalizers in order.
std::string normalize(const std::vector<NormalizerStep>& steps, std::string_view text);

}   // namespace glassbox
