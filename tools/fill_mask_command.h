// glassbox fill-mask: a masked LM's most likely tokens at the masks of a text (models that
// `glassbox train --task mlm` makes: bidirectional, with a mask token).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/model.h"

// The input is `text` (tokenized with the model's tokenizer; the mask written as its token's
// text), or `ids` as given. The `top` candidates per mask go to stdout as JSON; errors are thrown.
int run_fill_mask(const std::string& model_dir, const glassbox::LoadOptions& load,
                  const std::optional<std::string>& text, const std::optional<std::vector<std::int32_t>>& ids, int top);
