#include "output_dir.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "glassbox/error.h"

namespace glassbox {

namespace fs = std::filesystem;

void check_output_dir(const fs::path& dir, const std::string& option) {
  const std::string name = option + " " + dir.string();
  if (dir.empty()) throw InvalidArgument(option + " needs a folder, got an empty value");
  std::error_code ec;
  fs::path existing = fs::absolute(dir, ec);
  while (!existing.empty() && !fs::exists(fs::symlink_status(existing, ec)) && existing != existing.parent_path())
    existing = existing.parent_path();
  if (!fs::is_directory(existing, ec))
    throw Error(name + ": " + existing.string() + " is not a folder, so the results cannot be written there");
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    throw Error(name + ": cannot write to " + existing.string() + " (" + std::strerror(errno) +
                "): choose a folder you can write to");
}

}   // namespace glassbox
