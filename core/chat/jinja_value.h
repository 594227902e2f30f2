// The values a chat template computes with: Python's objects as Jinja2 sees them.
//
// Undefined, None, bool, int, float, str, list, dict (string keys, insertion order), a callable (a
// global such as raise_exception, or a bound method), and a namespace (the one mutable object a
// template can make). Lists and dicts are shared and never changed after they are built, as in
// transformers' ImmutableSandboxedEnvironment; a namespace is shared and changed by `set ns.x`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace glassbox::jinja {

class Value;
using List = std::vector<Value>;
using Dict = std::vector<std::pair<std::string, Value>>;   // insertion order, as Python's dict

// Arguments of a call: positional, then keyword.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};
using Function = std::function<Value(const CallArgs&)>;

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function, Namespace };

  Value() = default;   // Undefined
  static Value undefined(std::string why) {
    Value v;
    v.text_ = std::move(why);
    return v;
  }
  static Value none() { return Value(Kind::None); }
  static Value boolean(bool b) {
    Value v(Kind::Bool);
    v.int_ = b;
    return v;
  }
  static Value integer(int64_t i) {
    Value v(Kind::Int);
    v.int_ = i;
    return v;
  }
  static Value number(double d) {
    Value v(Kind::Float);
    v.float_ = d;
    return v;
  }
  static Value string(std::string s) {
    Value v(Kind::String);
    v.text_ = std::move(s);
    return v;
  }
  static Value list(List items) {
    Value v(Kind::List);
    v.list_ = std::make_shared<const List>(std::move(items));
    return v;
  }
  // A Python tuple: a list that prints as (a, b).
  static Value tuple(List items) {
    Value v = list(std::move(items));
    v.int_ = 1;
    return v;
  }
  static Value dict(Dict items) {
    Value v(Kind::Dict);
    v.dict_ = std::make_shared<Dict>(std::move(items));
    return v;
  }
  static Value namespace_(Dict items) {
    Value v = dict(std::move(items));
    v.kind_ = Kind::Namespace;
    return v;
  }
  static Value function(std::string name, Function f) {
    Value v(Kind::Function);
    v.text_ = std::move(name);
    v.function_ = std::make_shared<const Function>(std::move(f));
    return v;
  }
  // From JSON (messages, extra variables): objects keep their key order. Throws
  // std::invalid_argument past 64 levels of nesting (printing a value recurses through it).
  static Value from_json(const nlohmann::ordered_json& j, int depth = 0);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_number() const { return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool; }
  bool is_mapping() const { return kind_ == Kind::Dict || kind_ == Kind::Namespace; }

  bool is_tuple() const { return kind_ == Kind::List && int_ == 1; }
  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  double as_double() const { return kind_ == Kind::Float ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return text_; }
  const List& as_list() const { return *list_; }
  const Dict& as_dict() const { return *dict_; }
  Dict& namespace_items() const { return *dict_; }   // a namespace's attributes, changed by `set ns.x`
  const Function& as_function() const { return *function_; }
  const std::string& function_name() const { return text_; }
  // Why a value is undefined ("'x' is undefined"), for the error raised when it is used.
  const std::string& undefined_reason() const { return text_; }

  // A dict's entry, or nullptr.
  const Value* find(const std::string& key) const;

  // Python's bool(x).
  bool truthy() const;
  // Python's str(x), which {{ x }} prints; repr(x), which str() of a list uses for its items.
  std::string str() const;
  std::string repr() const;
  // Python's ==.
  bool equals(const Value& other) const;
  // The Jinja2 name of the type in messages ("dict object", "str object").
  std::string type_name() const;

 private:
  explicit Value(Kind kind) : kind_(kind) {}

  Kind kind_ = Kind::Undefined;
  int64_t int_ = 0;
  double float_ = 0;
  std::string text_;
  std::shared_ptr<const List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Function> function_;
};

// Python's repr of a float (shortest digits that read back, "1.0", "1e+16").
std::string python_float(double d);

// transformers' tojson filter: json.dumps(x, ensure_ascii=False, indent=indent, sort_keys=False),
// which escapes no non-ASCII character and separates with ", " and ": " (",", ": " when indented).
// Throws std::invalid_argument naming the value that JSON cannot hold.
std::string to_json(const Value& v, int indent = -1);

}   // namespace glassbox::jinja
