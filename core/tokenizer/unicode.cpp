#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

namespace glassbox::unicode {
namespace {

struct CodepointRange {
  char32_t first, last;   // inclusive
};

#include "tokenizer/unicode_tables.inc"

// --- character classes

enum : std::uint8_t { kLetter = 1, kNumber = 2, kWhiteSpace = 4 };

// Flags of U+0000..U+00FF, derived from the same tables at compile time: nearly all text the
// pre-tokenizer sees is ASCII, and it classifies every character, so those skip the search.
constexpr std::array<std::uint8_t, 256> make_latin1_flags() {
  std::array<std::uint8_t, 256> flags{};
  auto mark = [&flags](std::span<const CodepointRange> ranges, std::uint8_t flag) {
    for (const CodepointRange& r : ranges)
      for (char32_t cp = r.first; cp <= r.last && cp < 256; ++cp) flags[cp] |= flag;
  };
  mark(kLetterRanges, kLetter);
  mark(kNumberRanges, kNumber);
  mark(kWhiteSpaceRanges, kWhiteSpace);
  return flags;
}
constexpr std::array<std::uint8_t, 256> kLatin1Flags = make_latin1_flags();

bool in_ranges(std::span<const CodepointRange> ranges, char32_t cp) {
  // The first range that ends at or after cp; cp is in the table iff that range starts by cp.
  const auto it = std::lower_bound(ranges.begin(), ranges.end(), cp,
                                   [](const CodepointRange& r, char32_t c) { return r.last < c; });
  return it != ranges.end() && it->first <= cp;
}

// kWordExtraRanges packs a range into one uint32: first << kWordLengthBits | (length - 1).
bool in_packed_ranges(std::span<const std::uint32_t> ranges, char32_t cp) {
  // The last range that starts at or before cp; cp is in the table iff that range reaches it.
  const auto key = (static_cast<std::uint32_t>(cp) << kWordLengthBits) | ((1u << kWordLengthBits) - 1);
  const auto it = std::upper_bound(ranges.begin(), ranges.end(), key);
  if (it == ranges.begin()) return false;
  const std::uint32_t packed = *(it - 1);
  return cp - (packed >> kWordLengthBits) <= (packed & ((1u << kWordLengthBits) - 1));
}

// --- UTF-8

// What a lead byte announces (RFC 3629, or Unicode's table 3-7 of well-formed byte sequences):
// the sequence length and the allowed range of the second byte, which is where overlong forms,
// surrogates and values above U+10FFFF are excluded. Later bytes are always 80..BF.
struct Lead {
  int length;   // 0: this byte never starts a character
  std::uint8_t lo, hi;
};
constexpr Lead lead_info(std::uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b < 0xC2) return {0, 0, 0};   // continuation byte, or C0/C1 (overlong 2-byte forms)
  if (b < 0xE0) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};   // E0 80..9F would be overlong
  if (b == 0xED) return {3, 0x80, 0x9F};   // ED A0..BF would be surrogates U+D800..U+DFFF
  if (b < 0xF0) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};   // F0 80..8F would be overlong
  if (b < 0xF4) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};   // F4 90.. would be above U+10FFFF
  return {0, 0, 0};                        // F5..FF
}

// How much of the sequence at text[pos] (pos < size) is well formed: `valid` bytes of the `needed`
// its lead byte announces. valid == needed > 0: a complete character. needed == 0: invalid lead
// byte. Otherwise the sequence breaks off after `valid` bytes, either at the end of the text
// (incomplete) or at a byte that doesn't fit (ill-formed); those `valid` bytes are then a maximal
// subpart, which gets one U+FFFD.
struct Scan {
  std::size_t needed, valid;
};
Scan scan(std::string_view text, std::size_t pos) {
  const Lead lead = lead_info(static_cast<std::uint8_t>(text[pos]));
  if (lead.length == 0) return {0, 0};
  const auto length = static_cast<std::size_t>(lead.length);
  std::size_t n = 1;
  for (; n < length && pos + n < text.size(); ++n) {
    const auto b = static_cast<std::uint8_t>(text[pos + n]);
    if (b < (n == 1 ? lead.lo : 0x80) || b > (n == 1 ? lead.hi : 0xBF)) break;
  }
  return {length, n};
}

constexpr char kReplacement[] = "\xEF\xBF\xBD";   // U+FFFD

}   // namespace

bool is_letter(char32_t cp) { return cp < 256 ? (kLatin1Flags[cp] & kLetter) != 0 : in_ranges(kLetterRanges, cp); }
bool is_number(char32_t cp) { return cp < 256 ? (kLatin1Flags[cp] & kNumber) != 0 : in_ranges(kNumberRanges, cp); }
bool is_punctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  return in_ranges(kPunctuationRanges, cp);
}
bool is_word(char32_t cp) {
  if (cp < 0x80)
    return (cp >= U'0' && cp <= U'9') || (cp >= U'A' && cp <= U'Z') || (cp >= U'a' && cp <= U'z') || cp == U'_';
  // \w contains every letter, so the table holds only what it adds to \p{L}.
  return cp <= 0x10FFFF && (is_letter(cp) || in_packed_ranges(kWordExtraRanges, cp));
}
bool is_whitespace(char32_t cp) {
  return cp < 256 ? (kLatin1Flags[cp] & kWhiteSpace) != 0 : in_ranges(kWhiteSpaceRanges, cp);
}

std::string_view unicode_version() { return kUnicodeVersion; }

Utf8Char decode_utf8(std::string_view text, std::size_t pos) {
  if (pos >= text.size()) return {0xFFFD, 0};
  const auto b0 = static_cast<std::uint8_t>(text[pos]);
  if (b0 < 0x80) return {b0, 1};
  const Scan s = scan(text, pos);
  if (s.needed == 0 || s.valid < s.needed) return {0xFFFD, 0};
  // The lead byte keeps 7 - length payload bits; each continuation byte adds 6.
  char32_t cp = b0 & (0x7Fu >> s.needed);
  for (std::size_t i = 1; i < s.needed; ++i) cp = (cp << 6) | (static_cast<std::uint8_t>(text[pos + i]) & 0x3Fu);
  return {cp, static_cast<int>(s.needed)};
}

void append_utf8(std::string& out, char32_t cp) {
  if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t complete_utf8_prefix(std::string_view bytes) {
  std::size_t pos = 0;
  while (pos < bytes.size()) {
    const Scan s = scan(bytes, pos);
    // Valid so far and cut off only by the end: the next bytes may complete it, so hold it back.
    if (s.valid < s.needed && pos + s.valid == bytes.size()) return pos;
    pos += std::max<std::size_t>(s.valid, 1);
  }
  return pos;
}

std::size_t valid_utf8_prefix(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<std::uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Scan s = scan(text, pos);
    if (s.needed == 0 || s.valid < s.needed) return pos;
    pos += s.needed;
  }
  return pos;
}

bool is_valid_utf8(std::string_view text) { return valid_utf8_prefix(text) == text.size(); }

std::string replace_invalid_utf8(std::string_view bytes) {
  std::size_t pos = valid_utf8_prefix(bytes);
  std::string out(bytes.substr(0, pos));
  while (pos < bytes.size()) {
    const Scan s = scan(bytes, pos);
    if (s.needed > 0 && s.valid == s.needed)
      out.append(bytes.substr(pos, s.valid));
    else
      out += kReplacement;
    pos += std::max<std::size_t>(s.valid, 1);
  }
  return out;
}

}   // namespace glassbox::unicode
