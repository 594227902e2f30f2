// Text from a file or an argument, as an error message quotes it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace glassbox {

// `text` in double quotes, safe to put in a one-line message whatever it holds: at most
// max_bytes of it (cut at a whole character, then `..." (N bytes)`, so a 5 MB line is not echoed
// whole); quotes, backslashes and control characters escaped as JSON escapes them (NUL as \u0000:
// a C string would end there); bytes that are not UTF-8 as \xFF. Valid UTF-8 (non-ASCII letters
// included) is kept as it is, so the message stays valid UTF-8.
std::string quote_text(std::string_view text, std::size_t max_bytes = 80);

}   // namespace glassbox
