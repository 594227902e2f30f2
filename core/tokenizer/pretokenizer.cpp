#include "tokenizer/pretokenizer.h"

#include <array>

#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

enum class CharClass { Letter, Number, Space, Other };

struct Char {
  CharClass cls;
  std::size_t length;   // bytes
  char32_t cp;
};

CharClass classify(char32_t cp) {
  return unicode::is_letter(cp)       ? CharClass::Letter
         : unicode::is_number(cp)     ? CharClass::Number
         : unicode::is_whitespace(cp) ? CharClass::Space
                                      : CharClass::Other;
}

// ASCII, nearly all of English text, by table (made from the same Unicode functions): the UTF-8
// decoder and three table searches per character were a large share of encoding English text
// (docs/performance.md, The tokenizer).
const std::array<CharClass, 128> kAsciiClass = [] {
  std::array<CharClass, 128> table{};
  for (char32_t c = 0; c < 128; ++c) table[c] = classify(c);
  return table;
}();

inline Char char_at(std::string_view text, std::size_t pos) {
  const auto byte = static_cast<unsigned char>(text[pos]);
  if (byte < 0x80) return {kAsciiClass[byte], 1, byte};
  const auto [cp, length] = unicode::decode_utf8(text, pos);
  return {classify(cp), static_cast<std::size_t>(length > 0 ? length : 1), cp};
}

// End of the run of characters of class `cls` starting at pos.
std::size_t run_end(std::string_view text, std::size_t pos, CharClass cls) {
  while (pos < text.size()) {
    const Char c = char_at(text, pos);
    if (c.cls != cls) break;
    pos += c.length;
  }
  return pos;
}

// 's 't 're 've 'm 'll 'd (ASCII, lower case only, as in tiktoken's pattern): length or 0.
std::size_t contraction_length(std::string_view text, std::size_t pos) {
  const std::string_view rest = text.substr(pos + 1);
  if (rest.empty()) return 0;
  const char a = rest[0];
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (rest.size() >= 2) {
    const char b = rest[1];
    if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return 3;
  }
  return 0;
}

}   // namespace

std::size_t next_piece_length(std::string_view text, std::size_t pos) {
  // 's|'t|'re|'ve|'m|'ll|'d
  if (text[pos] == '\'')
    if (const std::size_t n = contraction_length(text, pos)) return n;

  const Char first = char_at(text, pos);
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': an optional ASCII space, then a run of one class.
  if (first.cp == U' ' && pos + 1 < text.size()) {
    const Char second = char_at(text, pos + 1);
    if (second.cls != CharClass::Space) return run_end(text, pos + 1, second.cls) - pos;
  }
  if (first.cls != CharClass::Space) return run_end(text, pos, first.cls) - pos;

  // '\s+(?!\S)|\s+': a whitespace run. If something other than whitespace follows, the run gives
  // its last character away (to become e.g. the ' ' of ' word'), unless that was its only one.
  std::size_t end = pos, last = pos;
  while (end < text.size()) {
    const Char c = char_at(text, end);
    if (c.cls != CharClass::Space) break;
    last = end;
    end += c.length;
  }
  if (end == text.size() || last == pos) return end - pos;
  return last - pos;
}

std::vector<std::string_view> pretokenize(std::string_view text) {
  std::vector<std::string_view> pieces;
  pretokenize(text, [&](std::string_view piece) { pieces.push_back(piece); });
  return pieces;
}

}   // namespace glassbox
