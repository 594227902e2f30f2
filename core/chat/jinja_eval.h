// The evaluator of chat templates: runs the statements of a parsed template over variables and
// returns the text. Scopes follow Jinja2's: a `set` inside a for loop lasts for that iteration
// (a namespace carries values out), a `set` elsewhere lasts to the end of the template.
#pragma once

#include <cstdint>
#include <string>

#include "chat/jinja_ast.h"

namespace glassbox::jinja {

// Throws TemplateError (chat/chat_error.h) naming the line and column of the failing expression,
// also when more than max_steps statements, expressions and loop rounds are evaluated.
std::string render(const Body& body, const Dict& variables, uint64_t max_steps);

}   // namespace glassbox::jinja
