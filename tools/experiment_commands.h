// glassbox patch and glassbox attribute: activation patching and direct logit attribution
// (glassbox/experiments.h) from the command line, as JSON on stdout.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "glassbox/model.h"

// Prompts are text (tokenized with the model's tokenizer) or ids ("464,2068"); answers are TOK
// (token_args.h: a token's text, or #id).
struct PatchRequest {
  std::optional<std::string> clean, corrupted;   // text
  std::string clean_ids, corrupted_ids;          // or ids
  std::string answer, wrong;
  std::string what = "resid_pre,attn_out,mlp_out,head";
  bool allow_special = false;
};

struct AttributeRequest {
  std::optional<std::string> prompt;   // text
  std::string ids;                     // or ids
  std::string answer;
  std::optional<std::string> wrong;
  bool allow_special = false;
};

// The subcommands and their options; add_model / add_quantize add the options they share.
CLI::App* add_patch_command(CLI::App& app, PatchRequest& request);
CLI::App* add_attribute_command(CLI::App& app, AttributeRequest& request);

// Run them: JSON on stdout (patch's progress on stderr), errors thrown.
int run_patch(const std::string& model_dir, const glassbox::LoadOptions& load, const PatchRequest& request);
int run_attribute(const std::string& model_dir, const glassbox::LoadOptions& load, const AttributeRequest& request);
