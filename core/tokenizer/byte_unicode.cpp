#include "tokenizer/byte_unicode.h"

#include <array>

#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

constexpr bool printable(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<char32_t, 256> make_table() {
  std::array<char32_t, 256> t{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) t[b] = printable(b) ? static_cast<char32_t>(b) : next++;
  return t;
}
constexpr std::array<char32_t, 256> kByteToUnicode = make_table();

// Inverse over U+0000..U+0143 (the table's range): byte + 1, or 0 for "not in the table".
constexpr std::array<std::uint16_t, 324> make_inverse() {
  std::array<std::uint16_t, 324> inv{};
  for (int b = 0; b < 256; ++b) inv[kByteToUnicode[b]] = static_cast<std::uint16_t>(b + 1);
  return inv;
}
constexpr std::array<std::uint16_t, 324> kUnicodeToByte = make_inverse();

}   // namespace

char32_t byte_to_unicode(std::uint8_t byte) { return kByteToUnicode[byte]; }

std::string bytes_to_unicode(std::string_view bytes) {
  std::string out;
  for (unsigned char b : bytes) unicode::append_utf8(out, kByteToUnicode[b]);
  return out;
}

bool unicode_to_bytes(std::string_view text, std::string& out) {
  for (std::size_t pos = 0; pos < text.size();) {
    const auto c = unicode::decode_utf8(text, pos);
    if (c.length == 0 || c.cp >= kUnicodeToByte.size() || kUnicodeToByte[c.cp] == 0) return false;
    out += static_cast<char>(kUnicodeToByte[c.cp] - 1);
    pos += static_cast<std::size_t>(c.length);
  }
  return true;
}

}   // namespace glassbox
