// Filters (jinja2/filters.py), tests (jinja2/tests.py) and the Python methods templates call, each
// with the meaning it has under transformers' apply_chat_template.
#include "chat/jinja_builtins.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>

#include "chat/jinja_strings.h"

namespace glassbox::jinja {
namespace {

using Filter = Value (*)(const Value&, const CallArgs&);
using Test = bool (*)(const Value&, const CallArgs&);

// The argument at a position, or given by keyword.
std::optional<Value> arg(const CallArgs& args, size_t index, const char* name) {
  if (index < args.positional.size()) return args.positional[index];
  for (const auto& [key, value] : args.keyword)
    if (key == name) return value;
  return std::nullopt;
}

std::optional<std::string> string_arg(const CallArgs& args, size_t index, const char* name) {
  const auto v = arg(args, index, name);
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) throw std::invalid_argument(std::string("the argument ") + name + " must be a string");
  return v->as_string();
}

int64_t int_arg(const CallArgs& args, size_t index, const char* name, int64_t fallback) {
  const auto v = arg(args, index, name);
  if (!v || v->is_none()) return fallback;
  if (v->kind() != Value::Kind::Int && v->kind() != Value::Kind::Bool)
    throw std::invalid_argument(std::string("the argument ") + name + " must be an integer");
  return v->as_int();
}

void require_defined(const Value& v) {
  if (v.is_undefined()) throw std::invalid_argument(v.undefined_reason());
}

Value string_list(const std::vector<std::string>& parts) {
  List items;
  for (const auto& p : parts) items.push_back(Value::string(p));
  return Value::list(std::move(items));
}

// For map/select/selectattr: the rest of the arguments after the first `skip` positional ones.
CallArgs rest(const CallArgs& args, size_t skip) {
  CallArgs out;
  for (size_t i = skip; i < args.positional.size(); ++i) out.positional.push_back(args.positional[i]);
  return out;
}

Value f_trim(const Value& v, const CallArgs& a) {
  return Value::string(python_strip(v.str(), string_arg(a, 0, "chars"), true, true));
}
Value f_tojson(const Value& v, const CallArgs& a) {
  const auto ascii = arg(a, 0, "ensure_ascii");
  if (ascii && ascii->truthy()) throw std::invalid_argument("tojson(ensure_ascii=true) is not supported");
  const auto sort = arg(a, 3, "sort_keys");
  if (sort && sort->truthy()) throw std::invalid_argument("tojson(sort_keys=true) is not supported");
  require_defined(v);
  // indent: None is one line; a negative one indents by nothing, as json.dumps does.
  const int64_t indent = int_arg(a, 1, "indent", INT64_MIN);
  if (indent > 64) throw std::invalid_argument("tojson's indent is at most 64 here");
  return Value::string(to_json(v, indent == INT64_MIN ? -1 : static_cast<int>(std::max<int64_t>(indent, 0))));
}
Value f_length(const Value& v, const CallArgs&) {
  const int64_t n = python_len(v);
  if (n < 0) throw std::invalid_argument("object of type '" + v.type_name() + "' has no len()");
  return Value::integer(n);
}
Value f_upper(const Value& v, const CallArgs&) { return Value::string(ascii_upper(v.str())); }
Value f_lower(const Value& v, const CallArgs&) { return Value::string(ascii_lower(v.str())); }
Value f_capitalize(const Value& v, const CallArgs&) { return Value::string(python_capitalize(v.str())); }
Value f_title(const Value& v, const CallArgs&) { return Value::string(python_title(v.str())); }
Value f_replace(const Value& v, const CallArgs& a) {
  const auto from = string_arg(a, 0, "old"), to = string_arg(a, 1, "new");
  if (!from || !to) throw std::invalid_argument("replace needs the old and the new text");
  return Value::string(python_replace(v.str(), *from, *to, int_arg(a, 2, "count", -1)));
}
Value f_join(const Value& v, const CallArgs& a) {
  const std::string sep = string_arg(a, 0, "d").value_or("");
  const auto attribute = string_arg(a, 1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) out += sep;
    first = false;
    out += (attribute ? get_attribute(item, *attribute) : item).str();
    if (out.size() > kMaxStringBytes) throw std::invalid_argument("the joined string would be too long");
  }
  return Value::string(out);
}
Value f_default(const Value& v, const CallArgs& a) {
  const auto boolean = arg(a, 1, "boolean");
  if (v.is_undefined() || (boolean && boolean->truthy() && !v.truthy()))
    return arg(a, 0, "default_value").value_or(Value::string(""));
  return v;
}
Value f_first(const Value& v, const CallArgs&) {
  const List items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}
Value f_last(const Value& v, const CallArgs&) {
  const List items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}
Value f_list(const Value& v, const CallArgs&) { return Value::list(iterate(v)); }
Value f_string(const Value& v, const CallArgs&) { return Value::string(v.str()); }
Value f_int(const Value& v, const CallArgs& a) {
  const int64_t fallback = int_arg(a, 0, "default", 0);
  if (v.kind() == Value::Kind::Int || v.kind() == Value::Kind::Bool) return Value::integer(v.as_int());
  if (v.kind() == Value::Kind::Float) {
    const double d = v.as_double();
    if (!(d > -9.2e18 && d < 9.2e18))
      throw std::invalid_argument("the float " + v.repr() + " does not fit in a 64-bit int");
    return Value::integer(static_cast<int64_t>(d));
  }
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = python_strip(v.as_string(), std::nullopt, true, true);
      const int64_t i = std::stoll(s, &used);
      if (used == s.size()) return Value::integer(i);
    } catch (const std::exception&) {
    }
  }
  return Value::integer(fallback);
}
Value f_float(const Value& v, const CallArgs&) {
  if (v.is_number()) return Value::number(v.as_double());
  if (v.is_string()) {
    try {
      size_t used = 0;
      const std::string s = python_strip(v.as_string(), std::nullopt, true, true);
      const double d = std::stod(s, &used);
      if (used == s.size()) return Value::number(d);
    } catch (const std::exception&) {
    }
  }
  return Value::number(0.0);
}
Value f_abs(const Value& v, const CallArgs&) {
  if (v.kind() == Value::Kind::Float) return Value::number(std::fabs(v.as_double()));
  if (v.is_number()) {
    if (v.as_int() == INT64_MIN) throw std::invalid_argument("integer overflow: the result does not fit in 64 bits");
    return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  throw std::invalid_argument("bad operand type for abs(): '" + v.type_name() + "'");
}
Value f_reverse(const Value& v, const CallArgs&) {
  if (v.is_string()) {
    std::u32string s = utf8_decode(v.as_string());
    std::reverse(s.begin(), s.end());
    return Value::string(utf8_encode(s));
  }
  List items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value::list(std::move(items));
}
Value f_items(const Value& v, const CallArgs&) {
  if (v.is_undefined()) return Value::list({});
  if (!v.is_mapping()) throw std::invalid_argument("can only get item pairs from a mapping");
  List pairs;
  for (const auto& [k, value] : v.as_dict()) pairs.push_back(Value::tuple({Value::string(k), value}));
  return Value::list(std::move(pairs));
}
Value f_map(const Value& v, const CallArgs& a) {
  List out;
  const auto attribute = string_arg(CallArgs{{}, a.keyword}, 99, "attribute");
  if (attribute) {
    const auto fallback = arg(CallArgs{{}, a.keyword}, 99, "default");
    for (const Value& item : iterate(v)) {
      Value x = get_attribute(item, *attribute);
      out.push_back(x.is_undefined() && fallback ? *fallback : x);
    }
    return Value::list(std::move(out));
  }
  if (a.positional.empty() || !a.positional[0].is_string())
    throw std::invalid_argument("map needs a filter name or attribute=");
  const std::string name = a.positional[0].as_string();
  if (!has_filter(name)) throw std::invalid_argument("no filter named '" + name + "'");
  for (const Value& item : iterate(v)) out.push_back(apply_filter(name, item, rest(a, 1)));
  return Value::list(std::move(out));
}
// select/reject/selectattr/rejectattr: keep the items whose (attribute's) test is `keep`.
Value select(const Value& v, const CallArgs& a, bool by_attribute, bool keep) {
  size_t next = 0;
  std::string attribute;
  if (by_attribute) {
    if (a.positional.empty() || !a.positional[0].is_string())
      throw std::invalid_argument("selectattr needs an attribute name");
    attribute = a.positional[next++].as_string();
  }
  std::optional<std::string> test;
  if (next < a.positional.size()) {
    if (!a.positional[next].is_string()) throw std::invalid_argument("the test name must be a string");
    test = a.positional[next++].as_string();
    if (!has_test(*test)) throw std::invalid_argument("no test named '" + *test + "'");
  }
  const CallArgs test_args = rest(a, next);
  List out;
  for (const Value& item : iterate(v)) {
    const Value x = by_attribute ? get_attribute(item, attribute) : item;
    const bool pass = test ? apply_test(*test, x, test_args) : x.truthy();
    if (pass == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}
Value f_select(const Value& v, const CallArgs& a) { return select(v, a, false, true); }
Value f_reject(const Value& v, const CallArgs& a) { return select(v, a, false, false); }
Value f_selectattr(const Value& v, const CallArgs& a) { return select(v, a, true, true); }
Value f_rejectattr(const Value& v, const CallArgs& a) { return select(v, a, true, false); }
Value f_safe(const Value& v, const CallArgs&) { return v; }

const std::map<std::string, Filter>& filters() {
  static const std::map<std::string, Filter> table = {{"trim", f_trim},
                                                      {"tojson", f_tojson},
                                                      {"length", f_length},
                                                      {"count", f_length},
                                                      {"upper", f_upper},
                                                      {"lower", f_lower},
                                                      {"capitalize", f_capitalize},
                                                      {"title", f_title},
                                                      {"replace", f_replace},
                                                      {"join", f_join},
                                                      {"default", f_default},
                                                      {"d", f_default},
                                                      {"first", f_first},
                                                      {"last", f_last},
                                                      {"list", f_list},
                                                      {"string", f_string},
                                                      {"int", f_int},
                                                      {"float", f_float},
                                                      {"abs", f_abs},
                                                      {"reverse", f_reverse},
                                                      {"items", f_items},
                                                      {"map", f_map},
                                                      {"select", f_select},
                                                      {"reject", f_reject},
                                                      {"selectattr", f_selectattr},
                                                      {"rejectattr", f_rejectattr},
                                                      {"safe", f_safe}};
  return table;
}

bool compare_less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  throw std::invalid_argument("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() +
                              "'");
}
const Value& first_arg(const CallArgs& a) {
  if (a.positional.empty()) throw std::invalid_argument("the test needs an argument");
  return a.positional[0];
}

bool t_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool t_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool t_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool t_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool t_mapping(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Dict; }
bool t_iterable(const Value& v, const CallArgs&) {
  return v.is_undefined() || v.is_string() || v.kind() == Value::Kind::List || v.kind() == Value::Kind::Dict;
}
bool t_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool t_integer(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Int; }
bool t_float(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Float; }
bool t_boolean(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Bool; }
bool t_true(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Bool && v.as_bool(); }
bool t_false(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Bool && !v.as_bool(); }
bool t_odd(const Value& v, const CallArgs&) { return v.as_int() % 2 != 0; }
bool t_even(const Value& v, const CallArgs&) { return v.as_int() % 2 == 0; }
bool t_divisibleby(const Value& v, const CallArgs& a) {
  const int64_t d = first_arg(a).as_int();
  if (d == 0) throw std::invalid_argument("integer division or modulo by zero");
  return v.as_int() % d == 0;
}
bool t_eq(const Value& v, const CallArgs& a) { return v.equals(first_arg(a)); }
bool t_ne(const Value& v, const CallArgs& a) { return !v.equals(first_arg(a)); }
bool t_lt(const Value& v, const CallArgs& a) { return compare_less(v, first_arg(a)); }
bool t_gt(const Value& v, const CallArgs& a) { return compare_less(first_arg(a), v); }
bool t_le(const Value& v, const CallArgs& a) { return !compare_less(first_arg(a), v); }
bool t_ge(const Value& v, const CallArgs& a) { return !compare_less(v, first_arg(a)); }
bool t_lower(const Value& v, const CallArgs&) { return ascii_lower(v.str()) == v.str(); }
bool t_upper(const Value& v, const CallArgs&) { return ascii_upper(v.str()) == v.str(); }
bool t_callable(const Value& v, const CallArgs&) { return v.kind() == Value::Kind::Function; }
bool t_sameas(const Value& v, const CallArgs& a) {
  const Value& o = first_arg(a);
  return v.kind() == o.kind() && v.equals(o);
}
bool t_in(const Value& v, const CallArgs& a) {
  const Value& container = first_arg(a);
  if (container.is_string()) return container.as_string().find(v.str()) != std::string::npos;
  for (const Value& item : iterate(container))
    if (item.equals(v)) return true;
  return false;
}

const std::map<std::string, Test>& tests() {
  static const std::map<std::string, Test> table = {{"defined", t_defined},
                                                    {"undefined", t_undefined},
                                                    {"none", t_none},
                                                    {"string", t_string},
                                                    {"mapping", t_mapping},
                                                    {"iterable", t_iterable},
                                                    {"sequence", t_iterable},
                                                    {"number", t_number},
                                                    {"integer", t_integer},
                                                    {"float", t_float},
                                                    {"boolean", t_boolean},
                                                    {"true", t_true},
                                                    {"false", t_false},
                                                    {"odd", t_odd},
                                                    {"even", t_even},
                                                    {"divisibleby", t_divisibleby},
                                                    {"equalto", t_eq},
                                                    {"eq", t_eq},
                                                    {"==", t_eq},
                                                    {"ne", t_ne},
                                                    {"!=", t_ne},
                                                    {"lt", t_lt},
                                                    {"lessthan", t_lt},
                                                    {"<", t_lt},
                                                    {"gt", t_gt},
                                                    {"greaterthan", t_gt},
                                                    {">", t_gt},
                                                    {"le", t_le},
                                                    {"<=", t_le},
                                                    {"ge", t_ge},
                                                    {">=", t_ge},
                                                    {"lower", t_lower},
                                                    {"upper", t_upper},
                                                    {"callable", t_callable},
                                                    {"sameas", t_sameas},
                                                    {"in", t_in}};
  return table;
}

// "abc".startswith(x): x a string or a list of strings.
bool affix(const std::string& s, const Value& x, bool prefix) {
  const auto one = [&](const Value& v) {
    if (!v.is_string()) throw std::invalid_argument("startswith/endswith take a string or a tuple of strings");
    const std::string& a = v.as_string();
    return a.size() <= s.size() &&
           (prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0);
  };
  if (x.kind() == Value::Kind::List) {
    for (const Value& v : x.as_list())
      if (one(v)) return true;
    return false;
  }
  return one(x);
}

Value string_method(const std::string& s, const std::string& name, const CallArgs& a, bool* found) {
  *found = true;
  if (name == "startswith" || name == "endswith") {
    const auto x = arg(a, 0, "prefix");
    if (!x) throw std::invalid_argument(name + " needs an argument");
    return Value::boolean(affix(s, *x, name == "startswith"));
  }
  if (name == "strip") return Value::string(python_strip(s, string_arg(a, 0, "chars"), true, true));
  if (name == "lstrip") return Value::string(python_strip(s, string_arg(a, 0, "chars"), true, false));
  if (name == "rstrip") return Value::string(python_strip(s, string_arg(a, 0, "chars"), false, true));
  if (name == "split") return string_list(python_split(s, string_arg(a, 0, "sep"), int_arg(a, 1, "maxsplit", -1)));
  if (name == "upper") return Value::string(ascii_upper(s));
  if (name == "lower") return Value::string(ascii_lower(s));
  if (name == "title") return Value::string(python_title(s));
  if (name == "capitalize") return Value::string(python_capitalize(s));
  if (name == "replace") {
    const auto from = string_arg(a, 0, "old"), to = string_arg(a, 1, "new");
    if (!from || !to) throw std::invalid_argument("replace needs the old and the new text");
    return Value::string(python_replace(s, *from, *to, int_arg(a, 2, "count", -1)));
  }
  if (name == "find") {
    const auto sub = string_arg(a, 0, "sub");
    if (!sub) throw std::invalid_argument("find needs a string");
    const size_t at = s.find(*sub);
    return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(utf8_decode(s.substr(0, at)).size()));
  }
  if (name == "join") {
    const auto items = arg(a, 0, "iterable");
    if (!items) throw std::invalid_argument("join needs an iterable");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(*items)) {
      if (!item.is_string())
        throw std::invalid_argument("sequence item: expected str instance, " + item.type_name() + " found");
      out += (first ? "" : s) + item.as_string();
      first = false;
      if (out.size() > kMaxStringBytes) throw std::invalid_argument("the joined string would be too long");
    }
    return Value::string(out);
  }
  *found = false;
  return Value();
}

}   // namespace

bool has_filter(const std::string& name) { return filters().count(name) != 0; }
bool has_test(const std::string& name) { return tests().count(name) != 0; }

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args) {
  return filters().at(name)(input, args);
}

bool apply_test(const std::string& name, const Value& input, const CallArgs& args) {
  return tests().at(name)(input, args);
}

Value call_method(const Value& obj, const std::string& name, const CallArgs& a, bool* found) {
  if (obj.is_string()) return string_method(obj.as_string(), name, a, found);
  *found = true;
  if (obj.kind() == Value::Kind::Dict) {
    if (name == "items") return f_items(obj, a);
    if (name == "keys" || name == "values") {
      List out;
      for (const auto& [k, v] : obj.as_dict()) out.push_back(name == "keys" ? Value::string(k) : v);
      return Value::list(std::move(out));
    }
    if (name == "get") {
      const auto key = arg(a, 0, "key");
      if (!key) throw std::invalid_argument("get needs a key");
      const Value* v = key->is_string() ? obj.find(key->as_string()) : nullptr;
      return v ? *v : arg(a, 1, "default").value_or(Value::none());
    }
  }
  *found = false;
  return Value();
}

Value get_attribute(const Value& obj, const std::string& name) {
  size_t dot = name.find('.');
  if (dot != std::string::npos) return get_attribute(get_attribute(obj, name.substr(0, dot)), name.substr(dot + 1));
  if (obj.is_undefined()) throw std::invalid_argument(obj.undefined_reason());
  if (const Value* v = obj.find(name)) return *v;
  std::string why = "'";
  why.append(obj.type_name()).append(" object' has no attribute '").append(name).append("'");
  return Value::undefined(why);
}

int64_t python_len(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return 0;
    case Value::Kind::String:
      return static_cast<int64_t>(utf8_decode(v.as_string()).size());
    case Value::Kind::List:
      return static_cast<int64_t>(v.as_list().size());
    case Value::Kind::Dict:
      return static_cast<int64_t>(v.as_dict().size());
    default:
      return -1;
  }
}

List iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined:
      return {};
    case Value::Kind::List:
      return v.as_list();
    case Value::Kind::Dict: {
      List keys;
      for (const auto& [k, value] : v.as_dict()) keys.push_back(Value::string(k));
      return keys;
    }
    case Value::Kind::String: {
      List chars;
      for (char32_t c : utf8_decode(v.as_string())) chars.push_back(Value::string(utf8_encode(std::u32string(1, c))));
      return chars;
    }
    default:
      throw std::invalid_argument("'" + v.type_name() + "' object is not iterable");
  }
}

}   // namespace glassbox::jinja
