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

  void encode_ordinary(std::string_view text, std::vector<std::int32_t>& out) const;
};

}   // namespace glassbox
