// Exceptions thrown by the glassbox library.
//
// Every failure a user can cause (a bad model file, bad settings, bad ids) is reported with one of
// these, with a message that names the problem, so that the CLI can print it in one line and the
// JS bindings can turn it into a rejected promise.
#pragma once

#include <stdexcept>
#include <string>

namespace glassbox {

// Base of every exception the library throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model file (config.json, model.safetensors, ...) is missing, malformed, or does not fit the
// config. The message starts with the file's path.
class ModelFormatError : public Error {
 public:
  ModelFormatError(const std::string& file, const std::string& problem) : Error(file + ": " + problem) {}
};

// An argument given by the caller is out of range: sampling settings, token ids, prompt length.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A long computation was stopped by its caller (a progress callback that returned false).
class Cancelled : public Error {
 public:
  using Error::Error;
};

// A chat template failed: a syntax error, a failed evaluation, or the template's own
// raise_exception(msg). The message names where the template came from (e.g.
// "tokenizer_config.json: chat_template"), then the line and column: "WHERE, line L, column C: PROBLEM".
class TemplateError : public Error {
 public:
  TemplateError(int line, int column, const std::string& problem, const std::string& where = "chat template")
      : Error(where + ", line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + problem),
        problem_(problem),
        where_(where),
        line_(line),
        column_(column) {}
  const std::string& problem() const { return problem_; }   // the message without the place (raise_exception's own)
  const std::string& where() const { return where_; }
  int line() const { return line_; }
  int column() const { return column_; }
  // The same error, said to come from another place (the file the template was read from).
  TemplateError from(const std::string& where) const { return TemplateError(line_, column_, problem_, where); }

 private:
  std::string problem_;
  std::string where_;
  int line_;
  int column_;
};

}   // namespace glassbox
