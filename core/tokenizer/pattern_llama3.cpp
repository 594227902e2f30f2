#include "tokenizer/pattern_llama3.h"

#include <array>

#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

enum class Cls : unsigned char { Letter, Number, Newline, Space, Other };   // Newline: \r or \n

Cls classify(char32_t cp) {
  if (cp == U'\r' || cp == U'\n') return Cls::Newline;
  return unicode::is_letter(cp)       ? Cls::Letter
         : unicode::is_number(cp)     ? Cls::Number
         : unicode::is_whitespace(cp) ? Cls::Space
                                      : Cls::Other;
}

const std::array<Cls, 128> kAscii = [] {
  std::array<Cls, 128> table{};
  for (char32_t c = 0; c < 128; ++c) table[c] = classify(c);
  return table;
}();

struct Char {
  Cls cls;
  std::size_t length;
  char32_t cp;
};

inline Char char_at(std::string_view text, std::size_t pos) {
  const auto byte = static_cast<unsigned char>(text[pos]);
  if (byte < 0x80) return {kAscii[byte], 1, byte};
  const auto [cp, length] = unicode::decode_utf8(text, pos);
  return {classify(cp), static_cast<std::size_t>(length > 0 ? length : 1), cp};
}

bool is_space(Cls c) { return c == Cls::Space || c == Cls::Newline; }   // \s

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at text[pos] == '\'': its length, or 0. Case-insensitive as
// Oniguruma: U+017F LONG S folds to s.
std::size_t contraction(std::string_view text, std::size_t pos) {
  if (pos + 1 >= text.size()) return 0;
  const auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); };
  const char a = lower(text[pos + 1]);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (text.substr(pos + 1).starts_with("\u017F")) return 3;   // ' and the two bytes of ſ
  if (pos + 2 < text.size()) {
    const char b = lower(text[pos + 2]);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  return 0;
}

// End of the run of characters satisfying keep, from pos.
template <typename Keep>
std::size_t run_end(std::string_view text, std::size_t pos, Keep&& keep) {
  while (pos < text.size()) {
    const Char c = char_at(text, pos);
    if (!keep(c.cls)) break;
    pos += c.length;
  }
  return pos;
}

}   // namespace

std::size_t llama3_piece_length(std::string_view text, std::size_t pos, int max_digits) {
  if (text[pos] == '\'')
    if (const std::size_t n = contraction(text, pos)) return n;
  const Char first = char_at(text, pos);
  const auto is_letter = [](Cls c) { return c == Cls::Letter; };

  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (first.cls == Cls::Letter) return run_end(text, pos, is_letter) - pos;
  if (first.cls != Cls::Newline && first.cls != Cls::Number && pos + first.length < text.size() &&
      char_at(text, pos + first.length).cls == Cls::Letter)
    return run_end(text, pos + first.length, is_letter) - pos;

  // \p{N}{1,max_digits}
  if (first.cls == Cls::Number) {
    std::size_t end = pos;
    for (int i = 0; i < max_digits && end < text.size(); ++i) {
      const Char c = char_at(text, end);
      if (c.cls != Cls::Number) break;
      end += c.length;
    }
    return end - pos;
  }

  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const auto is_other = [](Cls c) { return c == Cls::Other; };
  std::size_t start = pos;
  if (first.cp == U' ' && pos + 1 < text.size() && char_at(text, pos + 1).cls == Cls::Other) start = pos + 1;
  if (start != pos || first.cls == Cls::Other) {
    const std::size_t end = run_end(text, start, is_other);
    return run_end(text, end, [](Cls c) { return c == Cls::Newline; }) - pos;
  }

  // Whitespace from here on: the run, and where its last \r or \n ends.
  std::size_t end = pos, last_newline_end = 0, last_start = pos;
  while (end < text.size()) {
    const Char c = char_at(text, end);
    if (!is_space(c.cls)) break;
    last_start = end;
    end += c.length;
    if (c.cls == Cls::Newline) last_newline_end = end;
  }
  // \s*[\r\n]+: up to the run's last newline.
  if (last_newline_end != 0) return last_newline_end - pos;
  // \s+(?!\S): all of the run at the end of the text; else all but its last character, if it
  // has more than one; else \s+.
  if (end == text.size() || last_start == pos) return end - pos;
  return last_start - pos;
}

}   // namespace glassbox
