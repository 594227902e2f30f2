// Text files given on the command line (training and evaluation text): listing, reading, encoding.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"

namespace glassbox {

// The files named: each a file, or a folder whose regular files (not hidden ones) are taken in
// name order.
// Throws Error for a name that is neither, or an empty folder.
std::vector<std::filesystem::path> list_files(const std::vector<std::string>& args);

std::string read_text(const std::filesystem::path& file);

// The token stream of some files: each file encoded on its own, <|endoftext|> between files.
// Throws Error naming the file for text that is not UTF-8.
std::vector<std::int32_t> encode_files(const Tokenizer& tokenizer, const std::vector<std::filesystem::path>& files);

}   // namespace glassbox
