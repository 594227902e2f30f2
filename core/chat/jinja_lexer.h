// The lexer of chat templates: template text -> tokens, with Jinja2's whitespace control applied.
//
// Text between tags becomes Text tokens already trimmed as transformers' environment trims them:
// `{%-`/`-%}` (and the same on `{{ }}` and `{# #}`) strip all whitespace on that side;
// trim_blocks drops the one newline after a block or comment tag; lstrip_blocks drops the spaces
// and tabs between the start of a line and a block or comment tag (`{%+` keeps them); one
// trailing newline of the template is dropped (keep_trailing_newline=False). Comments vanish.
#pragma once

#include <string>
#include <vector>

namespace glassbox::jinja {

struct Token {
  enum class Type {
    Text,
    VariableBegin,
    VariableEnd,
    BlockBegin,
    BlockEnd,
    Name,
    String,
    Integer,
    Float,
    Operator,
    End
  };
  Type type;
  std::string text;   // the data, name, operator, or the decoded string literal
  int line = 1;
  int column = 1;
};

std::vector<Token> tokenize(const std::string& source);

}   // namespace glassbox::jinja
