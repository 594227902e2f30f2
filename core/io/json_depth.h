// A guard for JSON from untrusted files, shared by the readers of safetensors headers and shard
// indexes.
#pragma once

#include <string_view>

namespace glassbox {

// Whether `text` nests objects and arrays deeper than `levels` (brackets inside strings are not
// counted). Checked on the raw text before parsing, so that "[[[[...]]]]" cannot make the parser
// build millions of nested values.
bool json_nests_deeper(std::string_view text, int levels);

}   // namespace glassbox
