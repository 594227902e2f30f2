#include "glassbox/quoted.h"

#include <cstdio>

#include "tokenizer/unicode.h"

namespace glassbox {

std::string quote_text(std::string_view text, std::size_t max_bytes) {
  std::string out = "\"";
  std::size_t pos = 0;
  char hex[8];
  while (pos < text.size()) {
    const int n = unicode::decode_utf8(text, pos).length;
    if (pos + static_cast<std::size_t>(n > 0 ? n : 1) > max_bytes) break;
    const auto c = static_cast<unsigned char>(text[pos]);
    if (n == 0) {   // not UTF-8: the byte's value
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(hex, sizeof hex, "\\u%04X", c);
      out += hex;
    } else {
      out.append(text.substr(pos, static_cast<std::size_t>(n)));
    }
    pos += static_cast<std::size_t>(n > 0 ? n : 1);
  }
  out += '"';
  if (pos < text.size()) out.insert(out.size() - 1, "...").append(" (" + std::to_string(text.size()) + " bytes)");
  return out;
}

}   // namespace glassbox
