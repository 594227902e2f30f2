// glassbox chat: a conversation rendered with the model directory's chat template (as
// transformers' apply_chat_template), printed (--print-prompt) or answered by the model, streamed;
// interactive when no --messages file is given.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "glassbox/model.h"
#include "sampling_options.h"

struct ChatRequest {
  std::string messages_file;                // a JSON array of {role, content}; empty: interactive (stdin)
  bool print_prompt = false;                // print the rendered text, do not generate
  bool no_generation_prompt = false;        // render without the assistant's header at the end
  std::string date;                         // "YYYY-MM-DD" for strftime_now; empty: today
  std::vector<std::string> template_vars;   // NAME=VALUE, VALUE as JSON when it parses, else text
  std::string system;                       // a system message put first
  SamplingOptions sampling;
};

// The chat subcommand and its options; add_model / add_quantize add the options it shares.
CLI::App* add_chat_command(CLI::App& app, ChatRequest& request);

// Runs it: output on stdout, errors thrown.
int run_chat(const std::string& model_dir, const glassbox::LoadOptions& load, const ChatRequest& request);

// --template-var NAME=VALUE pairs -> a JSON object's text: VALUE parsed as JSON where it is JSON
// (false, 3, "x", [1]), else taken as a string. Throws InvalidArgument for a pair without "=" or
// with an empty or repeated NAME.
std::string template_variables_json(const std::vector<std::string>& pairs);
