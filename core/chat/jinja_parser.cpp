// A recursive-descent parser with Jinja2's precedence, lowest first:
//   conditional (a if b else c) < or < and < not < comparison (== != < <= > >= in, not in)
//   < + - < ~ < * / // % < ** < unary - + < postfix (.x [i] [a:b] (args)) and filters/tests
// A filter or test binds to the unary expression before it: `a + b | trim` trims only b, and
// `not x is defined` negates the test.
#include "chat/jinja_parser.h"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include "chat/chat_error.h"
#include "chat/jinja_builtins.h"
#include "chat/jinja_lexer.h"

namespace glassbox::jinja {
namespace {

using T = Token::Type;

// Deeper expressions or nested blocks are refused: evaluating them recurses that deep, and no real
// template comes near.
constexpr int kMaxDepth = 200;

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body run() {
    Body body = subparse({});
    return body;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
  const Token& next() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == T::Operator && peek(ahead).text == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).type == T::Name && peek(ahead).text == name;
  }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* name) {
    if (!is_name(name)) return false;
    next();
    return true;
  }

  [[noreturn]] void fail(const Token& at, const std::string& problem) const {
    throw TemplateError(at.line, at.column, problem);
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case T::End:
        return "the end of the template";
      case T::BlockEnd:
      case T::VariableEnd:
        return "the end of the tag";
      case T::Text:
        return "text";
      case T::String:
        return "a string";
      default:
        return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(peek(), std::string("expected '") + op + "', found " + describe(peek()));
  }
  void expect(T type, const char* what) {
    if (peek().type != type) fail(peek(), std::string("expected ") + what + ", found " + describe(peek()));
    next();
  }
  std::string expect_name() {
    if (peek().type != T::Name) fail(peek(), "expected a name, found " + describe(peek()));
    return next().text;
  }

  ExprPtr node(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = at.line;
    e->column = at.column;
    return e;
  }
  StmtPtr stmt(Stmt::Kind kind, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->line = at.line;
    s->column = at.column;
    return s;
  }

  // Statements up to a `{% name %}` with name in ends; stops with that name as the next token.
  Body subparse(std::initializer_list<const char*> ends) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.type == T::End) {
        if (ends.size() == 0) return body;
        fail(t, std::string("unexpected end of template, expected '") + *ends.begin() + "'");
      }
      if (t.type == T::Text) {
        auto s = stmt(Stmt::Kind::Text, t);
        s->text = next().text;
        body.push_back(std::move(s));
      } else if (t.type == T::VariableBegin) {
        auto s = stmt(Stmt::Kind::Output, next());
        s->expr = tuple(true);
        expect(T::VariableEnd, "'}}'");
        body.push_back(std::move(s));
      } else if (t.type == T::BlockBegin) {
        next();
        for (const char* end : ends)
          if (is_name(end)) return body;
        body.push_back(statement());
      } else {
        fail(t, "unexpected " + describe(t));
      }
    }
  }

  void end_tag(const char* name) {
    const Token& t = peek();
    if (!skip_name(name)) fail(t, std::string("expected '") + name + "', found " + describe(t));
    expect(T::BlockEnd, "'%}'");
  }

  StmtPtr statement() {
    const Token& t = peek();
    const Nesting nesting(*this, t);
    if (t.type != T::Name) fail(t, "expected a tag name, found " + describe(t));
    const std::string tag = next().text;
    if (tag == "if") return if_statement(t);
    if (tag == "for") return for_statement(t);
    if (tag == "set") return set_statement(t);
    if (tag == "break" || tag == "continue") {
      auto s = stmt(tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, t);
      expect(T::BlockEnd, "'%}'");
      return s;
    }
    if (tag == "generation") {
      auto s = stmt(Stmt::Kind::Generation, t);
      expect(T::BlockEnd, "'%}'");
      s->body = subparse({"endgeneration"});
      end_tag("endgeneration");
      return s;
    }
    if (tag == "macro" || tag == "call" || tag == "filter" || tag == "include" || tag == "import" || tag == "from" ||
        tag == "extends" || tag == "block" || tag == "with" || tag == "raw" || tag == "autoescape" || tag == "do")
      fail(t, "the tag '" + tag + "' is not supported by glassbox's chat templates");
    fail(t, "unknown tag '" + tag + "'");
  }

  StmtPtr if_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::If, at);
    while (true) {
      ExprPtr condition = tuple(false);
      expect(T::BlockEnd, "'%}'");
      Body body = subparse({"elif", "else", "endif"});
      s->branches.emplace_back(std::move(condition), std::move(body));
      if (skip_name("elif")) continue;
      if (skip_name("else")) {
        expect(T::BlockEnd, "'%}'");
        s->else_body = subparse({"endif"});
      }
      end_tag("endif");
      return s;
    }
  }

  std::vector<std::string> targets() {
    std::vector<std::string> names;
    const bool parens = skip_op("(");
    names.push_back(expect_name());
    while (skip_op(",")) names.push_back(expect_name());
    if (parens) expect_op(")");
    return names;
  }

  StmtPtr for_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::For, at);
    s->targets = targets();
    if (!skip_name("in")) fail(peek(), "expected 'in' in the for loop, found " + describe(peek()));
    s->expr = tuple(false);
    if (skip_name("if")) s->condition = expression(true);
    if (is_name("recursive")) fail(peek(), "recursive loops are not supported by glassbox's chat templates");
    expect(T::BlockEnd, "'%}'");
    s->body = subparse({"endfor", "else"});
    if (skip_name("else")) {
      expect(T::BlockEnd, "'%}'");
      s->else_body = subparse({"endfor"});
    }
    end_tag("endfor");
    return s;
  }

  StmtPtr set_statement(const Token& at) {
    auto s = stmt(Stmt::Kind::Set, at);
    if (peek().type == T::Name && is_op(".", 1)) {
      s->targets.push_back(next().text);
      next();
      s->attribute = expect_name();
    } else {
      s->targets = targets();
    }
    if (skip_op("=")) {
      s->expr = tuple(true);
      expect(T::BlockEnd, "'%}'");
      return s;
    }
    if (s->targets.size() != 1 || !s->attribute.empty()) fail(peek(), "expected '=' in the set tag");
    s->kind = Stmt::Kind::SetBlock;
    expect(T::BlockEnd, "'%}'");
    s->body = subparse({"endset"});
    end_tag("endset");
    return s;
  }

  // expression (, expression)* -> a tuple when there is a comma.
  ExprPtr tuple(bool with_conditional) {
    const Token& at = peek();
    ExprPtr first = expression(with_conditional);
    if (!is_op(",")) return first;
    auto t = node(Expr::Kind::Tuple, at);
    t->args.push_back(std::move(first));
    while (skip_op(",")) {
      if (peek().type == T::BlockEnd || peek().type == T::VariableEnd || is_op(")")) break;
      t->args.push_back(expression(with_conditional));
    }
    return checked(std::move(t));
  }

  ExprPtr expression(bool with_conditional) {
    const Token& at = peek();
    const Nesting nesting(*this, at);
    ExprPtr e = or_expr();
    if (!with_conditional) return e;
    while (skip_name("if")) {
      auto c = node(Expr::Kind::Conditional, at);
      c->args.push_back(std::move(e));
      c->args.push_back(or_expr());
      c->args.push_back(skip_name("else") ? expression(true) : nullptr);
      e = checked(std::move(c));
    }
    return e;
  }

  ExprPtr binary(const Token& at, std::string op, ExprPtr left, ExprPtr right) {
    auto b = node(Expr::Kind::Binary, at);
    b->name = std::move(op);
    b->args.push_back(std::move(left));
    b->args.push_back(std::move(right));
    return checked(std::move(b));
  }

  ExprPtr or_expr() {
    ExprPtr e = and_expr();
    while (is_name("or")) {
      const Token& t = next();   // read the operator before the operand (argument order is unspecified)
      e = binary(t, "or", std::move(e), and_expr());
    }
    return e;
  }
  ExprPtr and_expr() {
    ExprPtr e = not_expr();
    while (is_name("and")) {
      const Token& t = next();
      e = binary(t, "and", std::move(e), not_expr());
    }
    return e;
  }
  ExprPtr not_expr() {
    if (is_name("not")) {
      const Nesting nesting(*this, peek());
      auto u = node(Expr::Kind::Unary, next());
      u->name = "not";
      u->args.push_back(not_expr());
      return checked(std::move(u));
    }
    return compare();
  }
  ExprPtr compare() {
    ExprPtr e = math1();
    bool compared = false;
    while (true) {
      const Token& t = peek();
      std::string op;
      if (t.type == T::Operator &&
          (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == "<=" || t.text == ">" || t.text == ">=")) {
        op = next().text;
      } else if (is_name("in")) {
        next();
        op = "in";
      } else if (is_name("not") && is_name("in", 1)) {
        next();
        next();
        op = "not in";
      } else {
        return e;
      }
      if (compared) fail(t, "chained comparisons are not supported by glassbox's chat templates");
      compared = true;
      e = binary(t, op, std::move(e), math1());
    }
  }
  ExprPtr math1() {
    ExprPtr e = concat();
    while (is_op("+") || is_op("-")) {
      const Token& t = next();
      e = binary(t, t.text, std::move(e), concat());
    }
    return e;
  }
  ExprPtr concat() {
    ExprPtr e = math2();
    while (is_op("~")) {
      const Token& t = next();
      e = binary(t, "~", std::move(e), math2());
    }
    return e;
  }
  ExprPtr math2() {
    ExprPtr e = power();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& t = next();
      e = binary(t, t.text, std::move(e), power());
    }
    return e;
  }
  ExprPtr power() {
    ExprPtr e = unary(true);
    while (is_op("**")) {
      const Token& t = next();
      e = binary(t, "**", std::move(e), unary(true));
    }
    return e;
  }
  ExprPtr unary(bool with_filter) {
    const Nesting nesting(*this, peek());
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      const Token& t = next();
      e = node(Expr::Kind::Unary, t);
      e->name = t.text;
      e->args.push_back(unary(false));
      e = checked(std::move(e));
    } else {
      e = primary();
    }
    e = postfix(std::move(e));
    if (with_filter) e = filters_and_tests(std::move(e));
    return e;
  }

  ExprPtr primary() {
    const Token& t = peek();
    if (t.type == T::Name) {
      next();
      auto e = node(Expr::Kind::Literal, t);
      if (t.text == "true" || t.text == "True")
        e->value = Value::boolean(true);
      else if (t.text == "false" || t.text == "False")
        e->value = Value::boolean(false);
      else if (t.text == "none" || t.text == "None")
        e->value = Value::none();
      else {
        e->kind = Expr::Kind::Name;
        e->name = t.text;
      }
      return e;
    }
    if (t.type == T::String) {
      std::string text;
      while (peek().type == T::String) text += next().text;   // adjacent literals join, as in Python
      auto e = node(Expr::Kind::Literal, t);
      e->value = Value::string(text);
      return e;
    }
    if (t.type == T::Integer || t.type == T::Float) {
      next();
      auto e = node(Expr::Kind::Literal, t);
      try {
        // Floats read as Python's float() does: subnormals kept, too large -> inf.
        e->value =
            t.type == T::Integer ? Value::integer(integer(t)) : Value::number(std::strtod(t.text.c_str(), nullptr));
      } catch (const std::exception&) {
        fail(t, "the number " + t.text + " is out of range");
      }
      return e;
    }
    if (skip_op("(")) {
      if (skip_op(")")) return node(Expr::Kind::Tuple, t);
      ExprPtr e = tuple(true);
      expect_op(")");
      return e;
    }
    if (skip_op("[")) {
      auto e = node(Expr::Kind::List, t);
      while (!is_op("]")) {
        e->args.push_back(expression(true));
        if (!skip_op(",")) break;
      }
      expect_op("]");
      return checked(std::move(e));
    }
    if (skip_op("{")) {
      auto e = node(Expr::Kind::Dict, t);
      while (!is_op("}")) {
        e->args.push_back(expression(true));
        expect_op(":");
        e->args.push_back(expression(true));
        if (!skip_op(",")) break;
      }
      expect_op("}");
      return checked(std::move(e));
    }
    fail(t, "expected an expression, found " + describe(t));
  }

  // An integer literal; Python's are unbounded, these are 64-bit.
  int64_t integer(const Token& t) const {
    try {
      return std::stoll(t.text);
    } catch (const std::exception&) {
      fail(t, "the number " + t.text + " is out of range");
    }
  }

  ExprPtr postfix(ExprPtr e) {
    while (true) {
      const Token& t = peek();
      if (skip_op(".")) {
        if (peek().type == T::Integer) {
          auto item = node(Expr::Kind::Item, t);
          auto index = node(Expr::Kind::Literal, peek());
          index->value = Value::integer(integer(next()));
          item->args.push_back(std::move(e));
          item->args.push_back(std::move(index));
          e = checked(std::move(item));
        } else {
          auto attr = node(Expr::Kind::Attribute, t);
          attr->name = expect_name();
          attr->args.push_back(std::move(e));
          e = checked(std::move(attr));
        }
      } else if (skip_op("[")) {
        e = checked(subscript(t, std::move(e)));
      } else if (is_op("(")) {
        next();
        auto call = node(Expr::Kind::Call, t);
        call->line = e->line;   // a failing call is reported where its callee starts
        call->column = e->column;
        call->args.push_back(std::move(e));
        arguments(*call);
        e = checked(std::move(call));
      } else {
        return e;
      }
    }
  }

  ExprPtr subscript(const Token& at, ExprPtr object) {
    ExprPtr parts[3];
    int part = 0;
    bool slice = false;
    while (true) {
      if (!is_op(":") && !is_op("]")) parts[part] = expression(true);
      if (is_op(":")) {
        next();
        slice = true;
        if (++part > 2) fail(peek(), "a slice has at most two ':'");
        continue;
      }
      break;
    }
    expect_op("]");
    auto e = node(slice ? Expr::Kind::Slice : Expr::Kind::Item, at);
    e->args.push_back(std::move(object));
    if (!slice && !parts[0]) fail(at, "expected an index inside []");
    for (int i = 0; i < (slice ? 3 : 1); ++i) e->args.push_back(std::move(parts[i]));
    return e;
  }

  // (positional..., name=value...) after the '(' was read.
  void arguments(Expr& call) {
    while (!is_op(")")) {
      if (peek().type == T::Name && is_op("=", 1)) {
        std::string key = next().text;
        next();
        call.keyword.emplace_back(std::move(key), expression(true));
      } else {
        if (!call.keyword.empty()) fail(peek(), "a positional argument follows a keyword argument");
        call.args.push_back(expression(true));
      }
      if (!skip_op(",")) break;
    }
    expect_op(")");
  }

  ExprPtr filters_and_tests(ExprPtr e) {
    while (true) {
      const Token& t = peek();
      if (skip_op("|")) {
        auto f = node(Expr::Kind::Filter, peek());
        std::string name = expect_name();
        while (skip_op(".")) name.append(".").append(expect_name());
        if (!has_filter(name)) fail(t, "no filter named '" + name + "'");
        f->name = name;
        f->args.push_back(std::move(e));
        if (skip_op("(")) arguments(*f);
        e = checked(std::move(f));
      } else if (skip_name("is")) {
        auto test = node(Expr::Kind::Test, t);
        test->negated = skip_name("not");
        const Token& name_token = peek();
        std::string name = expect_name();
        while (skip_op(".")) name.append(".").append(expect_name());
        if (!has_test(name)) fail(name_token, "no test named '" + name + "'");
        test->name = name;
        test->args.push_back(std::move(e));
        const Token& a = peek();
        if (skip_op("(")) {
          arguments(*test);
        } else if ((a.type == T::Name || a.type == T::String || a.type == T::Integer || a.type == T::Float ||
                    is_op("[") || is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) fail(a, "tests cannot be chained with 'is'");
          test->args.push_back(postfix(primary()));
        }
        e = checked(std::move(test));
      } else {
        return e;
      }
    }
  }

  // The depth of e from its children's; fails past kMaxDepth.
  ExprPtr checked(ExprPtr e) {
    for (const ExprPtr& a : e->args)
      if (a) e->depth = std::max(e->depth, a->depth + 1);
    for (const auto& kv : e->keyword) e->depth = std::max(e->depth, kv.second->depth + 1);
    if (e->depth > kMaxDepth) fail_at(*e, "the expression nests deeper than " + std::to_string(kMaxDepth) + " levels");
    return e;
  }
  [[noreturn]] void fail_at(const Expr& e, const std::string& problem) const {
    throw TemplateError(e.line, e.column, problem);
  }

  // Counts nesting for the length of a recursive call.
  struct Nesting {
    Nesting(Parser& p, const Token& at) : parser(p) {
      if (++parser.nesting_ > kMaxDepth)
        parser.fail(at, "the template nests deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Nesting() { --parser.nesting_; }
    Parser& parser;
  };

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}   // namespace

Body parse(const std::string& source) { return Parser(tokenize(source)).run(); }

}   // namespace glassbox::jinja
