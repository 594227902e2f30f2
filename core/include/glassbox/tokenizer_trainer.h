// Learning a byte-level BPE vocabulary from text (as minbpe and Hugging Face's BPE trainer do):
// cut the text with GPT-2's pre-tokenizer, start from the 256 bytes, and repeatedly merge the most
// frequent adjacent pair of tokens inside pieces, until the vocabulary has the size asked for.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox {

struct TokenizerTrainingOptions {
  int vocab_size = 4096;                                         // including the 256 bytes and the special tokens
  std::vector<std::string> special_tokens = {"<|endoftext|>"};   // appended after the merges
  std::function<void(int merges_done, int merges_total)> on_progress;   // may be empty
};

// The two Hugging Face files, ready to be written or given to Tokenizer::from_strings.
struct TokenizerFiles {
  std::string vocab_json;
  std::string merges_txt;
  int merges = 0;   // fewer than asked when the text has no pair left to merge
};

// Throws InvalidArgument if the text is not valid UTF-8 or vocab_size < 256 + specials.
// Ties between equally frequent pairs go to the smaller (left id, right id), so the result is
// fully determined by the text and the options.
TokenizerFiles train_tokenizer(std::string_view text, const TokenizerTrainingOptions& options);

// Writes dir/vocab.json and dir/merges.txt, each through a temporary file and a rename, so a
// crash never leaves a half-written file behind.
void save_tokenizer(const TokenizerFiles& files, const std::filesystem::path& dir);

}   // namespace glassbox
