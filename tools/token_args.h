// Token arguments of the command line: ids as "464,2068", one token as TOK (its text, or #id),
// and generate's --steer L:C:A/B.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

// "1,2,3" -> {1, 2, 3}; `option` names the option in the message ("--tokens").
std::vector<std::int32_t> parse_ids(const std::string& text, const std::string& option = "--tokens");

// TOK: "#" and digits, an id (any id, also the first of a text that is several tokens); or a
// token's text, as the tokenizer encodes it (" Mary"), which must be exactly one token. `option`
// names the option ("--answer"). `tokenizer` is read only for text; without one, text is an error.
std::int32_t parse_token(const std::string& tok, const std::string& option,
                         const std::optional<glassbox::Tokenizer>& tokenizer, bool allow_special);
// Whether TOK is an id (then no tokenizer is needed).
bool is_token_id(const std::string& tok);

// --steer L:C:A/B: split at the first two ':' and then at the first '/'; A and B verbatim.
struct SteerArg {
  int layer;
  float coefficient;
  std::string plus, minus;
};
SteerArg parse_steer(const std::string& text);
