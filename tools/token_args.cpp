#include "token_args.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include "glassbox/error.h"
#include "glassbox/quoted.h"

using namespace glassbox;

std::vector<std::int32_t> parse_ids(const std::string& text, const std::string& option) {
  std::vector<std::int32_t> ids;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    std::int32_t id = 0;
    auto [next, ec] = std::from_chars(p, end, id);
    if (ec != std::errc() || (next < end && (*next != ',' || next + 1 == end)))
      throw InvalidArgument(option + " must be comma-separated integers like 464,2068, got " + quote_text(text));
    ids.push_back(id);
    p = next < end ? next + 1 : next;
  }
  return ids;
}

bool is_token_id(const std::string& tok) {
  return tok.size() > 1 && tok[0] == '#' && tok.find_first_not_of("0123456789", 1) == std::string::npos;
}

std::int32_t parse_token(const std::string& tok, const std::string& option, const std::optional<Tokenizer>& tokenizer,
                         bool allow_special) {
  if (is_token_id(tok)) {
    std::int32_t id = 0;
    const auto [end, ec] = std::from_chars(tok.data() + 1, tok.data() + tok.size(), id);
    if (ec != std::errc() || end != tok.data() + tok.size())
      throw InvalidArgument(option + " " + quote_text(tok) + " is not a token id");
    return id;
  }
  if (tok.empty()) throw InvalidArgument(option + " is empty: give a token's text, like \" Mary\", or an id as #5335");
  if (!tokenizer)
    throw InvalidArgument(option + " " + quote_text(tok) +
                          " is text, and the model directory has no tokenizer: give an id as #5335");
  const std::vector<std::int32_t> ids = tokenizer->encode(tok, allow_special);
  if (ids.size() == 1) return ids[0];
  std::string pieces;
  for (std::size_t i = 0; i < ids.size() && i < 8; ++i)
    pieces +=
        (i ? ", #" : "#") + std::to_string(ids[i]) + " " + quote_text(tokenizer->decode(std::span(ids).subspan(i, 1)));
  if (ids.size() > 8) pieces += ", ...";
  throw InvalidArgument(option + " " + quote_text(tok) + " is " + std::to_string(ids.size()) + " tokens (" + pieces +
                        "), not one: give one token's text, or an id as #" + std::to_string(ids[0]) +
                        " to use its first");
}

SteerArg parse_steer(const std::string& text) {
  const std::string usage = " (--steer LAYER:COEFFICIENT:PLUS/MINUS, e.g. 6:4:Love/Hate)";
  const std::size_t c1 = text.find(':');
  const std::size_t c2 = c1 == std::string::npos ? c1 : text.find(':', c1 + 1);
  const std::size_t slash = c2 == std::string::npos ? c2 : text.find('/', c2 + 1);
  if (slash == std::string::npos)
    throw InvalidArgument("--steer " + quote_text(text) + " is not LAYER:COEFFICIENT:PLUS/MINUS" + usage);
  SteerArg s;
  const std::string_view layer(text.data(), c1), coefficient(text.data() + c1 + 1, c2 - c1 - 1);
  auto [lend, lec] = std::from_chars(layer.data(), layer.data() + layer.size(), s.layer);
  if (layer.empty() || lec != std::errc() || lend != layer.data() + layer.size())
    throw InvalidArgument("--steer: the layer " + quote_text(std::string(layer)) + " is not a whole number" + usage);
  // strtof: from_chars for floats is not in every standard library this builds with
  const std::string number(coefficient);
  char* cend = nullptr;
  s.coefficient = number.empty() ? NAN : std::strtof(number.c_str(), &cend);
  if (number.empty() || cend != number.c_str() + number.size() || !std::isfinite(s.coefficient))
    throw InvalidArgument("--steer: the coefficient " + quote_text(number) + " is not a finite number" + usage);
  s.plus = text.substr(c2 + 1, slash - c2 - 1);
  s.minus = text.substr(slash + 1);
  if (s.plus.empty() || s.minus.empty())
    throw InvalidArgument("--steer: both prompts must have text (" + quote_text(s.plus) + " and " +
                          quote_text(s.minus) + ")" + usage);
  return s;
}
