// Jinja2's filters and tests, and Python's str/dict/list methods, as far as chat templates use them.
// Filters follow jinja2/filters.py except tojson, which is transformers' (jinja_value.h).
#pragma once

#include <string>

#include "chat/jinja_value.h"

namespace glassbox::jinja {

bool has_filter(const std::string& name);
bool has_test(const std::string& name);

// Each throws std::invalid_argument with Jinja2's wording of the problem; the evaluator adds the
// place in the template.
Value apply_filter(const std::string& name, const Value& input, const CallArgs& args);
bool apply_test(const std::string& name, const Value& input, const CallArgs& args);
// obj.name(args): false in *found when obj has no such method.
Value call_method(const Value& obj, const std::string& name, const CallArgs& args, bool* found);

// Jinja2's environment.getattr for a name: a dict's entry, else undefined (dotted names walk).
Value get_attribute(const Value& obj, const std::string& name);

// Python's len() (code points of a str); -1 where there is none.
int64_t python_len(const Value& v);
// The items `for x in v` visits: a list's items, a dict's keys, a str's characters.
List iterate(const Value& v);

}   // namespace glassbox::jinja
