// The parser of chat templates: tokens -> statements (jinja_ast.h), following Jinja2's grammar and
// operator precedence (jinja2/parser.py). Unknown filters and tests are syntax errors, as Jinja2
// reports them when it compiles a template.
#pragma once

#include <string>

#include "chat/jinja_ast.h"

namespace glassbox::jinja {

Body parse(const std::string& source);

}   // namespace glassbox::jinja
