// The error a chat template raises: a syntax error, a failed evaluation, or the template's own
// raise_exception(msg). The message names the template line and column.
#pragma once

#include <string>

#include "glassbox/error.h"

namespace glassbox {

class TemplateError : public Error {
 public:
  TemplateError(int line, int column, const std::string& problem)
      : Error("chat template, line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + problem),
        problem_(problem),
        line_(line),
        column_(column) {}
  const std::string& problem() const { return problem_; }   // the message without the place
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string problem_;
  int line_;
  int column_;
};

}   // namespace glassbox
