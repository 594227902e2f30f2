// The pre-tokenizer pattern of Llama 3 and (with single digits) of Qwen2/Qwen3, written by hand:
//
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// Most text of these models goes through this pattern, and the generic regex engine (regex.h)
// tries every alternative at every position, where a hand-written matcher decides from one or
// two characters which alternative applies. The tokenizer.json reader uses this matcher when a Split carries exactly
// one of these two patterns, and tests check it against the generic engine on every fixture text.
#pragma once

#include <cstddef>
#include <string_view>

namespace glassbox {

inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Length in bytes of the match at text[pos] (pos < text.size(), valid UTF-8); the pattern matches
// at every position, so the matches cover the text. max_digits: 3 for Llama 3, 1 for Qwen2.
std::size_t llama3_piece_length(std::string_view text, std::size_t pos, int max_digits);

}   // namespace glassbox
