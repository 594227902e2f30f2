// Labelled text for classifiers: the file format `glassbox train --task classify` learns from and
// `glassbox classify --input` reads, and how a text becomes the ids a classifier reads.
//
//   positive<TAB>What a wonderful day.
//   negative<TAB>The train was late again.
//
// One example per line: the label, a tab, the text. Empty lines are skipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/tokenizer.h"

namespace glassbox {

struct LabelledLine {
  std::string label;   // empty when the line has no tab (classify --input accepts bare texts)
  std::string text;
  std::string where;   // "file:line", for messages
};

// The examples of one file's text. A line that is not UTF-8, and with require_labels a line
// without a tab or with an empty label or text, is an Error naming file:line.
std::vector<LabelledLine> parse_labelled_lines(std::string_view text, const std::string& file, bool require_labels);

// The ids a classifier reads for a text (Tokenizer::encode_for_classifier, max_tokens of them at
// most), with a note in *truncated when text tokens had to be dropped. Throws Error naming
// `where` for text that is not UTF-8.
std::vector<std::int32_t> classifier_ids(const Tokenizer& tokenizer, std::string_view text, int max_tokens,
                                         const std::string& where, bool* truncated = nullptr);

}   // namespace glassbox
