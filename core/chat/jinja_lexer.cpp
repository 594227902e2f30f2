// Jinja2's lexer (jinja2/lexer.py) as transformers configures it: trim_blocks=True,
// lstrip_blocks=True, keep_trailing_newline=False.
#include "chat/jinja_lexer.h"

#include <algorithm>
#include <cstring>

#include "chat/chat_error.h"
#include "chat/jinja_strings.h"
#include "tokenizer/unicode.h"

namespace glassbox::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Whitespace control strips what Python's str.rstrip() and the regex \s strip: Unicode spaces too.
std::string rstrip_spaces(const std::string& text) {
  std::u32string t = utf8_decode(text);
  while (!t.empty() && python_space(t.back())) t.pop_back();
  return utf8_encode(t);
}
size_t skip_spaces(const std::string& text, size_t pos) {
  const std::u32string t = utf8_decode(text.substr(pos));
  size_t n = 0;
  while (n < t.size() && python_space(t[n])) ++n;
  return pos + utf8_encode(t.substr(0, n)).size();
}
bool all_spaces(const std::string& text) {
  for (char32_t c : utf8_decode(text))
    if (!python_space(c)) return false;
  return true;
}
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(const std::string& source) {
    // Jinja2 reads "\r\n" and "\r" as "\n", and drops one final newline.
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\r') {
        src_ += '\n';
        if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      } else {
        src_ += source[i];
      }
    }
    if (!src_.empty() && src_.back() == '\n') src_.pop_back();
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    size_t pos = 0;
    bool line_starting = true;
    while (pos < src_.size()) {
      const size_t tag = find_tag(pos);
      std::string text = src_.substr(pos, tag - pos);
      if (tag == src_.size()) {
        emit_text(text, pos);
        break;
      }
      const char kind = src_[tag + 1];   // '{', '%' or '#'
      const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      if (sign == '-') {
        text = rstrip_spaces(text);
      } else if (sign != '+' && kind != '{') {
        // lstrip_blocks: only spaces before the tag on its line.
        const size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && line_start < text.size() && all_spaces(text.substr(line_start)))
          text.erase(line_start);
      }
      emit_text(text, pos);
      size_t body = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      char end_sign = '\0';
      if (kind == '#') {
        const size_t end = src_.find("#}", body);
        if (end == std::string::npos) fail(tag, "the comment is never closed with #}");
        if (end > body && (src_[end - 1] == '-' || src_[end - 1] == '+')) end_sign = src_[end - 1];
        pos = end + 2;
      } else {
        const bool block = kind == '%';
        push(block ? Token::Type::BlockBegin : Token::Type::VariableBegin, src_.substr(tag, 2), tag);
        pos = expression(body, block ? '%' : '}', end_sign);
        push(block ? Token::Type::BlockEnd : Token::Type::VariableEnd, block ? "%}" : "}}", pos - 2);
      }
      // After the tag: `-` strips all whitespace; trim_blocks drops one newline after a block or
      // comment unless `+` keeps it.
      if (end_sign == '-') {
        pos = skip_spaces(src_, pos);
      } else if (end_sign != '+' && kind != '{' && pos < src_.size() && src_[pos] == '\n') {
        ++pos;
      }
      line_starting = pos > 0 && src_[pos - 1] == '\n';
    }
    push(Token::Type::End, "", src_.size());
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t pos) const {
    for (size_t i = pos; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return src_.size();
  }

  void emit_text(const std::string& text, size_t at) {
    if (!text.empty()) push(Token::Type::Text, text, at);
  }

  void push(Token::Type type, std::string text, size_t at) {
    const auto [line, column] = place(at);
    tokens_.push_back(Token{type, std::move(text), line, column});
  }

  std::pair<int, int> place(size_t at) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at) - 1;
    return {static_cast<int>(it - line_starts_.begin()) + 1, static_cast<int>(at - *it) + 1};
  }

  [[noreturn]] void fail(size_t at, const std::string& problem) const {
    const auto [line, column] = place(at);
    throw TemplateError(line, column, problem);
  }

  // The tokens of one tag's expression, up to its closing `%}` or `}}` (outside brackets);
  // returns the position after it and sets end_sign to the `-` or `+` before it.
  size_t expression(size_t pos, char closer, char& end_sign) {
    int depth = 0;
    while (true) {
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
      if (pos >= src_.size()) fail(pos, std::string("the tag is never closed with ") + closer + "}");
      const char c = src_[pos];
      if (depth == 0) {
        if ((c == '-' || c == '+') && src_.compare(pos + 1, 2, std::string(1, closer) + "}") == 0) {
          end_sign = c;
          return pos + 3;
        }
        if (c == closer && pos + 1 < src_.size() && src_[pos + 1] == '}') return pos + 2;
      }
      if (is_name_start(c)) {
        const size_t start = pos;
        while (pos < src_.size() && (is_name_start(src_[pos]) || is_digit(src_[pos]))) ++pos;
        push(Token::Type::Name, src_.substr(start, pos - start), start);
      } else if (is_digit(c)) {
        pos = number(pos);
      } else if (c == '\'' || c == '"') {
        pos = string_literal(pos);
      } else {
        static const char* const operators[] = {"**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<",
                                                ">",  "=",  ".",  ",",  ":",  "|",  "(", ")", "[", "]", "{", "}"};
        const char* found = nullptr;
        for (const char* op : operators)
          if (src_.compare(pos, std::strlen(op), op) == 0) {
            found = op;
            break;
          }
        if (!found) fail(pos, std::string("unexpected character '") + c + "'");
        const std::string op(found);
        if (op == "(" || op == "[" || op == "{") ++depth;
        if (op == ")" || op == "]" || op == "}") {
          if (depth == 0) fail(pos, "unexpected '" + op + "'");
          --depth;
        }
        push(Token::Type::Operator, op, pos);
        pos += op.size();
      }
    }
  }

  size_t number(size_t pos) {
    const size_t start = pos;
    std::string digits;
    bool is_float = false;
    while (pos < src_.size() && (is_digit(src_[pos]) || src_[pos] == '_'))
      if (src_[pos++] != '_') digits += src_[pos - 1];
    if (pos + 1 < src_.size() && src_[pos] == '.' && is_digit(src_[pos + 1])) {
      is_float = true;
      digits += src_[pos++];
      while (pos < src_.size() && (is_digit(src_[pos]) || src_[pos] == '_'))
        if (src_[pos++] != '_') digits += src_[pos - 1];
    }
    if (pos < src_.size() && (src_[pos] == 'e' || src_[pos] == 'E')) {
      size_t p = pos + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_digit(src_[p])) {
        is_float = true;
        digits += src_.substr(pos, p - pos);
        pos = p;
        while (pos < src_.size() && is_digit(src_[pos])) digits += src_[pos++];
      }
    }
    push(is_float ? Token::Type::Float : Token::Type::Integer, digits, start);
    return pos;
  }

  // A quoted string with Python's escapes (Jinja2 decodes literals with "unicode-escape").
  size_t string_literal(size_t pos) {
    const size_t start = pos;
    const char quote = src_[pos++];
    std::string out;
    while (true) {
      if (pos >= src_.size()) fail(start, "the string is never closed");
      const char c = src_[pos++];
      if (c == quote) break;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= src_.size()) fail(start, "the string is never closed");
      const char e = src_[pos++];
      const auto hex = [&](int n) {
        uint32_t cp = 0;
        for (int i = 0; i < n; ++i, ++pos) {
          const char h = pos < src_.size() ? src_[pos] : '\0';
          const int d = is_digit(h)              ? h - '0'
                        : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                        : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                 : -1;
          if (d < 0) fail(pos, "a truncated \\x, \\u or \\U escape in a string");
          cp = cp * 16 + static_cast<uint32_t>(d);
        }
        unicode::append_utf8(out, cp);
      };
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case 'a':
          out += '\a';
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case '\n':
          break;
        case 'x':
          hex(2);
          break;
        case 'u':
          hex(4);
          break;
        case 'U':
          hex(8);
          break;
        default:
          if (e >= '0' && e <= '7') {
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int i = 0; i < 2 && pos < src_.size() && src_[pos] >= '0' && src_[pos] <= '7'; ++i)
              cp = cp * 8 + static_cast<uint32_t>(src_[pos++] - '0');
            unicode::append_utf8(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    push(Token::Type::String, out, start);
    return pos;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}   // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}   // namespace glassbox::jinja
