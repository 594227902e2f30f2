// The syntax tree of a chat template: expressions and statements, each with its place in the
// template for error messages.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "chat/jinja_value.h"

namespace glassbox::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,       // value
    Name,          // name
    Attribute,     // args[0].name
    Item,          // args[0][args[1]]
    Slice,         // args[0][args[1]:args[2]:args[3]] (null parts are absent)
    Call,          // args[0](args[1..], keyword)
    Filter,        // args[0] | name(args[1..], keyword)
    Test,          // args[0] is [not] name(args[1..]); negated
    Unary,         // name ("not", "-", "+") args[0]
    Binary,        // args[0] name args[1]: or and + - * / // % ** ~ in, not in, == != < <= > >=
    Conditional,   // args[0] if args[1] else args[2] (args[2] may be null)
    List,          // [args...]
    Tuple,         // (args...)
    Dict,          // {keyword...} with keys in args at even places, values at odd places
  };
  Kind kind;
  int line = 0;
  int column = 0;
  int depth = 1;   // of the tree below; the parser bounds it, since evaluating recurses that deep
  std::string name;
  Value value;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Stmt {
  enum class Kind {
    Text,       // text
    Output,     // {{ expr }}
    If,         // branches: (condition, body)...; else_body
    For,        // for targets in expr [if condition]: body [else: else_body]
    Set,        // set targets = expr; or set target.attribute = expr (attribute non-empty)
    SetBlock,   // set targets[0] %}body{% endset
    Break,
    Continue,
    Generation,   // transformers' {% generation %}: renders its body
  };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string text;
  std::vector<std::string> targets;
  std::string attribute;
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
};

}   // namespace glassbox::jinja
