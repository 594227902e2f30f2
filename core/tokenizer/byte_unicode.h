// GPT-2's byte <-> printable character table (bytes_to_unicode in OpenAI's encoder.py).
// vocab.json and merges.txt write each byte of a token as one character: the printable
// Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') as themselves, the other 68 bytes as U+0100 onwards
// in byte order, so that no token string contains spaces or control characters.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace glassbox {

char32_t byte_to_unicode(std::uint8_t byte);
// The printable form of raw bytes, as UTF-8 (e.g. " the" -> "Ġthe").
std::string bytes_to_unicode(std::string_view bytes);
// The inverse: appends the raw bytes to `out`; false if `text` is not UTF-8 made of table characters.
bool unicode_to_bytes(std::string_view text, std::string& out);

}   // namespace glassbox
