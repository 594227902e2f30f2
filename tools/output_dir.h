// The folder a command writes its results to (train -o, train-tokenizer -o).
#pragma once

#include <filesystem>
#include <string>

namespace glassbox {

// Throws Error unless `dir` is a folder that can be written, or one that can be made (its
// nearest existing parent is a writable folder), so that a bad -o is said before the long work
// (learning a vocabulary, training) rather than when its results are saved. `option` names the
// argument in the message ("-o").
void check_output_dir(const std::filesystem::path& dir, const std::string& option);

}   // namespace glassbox
