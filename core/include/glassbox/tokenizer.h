// GPT-2's byte-level BPE tokenizer, byte-exact with OpenAI's tiktoken "gpt2" encoding.
//
//   text -> pre-tokenizer (GPT-2's regex, by hand) -> pieces -> bytes -> BPE merges -> ids
//   ids  -> bytes of each token -> text
//
// Loaded from the Hugging Face files vocab.json (token string -> id, where each byte is written
// as a printable character through GPT-2's bytes_to_unicode table) and merges.txt (one merge per
// line, best first), or from tokenizer.json, which also names its own pre-tokenizer pattern,
// normalizer, added tokens and post-processor (Llama 3, Qwen2/Qwen3 and the like).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox {

// The mask a masked LM fills (`glassbox train --task mlm` adds it to the vocabulary it learns).
inline constexpr std::string_view kMaskToken = "<|mask|>";

class Tokenizer {
 public:
  // Reads dir/vocab.json and dir/merges.txt. Throws ModelFormatError naming the file and problem:
  // ids that are not 0..n-1 each once, a missing byte token, a merge line that does not merge two
  // tokens into a third, or a token that two tokens of the vocabulary make but no merge does (an
  // empty or cut-short merges.txt; a vocabulary of only the bytes needs no merges).
  //
  // Where dir has tokenizer.json, that is read instead (from_tokenizer_json), as the Hugging Face
  // libraries do; both give the same ids for GPT-2's files.
  static Tokenizer load(const std::filesystem::path& dir);
  static Tokenizer from_strings(std::string_view vocab_json, std::string_view merges_txt,
                                const std::string& vocab_source = "vocab.json",
                                const std::string& merges_source = "merges.txt");
  // A tokenizer.json (the Hugging Face tokenizers library's format), encoding exactly as that
  // library does: byte-level BPE (GPT-2, Llama 3, Qwen2/Qwen3) and SentencePiece-style BPE
  // (Llama 2, Mistral). Model BPE (byte_fallback, unk_token, fuse_unk, ignore_merges,
  // continuing_subword_prefix, end_of_word_suffix); normalizers NFC, NFD, NFKC, NFKD, Lowercase,
  // Strip, Prepend, Replace, Sequence; pre-tokenizers ByteLevel, Split (every behavior, invert),
  // Digits, Punctuation, WhitespaceSplit, Metaspace, Sequence; post-processors
  // TemplateProcessing, ByteLevel, Sequence; decoders ByteLevel, Replace, ByteFallback, Fuse,
  // Strip, Metaspace, BPEDecoder, Sequence. Another component type ("unknown ... type" where the
  // library has no such type either), malformed JSON, ids with gaps, or a merge naming a token
  // the vocabulary lacks: ModelFormatError naming `source` and the problem.
  static Tokenizer from_tokenizer_json(std::string_view json, const std::string& source = "tokenizer.json");

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text -> ids. `text` must be valid UTF-8, otherwise InvalidArgument names the byte offset
  // (the caller decides whether to fix its input; nothing is silently replaced).
  // Special tokens such as "<|endoftext|>" are ordinary text unless allow_special is true, as in
  // tiktoken's encode_ordinary; ordinary text never produces a special token's id. With
  // allow_special, the spaces right before kMaskToken belong to it, as they do to RoBERTa's <mask>
  // (a masked LM replaces a whole token, its leading space included: "The <|mask|> said" reads as
  // "The", mask, " said"). A tokenizer.json's added tokens that are not special are always
  // matched, as the tokenizers library does, each with its lstrip/rstrip/single_word.
  // add_special adds the post-processor's tokens (a tokenizer.json's TemplateProcessing, e.g.
  // BOS): encode(text, true, true) is what transformers' tokenizer(text) gives.
  std::vector<std::int32_t> encode(std::string_view text, bool allow_special = false, bool add_special = false) const;

  // The ids a classifier reads for a text: its tokens (special tokens as text), then <|endoftext|>
  // if the vocabulary has it: the token whose final hidden state `glassbox train --task classify`
  // teaches the score head to read (as GPT-1 appended an extract token). At most max_tokens ids:
  // text tokens are dropped from the end to fit. Throws as encode does.
  std::vector<std::int32_t> encode_for_classifier(std::string_view text, int max_tokens) const;

  // Ids -> text. Byte sequences that are not valid UTF-8 (possible for arbitrary ids) become
  // U+FFFD, as tiktoken's decode does. Throws InvalidArgument for an id outside the vocabulary.
  std::string decode(std::span<const std::int32_t> ids) const;
  // The raw bytes of one token (not necessarily whole UTF-8 characters).
  const std::string& token_bytes(std::int32_t id) const;

  int vocab_size() const;
  // The id of a special token such as "<|endoftext|>", if the vocabulary has it.
  std::optional<std::int32_t> special_token(std::string_view name) const;
  // Every special token's id, in increasing order: GPT-2's <|name|> tokens, or a tokenizer.json's
  // added tokens marked special (the ones allow_special matches in text).
  std::vector<std::int32_t> special_ids() const;

 private:
  friend class StreamingDecoder;   // decodes SentencePiece-style token runs through the decoder chain
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The byte offset of the first byte that does not start valid UTF-8 (RFC 3629: no overlong forms,
// no surrogates), or nothing if all of `text` is valid.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

// Turns a stream of ids into text that only ever contains whole UTF-8 characters: a token that
// ends inside a character is held back until the character completes (emoji span several
// tokens). Invalid bytes become U+FFFD.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  // The text that became complete with this token ("" while a character is still incomplete).
  std::string push(std::int32_t id);
  // Whatever is still held back, with an incomplete character as U+FFFD; resets the decoder.
  std::string finish();

 private:
  std::string push_text(std::int32_t id);
  std::string flush_window();
  const Tokenizer& tokenizer_;
  std::string pending_;   // bytes of an incomplete character
  // A tokenizer.json with a decoder chain (SentencePiece-style): the ids not yet decoded, and the
  // last one decoded (-1: none yet).
  std::vector<std::int32_t> window_;
  std::int32_t anchor_ = -1;
};

}   // namespace glassbox
