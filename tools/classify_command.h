// glassbox classify: a classifier's label for a text, or for each line of a file (models that
// `glassbox train --task classify` makes, or GPT2ForSequenceClassification checkpoints).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/model.h"

// The input is `text` (tokenized with the model's tokenizer, then <|endoftext|>), or `ids` as
// given, or the lines of the file `input`; head_mask: --head-mask as given ("L:H,..."; "" for
// none). Results go to stdout as JSON; errors are thrown.
int run_classify(const std::string& model_dir, const glassbox::LoadOptions& load,
                 const std::optional<std::string>& text, const std::optional<std::vector<std::int32_t>>& ids,
                 const std::string& input, const std::string& head_mask);
