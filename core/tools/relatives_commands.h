// The commands of the GPT's relatives, for models `glassbox train` makes with --task:
//   glassbox classify   a classifier's label for a text, or for each line of a file
//   glassbox fill-mask  a masked LM's most likely tokens at the masks of a text
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/model.h"

// The input is `text` (tokenized with the model's tokenizer), or `ids` as given, or (classify)
// the lines of the file `input`. Results go to stdout as JSON; errors are thrown.
int run_classify(const std::string& model_dir, const glassbox::LoadOptions& load, const std::optional<std::string>& text,
                 const std::optional<std::vector<std::int32_t>>& ids, const std::string& input);
int run_fill_mask(const std::string& model_dir, const glassbox::LoadOptions& load, const std::optional<std::string>& text,
                  const std::optional<std::vector<std::int32_t>>& ids, int top);
