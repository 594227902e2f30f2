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

}   // namespace glassbox
