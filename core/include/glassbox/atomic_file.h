// Writing a file so that a crash, a full disk or Ctrl-C at any moment leaves either the old file
// or the new one, never a half-written mix: write a temporary file beside it, flush it to disk,
// then rename it over the target (rename is atomic on POSIX file systems).
#pragma once

#include <filesystem>
#include <string_view>

namespace glassbox {

// Throws Error naming the path if any step fails; the temporary file is removed then.
void write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

}   // namespace glassbox
