// A tree-walking evaluator with Python's operators on jinja_value.h's values.
#include "chat/jinja_eval.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <unordered_map>

#include "chat/chat_error.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_strings.h"

namespace glassbox::jinja {
namespace {

enum class Flow { Normal, Break, Continue };

// Bounds on what one render may do, so that a hostile template ends with an error instead of
// running for hours or taking all memory: no real chat template comes near.
constexpr uint64_t kMaxText = kMaxStringBytes;   // bytes of one string and of the output
constexpr uint64_t kBytesPerStep = 64;           // a made string costs a step per 64 bytes

[[noreturn]] void type_error(const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) throw std::invalid_argument(a.undefined_reason());
  if (b.is_undefined()) throw std::invalid_argument(b.undefined_reason());
  throw std::invalid_argument("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                              b.type_name() + "'");
}

std::string join_text(const std::string& a, const std::string& b) {
  if (a.size() + b.size() > kMaxText)
    throw std::invalid_argument("the string would be longer than " + std::to_string(kMaxText) + " bytes");
  return a + b;
}

int64_t to_index(const Value& v, const char* what) {
  if (v.kind() != Value::Kind::Int && v.kind() != Value::Kind::Bool)
    throw std::invalid_argument(std::string(what) + " must be an integer, not '" + v.type_name() + "'");
  return v.as_int();
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value::string(join_text(a.as_string(), b.as_string()));
    if (a.kind() == Value::Kind::List && b.kind() == Value::Kind::List) {
      if (a.as_list().size() + b.as_list().size() > kMaxText / 16)
        throw std::invalid_argument("the list would be too long");
      List items = a.as_list();
      items.insert(items.end(), b.as_list().begin(), b.as_list().end());
      return Value::list(std::move(items));
    }
  }
  if (op == "*" &&
      ((a.is_string() && b.kind() == Value::Kind::Int) || (b.is_string() && a.kind() == Value::Kind::Int))) {
    const std::string& s = a.is_string() ? a.as_string() : b.as_string();
    const int64_t n = a.is_string() ? b.as_int() : a.as_int();
    if (n > 0 && s.size() > 0 && static_cast<uint64_t>(n) > kMaxText / s.size())
      throw std::invalid_argument("the repeated string would be longer than " + std::to_string(kMaxText) + " bytes");
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += s;
    return Value::string(out);
  }
  if (!a.is_number() || !b.is_number()) type_error(op, a, b);
  const bool floats = a.kind() == Value::Kind::Float || b.kind() == Value::Kind::Float;
  if (op == "/") {
    if (b.as_double() == 0) throw std::invalid_argument("division by zero");
    return Value::number(a.as_double() / b.as_double());
  }
  if (floats) {
    const double x = a.as_double(), y = b.as_double();
    if ((op == "//" || op == "%") && y == 0) throw std::invalid_argument("float division by zero");
    if (op == "+") return Value::number(x + y);
    if (op == "-") return Value::number(x - y);
    if (op == "*") return Value::number(x * y);
    if (op == "//") return Value::number(std::floor(x / y));
    if (op == "%") return Value::number(x - std::floor(x / y) * y);
    return Value::number(std::pow(x, y));
  }
  // Python's ints never overflow; 64-bit ones are refused where they would.
  const int64_t x = a.as_int(), y = b.as_int();
  int64_t r = 0;
  const auto overflow = [] { return std::invalid_argument("integer overflow: the result does not fit in 64 bits"); };
  if ((op == "//" || op == "%") && y == 0) throw std::invalid_argument("integer division or modulo by zero");
  if (op == "+" && !__builtin_add_overflow(x, y, &r)) return Value::integer(r);
  if (op == "-" && !__builtin_sub_overflow(x, y, &r)) return Value::integer(r);
  if (op == "*" && !__builtin_mul_overflow(x, y, &r)) return Value::integer(r);
  if (op == "//" || op == "%") {
    if (x == INT64_MIN && y == -1) throw overflow();
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;   // Python floors
    return op == "//" ? Value::integer(q) : Value::integer(x - q * y);
  }
  if (op == "**") {
    if (y < 0) return Value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
    int64_t base = x, result = 1;
    for (int64_t e = y; e > 0; e >>= 1) {   // by squaring: 63 rounds at most before it overflows
      if ((e & 1) && __builtin_mul_overflow(result, base, &result)) throw overflow();
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) throw overflow();
    }
    return Value::integer(result);
  }
  throw overflow();
}

bool less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) return a.as_double() < b.as_double();
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();   // UTF-8 order is code point order
  throw std::invalid_argument("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() +
                              "'");
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      throw std::invalid_argument("'in <string>' requires string as left operand, not " + item.type_name());
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_mapping()) return item.is_string() && container.find(item.as_string()) != nullptr;
  for (const Value& x : iterate(container))
    if (x.equals(item)) return true;
  return false;
}

class Evaluator {
 public:
  Evaluator(const Dict& variables, uint64_t max_steps) : max_steps_(max_steps) {
    scopes_.emplace_back();
    for (const auto& [k, v] : variables) scopes_.back()[k] = v;
  }

  std::string run(const Body& body) {
    exec(body);
    return std::move(out_);
  }

 private:
  Flow exec(const Body& body) {
    for (const StmtPtr& s : body) {
      const Flow flow = exec(*s);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  void step(int line, int column) {
    if (++steps_ > max_steps_)
      throw TemplateError(line, column,
                          "the template runs too long (more than " + std::to_string(max_steps_) + " steps)");
    if (out_.size() > kMaxText)
      throw TemplateError(line, column, "the output is longer than " + std::to_string(kMaxText) + " bytes");
  }

  Flow exec(const Stmt& s) {
    step(s.line, s.column);
    switch (s.kind) {
      case Stmt::Kind::Text:
        out_ += s.text;
        return Flow::Normal;
      case Stmt::Kind::Output:
        out_ += eval(*s.expr).str();
        return Flow::Normal;
      case Stmt::Kind::If:
        for (const auto& [condition, body] : s.branches)
          if (eval(*condition).truthy()) return exec(body);
        return exec(s.else_body);
      case Stmt::Kind::For:
        return loop(s);
      case Stmt::Kind::Set:
        if (!s.attribute.empty()) {
          set_attribute(s, eval(*s.expr));
        } else {
          assign(s, s.targets, eval(*s.expr));
        }
        return Flow::Normal;
      case Stmt::Kind::SetBlock: {
        std::string saved = std::move(out_);
        out_.clear();
        exec(s.body);
        std::string text = std::move(out_);
        out_ = std::move(saved);
        scopes_.back()[s.targets[0]] = Value::string(std::move(text));
        return Flow::Normal;
      }
      case Stmt::Kind::Break:
        return Flow::Break;
      case Stmt::Kind::Continue:
        return Flow::Continue;
      case Stmt::Kind::Generation:
        return exec(s.body);
    }
    return Flow::Normal;
  }

  void assign(const Stmt& s, const std::vector<std::string>& targets, const Value& value) {
    if (targets.size() == 1) {
      scopes_.back()[targets[0]] = value;
      return;
    }
    const List items = value.kind() == Value::Kind::List ? value.as_list() : List();
    if (value.kind() != Value::Kind::List || items.size() != targets.size())
      throw TemplateError(s.line, s.column,
                          "cannot unpack " + value.repr() + " into " + std::to_string(targets.size()) + " names");
    for (size_t i = 0; i < targets.size(); ++i) scopes_.back()[targets[i]] = items[i];
  }

  void set_attribute(const Stmt& s, const Value& value) {
    const Value target = lookup(s.targets[0]);
    if (target.kind() != Value::Kind::Namespace)
      throw TemplateError(s.line, s.column, "cannot assign attribute on non-namespace object '" + s.targets[0] + "'");
    Dict& items = target.namespace_items();
    for (auto& [k, v] : items)
      if (k == s.attribute) {
        v = value;
        return;
      }
    items.emplace_back(s.attribute, value);
  }

  Flow loop(const Stmt& s) {
    List items;
    try {
      items = iterate(eval(*s.expr));
    } catch (const std::invalid_argument& e) {
      throw TemplateError(s.expr->line, s.expr->column, e.what());
    }
    if (s.condition) {   // `for x in xs if cond` filters before loop.index and friends count
      List kept;
      for (const Value& item : items) {
        scopes_.emplace_back();
        assign(s, s.targets, item);
        const bool keep = eval(*s.condition).truthy();
        scopes_.pop_back();
        if (keep) kept.push_back(item);
      }
      items = std::move(kept);
    }
    if (items.empty()) return exec(s.else_body);
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      step(s.line, s.column);   // an empty body still costs a step per round
      scopes_.emplace_back();
      assign(s, s.targets, items[static_cast<size_t>(i)]);
      scopes_.back()["loop"] = Value::dict({
          {"index", Value::integer(i + 1)},
          {"index0", Value::integer(i)},
          {"revindex", Value::integer(n - i)},
          {"revindex0", Value::integer(n - i - 1)},
          {"first", Value::boolean(i == 0)},
          {"last", Value::boolean(i == n - 1)},
          {"length", Value::integer(n)},
          {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item")},
          {"nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item")},
      });
      const Flow flow = exec(s.body);
      scopes_.pop_back();
      if (flow == Flow::Break) break;
    }
    return Flow::Normal;
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      const auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return Value::undefined("'" + name + "' is undefined");
  }

  CallArgs arguments(const Expr& e, size_t first) {
    CallArgs args;
    for (size_t i = first; i < e.args.size(); ++i) args.positional.push_back(eval(*e.args[i]));
    for (const auto& [k, v] : e.keyword) args.keyword.emplace_back(k, eval(*v));
    return args;
  }

  Value eval(const Expr& e) {
    step(e.line, e.column);
    try {
      Value v = evaluate(e);
      // Strings a template makes (not those it reads) cost steps by their size, so that many
      // bounded strings cannot add up to all memory either.
      if (v.is_string() && (e.kind == Expr::Kind::Binary || e.kind == Expr::Kind::Filter || e.kind == Expr::Kind::Call))
        steps_ += v.as_string().size() / kBytesPerStep;
      return v;
    } catch (const std::invalid_argument& problem) {
      throw TemplateError(e.line, e.column, problem.what());
    }
  }

  Value evaluate(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::Literal:
        return e.value;
      case Expr::Kind::Name:
        return lookup(e.name);
      case Expr::Kind::Attribute:
        return get_attribute(eval(*e.args[0]), e.name);
      case Expr::Kind::Item:
        return item(eval(*e.args[0]), eval(*e.args[1]));
      case Expr::Kind::Slice:
        return slice(e);
      case Expr::Kind::Call:
        return call(e);
      case Expr::Kind::Filter: {
        const Value input = eval(*e.args[0]);
        return apply_filter(e.name, input, arguments(e, 1));
      }
      case Expr::Kind::Test: {
        const Value input = eval(*e.args[0]);
        return Value::boolean(apply_test(e.name, input, arguments(e, 1)) != e.negated);
      }
      case Expr::Kind::Unary: {
        const Value v = eval(*e.args[0]);
        if (e.name == "not") return Value::boolean(!v.truthy());
        if (!v.is_number()) type_error(e.name, Value::integer(0), v);
        if (e.name == "+") return v;
        if (v.kind() == Value::Kind::Float) return Value::number(-v.as_double());
        if (v.as_int() == INT64_MIN)
          throw std::invalid_argument("integer overflow: the result does not fit in 64 bits");
        return Value::integer(-v.as_int());
      }
      case Expr::Kind::Binary:
        return binary(e);
      case Expr::Kind::Conditional:
        if (eval(*e.args[1]).truthy()) return eval(*e.args[0]);
        return e.args[2] ? eval(*e.args[2]) : Value::undefined("the condition was false and there is no else");
      case Expr::Kind::List:
      case Expr::Kind::Tuple: {
        List items;
        for (const ExprPtr& a : e.args) items.push_back(eval(*a));
        return e.kind == Expr::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
      }
      case Expr::Kind::Dict: {
        Dict items;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          const Value key = eval(*e.args[i]);
          if (!key.is_string()) throw std::invalid_argument("dictionary keys must be strings");
          items.emplace_back(key.as_string(), eval(*e.args[i + 1]));
        }
        return Value::dict(std::move(items));
      }
    }
    return Value();
  }

  Value item(const Value& obj, const Value& key) {
    if (obj.is_undefined()) throw std::invalid_argument(obj.undefined_reason());
    if (key.is_string() && obj.is_mapping()) return get_attribute(obj, key.as_string());
    if ((obj.kind() == Value::Kind::List || obj.is_string()) && (key.kind() == Value::Kind::Int)) {
      const List chars = obj.is_string() ? iterate(obj) : List();
      const List& items = obj.is_string() ? chars : obj.as_list();
      int64_t i = key.as_int();
      if (i < 0) i += static_cast<int64_t>(items.size());
      if (i >= 0 && i < static_cast<int64_t>(items.size())) return items[static_cast<size_t>(i)];
    }
    return Value::undefined("'" + obj.type_name() + " object' has no element " + key.repr());
  }

  Value slice(const Expr& e) {
    const Value obj = eval(*e.args[0]);
    std::optional<int64_t> parts[3];
    for (int i = 0; i < 3; ++i) {
      if (!e.args[static_cast<size_t>(i) + 1]) continue;
      const Value v = eval(*e.args[static_cast<size_t>(i) + 1]);
      if (!v.is_none()) parts[i] = to_index(v, "slice indices");
    }
    if (obj.is_string()) {
      const std::u32string s = utf8_decode(obj.as_string());
      std::u32string out;
      for (int64_t i : slice_indices(static_cast<int64_t>(s.size()), parts[0], parts[1], parts[2]))
        out += s[static_cast<size_t>(i)];
      return Value::string(utf8_encode(out));
    }
    if (obj.kind() != Value::Kind::List) {
      if (obj.is_undefined()) throw std::invalid_argument(obj.undefined_reason());
      throw std::invalid_argument("'" + obj.type_name() + "' object is not subscriptable");
    }
    List out;
    for (int64_t i : slice_indices(static_cast<int64_t>(obj.as_list().size()), parts[0], parts[1], parts[2]))
      out.push_back(obj.as_list()[static_cast<size_t>(i)]);
    return Value::list(std::move(out));
  }

  Value call(const Expr& e) {
    const Expr& callee = *e.args[0];
    if (callee.kind == Expr::Kind::Attribute) {
      const Value obj = eval(*callee.args[0]);
      if (obj.is_undefined()) throw std::invalid_argument(obj.undefined_reason());
      const CallArgs args = arguments(e, 1);
      bool found = false;
      Value result = call_method(obj, callee.name, args, &found);
      if (found) return result;
      const Value f = get_attribute(obj, callee.name);
      if (f.kind() == Value::Kind::Function) return f.as_function()(args);
      if (f.is_undefined()) throw std::invalid_argument(f.undefined_reason());
      throw std::invalid_argument("'" + f.type_name() + "' object is not callable");
    }
    const Value f = eval(callee);
    if (f.is_undefined()) throw std::invalid_argument(f.undefined_reason());
    if (f.kind() != Value::Kind::Function)
      throw std::invalid_argument("'" + f.type_name() + "' object is not callable");
    return f.as_function()(arguments(e, 1));
  }

  Value binary(const Expr& e) {
    const std::string& op = e.name;
    const Value a = eval(*e.args[0]);
    if (op == "and") return a.truthy() ? eval(*e.args[1]) : a;
    if (op == "or") return a.truthy() ? a : eval(*e.args[1]);
    const Value b = eval(*e.args[1]);
    if (op == "~") return Value::string(join_text(a.str(), b.str()));
    if (op == "==") return Value::boolean(a.equals(b));
    if (op == "!=") return Value::boolean(!a.equals(b));
    if (op == "<") return Value::boolean(less(a, b));
    if (op == ">") return Value::boolean(less(b, a));
    if (op == "<=") return Value::boolean(!less(b, a));
    if (op == ">=") return Value::boolean(!less(a, b));
    if (op == "in") return Value::boolean(contains(b, a));
    if (op == "not in") return Value::boolean(!contains(b, a));
    return arithmetic(op, a, b);
  }

  std::vector<std::unordered_map<std::string, Value>> scopes_;
  std::string out_;
  uint64_t steps_ = 0;
  uint64_t max_steps_;
};

}   // namespace

std::string render(const Body& body, const Dict& variables, uint64_t max_steps) {
  return Evaluator(variables, max_steps).run(body);
}

}   // namespace glassbox::jinja
