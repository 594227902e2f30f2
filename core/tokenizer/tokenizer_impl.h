// What a Tokenizer holds, shared by the files that make one (tokenizer_files.cpp: reading
// vocab.json and merges.txt, once per load) and use one (tokenizer.cpp: encoding and decoding).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "glassbox/tokenizer.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pipeline.h"

namespace glassbox {

// Heterogeneous lookup: find a std::string key with a std::string_view, without a copy.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

// GPT-2 marks special tokens as <|name|>; they never come out of ordinary text.
inline bool is_special(std::string_view token) {
  return token.size() > 4 && token.substr(0, 2) == "<|" && token.substr(token.size() - 2) == "|>";
}

struct Tokenizer::Impl {
  std::vector<std::string> bytes_of;                            // id -> raw bytes
  TokenMap ordinary;                                            // raw bytes -> id, special tokens excluded
  std::vector<std::pair<std::string, std::int32_t>> specials;   // "<|endoftext|>" -> id
  std::array<std::int32_t, 256> byte_id{};                      // the single-byte token of each byte
  MergeTable merges;
  // Made from tokenizer.json: its pipeline (absent for vocab.json + merges.txt, whose steps are
  // GPT-2's, fixed). Special tokens are then pipeline->added_tokens; `specials` lists them too.
  std::unique_ptr<Pipeline> pipeline;
  // Where BPE runs its merges even on a piece that is a whole token (tokenizer.json without
  // ignore_merges): whether merging a token's own bytes gives that token, per id. The merges of
  // most vocabularies make every token from its bytes, so a piece that is a token can still skip
  // merging when its flag says so; empty: always skip (vocab.json, and ignore_merges).
  std::vector<bool> merges_to_itself;

  // The text token representation (pipeline.h: SentencePiece-style files): `ordinary` maps the
  // file's token strings, BPE starts from a piece's characters, and a character the vocabulary
  // lacks becomes its bytes' "<0xAB>" tokens (byte_fallback: fallback_id, -1 where absent), else
  // unk_id (consecutive ones fused into one with fuse_unk), else nothing, as the library's
  // BPE::merge_word. bytes_of holds each token's text alone (decoder.h token_text), `pieces` the
  // file's strings, which decode() runs through the decoder chain.
  bool text_tokens = false;
  // model.continuing_subword_prefix / end_of_word_suffix (in the vocabulary's representation):
  // BPE's starting symbols are the units (bytes or characters) with the prefix on all but the
  // first and the suffix on the last, as merge_word.
  std::string subword_prefix, word_suffix;
  std::array<std::int32_t, 256> fallback_id = [] {
    std::array<std::int32_t, 256> none;
    none.fill(-1);
    return none;
  }();
  std::int32_t unk_id = -1;
  bool fuse_unk = false;
  std::vector<std::string> pieces;

  // GPT-2's steps (vocab.json + merges.txt).
  void encode_ordinary(std::string_view text, std::vector<std::int32_t>& out) const;
  // tokenizer.json's steps (pipeline.cpp).
  void encode_pipeline(std::string_view text, bool allow_special, bool add_special,
                       std::vector<std::int32_t>& out) const;
  // BPE of one piece's bytes.
  void encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const;
  // Sets merges_to_itself (for BPE without ignore_merges): whether each token's own bytes (or
  // characters) merge back into it.
  void find_tokens_merging_to_themselves();
  // The symbols BPE starts `piece` from: one per byte, or (text_tokens) per character.
  void initial_symbols(std::string_view piece, std::vector<std::int32_t>& symbols) const;
};

}   // namespace glassbox
