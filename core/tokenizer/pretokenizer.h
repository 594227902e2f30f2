// GPT-2's pre-tokenization: the regex that cuts text into pieces before BPE, written by hand
// (std::regex has no Unicode classes, is slow, and we want the same code in WebAssembly):
//
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// with tiktoken's semantics: \s is Unicode White_Space, the contractions are case-sensitive, and
// alternatives are tried in order at each position (leftmost-first, greedy).
#pragma once

#include <string_view>
#include <vector>

namespace glassbox {

// Calls on_piece(piece) for each piece, in order; the pieces concatenate to `text`.
// `text` must be valid UTF-8 (Tokenizer::encode checks it first).
template <typename OnPiece>
void pretokenize(std::string_view text, OnPiece&& on_piece);

// The same, collected.
std::vector<std::string_view> pretokenize(std::string_view text);

// --- implementation

// Length in bytes of the piece that starts at text[pos] (pos < text.size()).
std::size_t next_piece_length(std::string_view text, std::size_t pos);

template <typename OnPiece>
void pretokenize(std::string_view text, OnPiece&& on_piece) {
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t n = next_piece_length(text, pos);
    on_piece(text.substr(pos, n));
    pos += n;
  }
}

}   // namespace glassbox
