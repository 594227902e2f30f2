// Python's semantics for the values of a chat template: truth, str(), repr(), ==, and
// transformers' tojson.
#include "chat/jinja_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace glassbox::jinja {

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  if (depth > 64) throw std::invalid_argument("the JSON nests deeper than 64 levels");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return none();
    case nlohmann::ordered_json::value_t::boolean:
      return boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return integer(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float:
      return number(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      for (const auto& item : j) items.push_back(from_json(item, depth + 1));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict items;
      for (const auto& [key, item] : j.items()) items.emplace_back(key, from_json(item, depth + 1));
      return dict(std::move(items));
    }
    default:
      throw std::invalid_argument("a chat template cannot take binary JSON values");
  }
}

const Value* Value::find(const std::string& key) const {
  if (!is_mapping()) return nullptr;
  for (const auto& [k, v] : *dict_)
    if (k == key) return &v;
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
    case Kind::Int:
      return int_ != 0;
    case Kind::Float:
      return float_ != 0;
    case Kind::String:
      return !text_.empty();
    case Kind::List:
      return !list_->empty();
    case Kind::Dict:
      return !dict_->empty();
    case Kind::Function:
    case Kind::Namespace:
      return true;
  }
  return false;
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits and exponent, then Python's layout: positional for exponents in
  // [-4, 16), scientific (with at least two exponent digits) otherwise.
  // The fewest significant digits that read back as d, each count correctly rounded by printf
  // (std::to_chars for doubles is missing from Emscripten's libc++).
  char buf[64];
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string sci(buf);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out = digits + std::string(static_cast<size_t>(exponent + 1) - digits.size(), '0') + ".0";
    } else {
      out =
          digits.substr(0, static_cast<size_t>(exponent + 1)) + "." + digits.substr(static_cast<size_t>(exponent + 1));
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + out + exp;
}

namespace {

// Python's repr of a str: single quotes unless the text holds ' and no ".
std::string python_repr(const std::string& s) {
  const bool double_quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = double_quote ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == quote)
      out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else
      out += static_cast<char>(c);
  }
  return out + quote;
}

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void json_value(const Value& v, int indent, int depth, std::string& out) {
  const auto newline = [&](int level) {
    out += '\n';
    out.append(static_cast<size_t>(indent * level), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::None:
      out += "null";
      return;
    case Value::Kind::Bool:
      out += v.as_bool() ? "true" : "false";
      return;
    case Value::Kind::Int:
      out += std::to_string(v.as_int());
      return;
    case Value::Kind::Float: {
      const double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : python_float(d);
      return;
    }
    case Value::Kind::String:
      json_string(v.as_string(), out);
      return;
    case Value::Kind::List: {
      const List& items = v.as_list();
      if (items.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += indent >= 0 ? "," : ", ";
        if (indent >= 0) newline(depth + 1);
        json_value(items[i], indent, depth + 1, out);
      }
      if (indent >= 0) newline(depth);
      out += ']';
      return;
    }
    case Value::Kind::Dict:
    case Value::Kind::Namespace: {
      if (v.kind() == Value::Kind::Namespace) break;
      const Dict& items = v.as_dict();
      if (items.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += indent >= 0 ? "," : ", ";
        if (indent >= 0) newline(depth + 1);
        json_string(items[i].first, out);
        out += ": ";
        json_value(items[i].second, indent, depth + 1, out);
      }
      if (indent >= 0) newline(depth);
      out += '}';
      return;
    }
    default:
      break;
  }
  throw std::invalid_argument("Object of type " + v.type_name() + " is not JSON serializable");
}

}   // namespace

std::string to_json(const Value& v, int indent) {
  std::string out;
  json_value(v, indent, 0, out);
  return out;
}

std::string Value::str() const {
  switch (kind_) {
    case Kind::Undefined:
      return "";
    case Kind::String:
      return text_;
    default:
      return repr();
  }
}

std::string Value::repr() const {
  switch (kind_) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return int_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(int_);
    case Kind::Float:
      return python_float(float_);
    case Kind::String:
      return python_repr(text_);
    case Kind::List: {
      std::string out = is_tuple() ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      if (is_tuple()) return out + (list_->size() == 1 ? ",)" : ")");
      return out + "]";
    }
    case Kind::Dict: {
      std::string out = "{";
      for (size_t i = 0; i < dict_->size(); ++i)
        out += (i ? ", " : "") + python_repr((*dict_)[i].first) + ": " + (*dict_)[i].second.repr();
      return out + "}";
    }
    case Kind::Namespace:
      return "<Namespace>";
    case Kind::Function:
      return "<function " + text_ + ">";
  }
  return "";
}

bool Value::equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (kind_ == Kind::Float || other.kind_ == Kind::Float) return as_double() == other.as_double();
    return int_ == other.int_;
  }
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return text_ == other.text_;
    case Kind::List: {
      if (list_->size() != other.list_->size()) return false;
      for (size_t i = 0; i < list_->size(); ++i)
        if (!(*list_)[i].equals((*other.list_)[i])) return false;
      return true;
    }
    case Kind::Dict: {
      if (dict_->size() != other.dict_->size()) return false;
      for (const auto& [k, v] : *dict_) {
        const Value* o = other.find(k);
        if (!o || !v.equals(*o)) return false;
      }
      return true;
    }
    default:
      return dict_ == other.dict_ && function_ == other.function_;
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return "list";
    case Kind::Dict:
      return "dict";
    case Kind::Function:
      return "function";
    case Kind::Namespace:
      return "Namespace";
  }
  return "";
}

}   // namespace glassbox::jinja
