#include "text_files.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "glassbox/error.h"

namespace glassbox {

namespace fs = std::filesystem;

namespace {

// Why `path`, which is neither a regular file nor a folder, cannot be read as text.
std::string not_a_text_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status s = fs::status(path, ec);
  switch (s.type()) {
    case fs::file_type::not_found:
      return "no such file or folder";
    case fs::file_type::directory:
      return "a folder, not a file: give a text file";
    case fs::file_type::character:
      return "not a regular file (a character device): give a text file";
    case fs::file_type::block:
      return "not a regular file (a block device): give a text file";
    case fs::file_type::fifo:
      return "not a regular file (a FIFO): give a text file";
    case fs::file_type::socket:
      return "not a regular file (a socket): give a text file";
    default:
      return ec ? "cannot be read (" + ec.message() + ")" : "not a regular file: give a text file";
  }
}

}   // namespace

std::vector<fs::path> list_files(const std::vector<std::string>& args) {
  std::vector<fs::path> files;
  for (const auto& a : args) {
    if (fs::is_directory(a)) {
      std::vector<fs::path> inside;
      // hidden files and folders (.git, .DS_Store) are not text to train on
      for (auto it = fs::recursive_directory_iterator(a); it != fs::recursive_directory_iterator(); ++it) {
        if (it->path().filename().string().front() == '.') {
          if (it->is_directory()) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file()) inside.push_back(it->path());
      }
      std::sort(inside.begin(), inside.end());
      if (inside.empty()) throw Error(a + ": the folder has no files");
      files.insert(files.end(), inside.begin(), inside.end());
    } else if (fs::is_regular_file(a)) {
      files.emplace_back(a);
    } else {
      throw Error((a.empty() ? std::string("\"\" (an empty name)") : a) + ": " + not_a_text_file(a));
    }
  }
  return files;
}

std::string read_text(const fs::path& file) {
  // A FIFO or /dev/zero would block or never end: only regular files are read.
  if (!fs::is_regular_file(file)) throw Error(file.string() + ": " + not_a_text_file(file));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::int32_t> encode_files(const Tokenizer& tok, const std::vector<fs::path>& files) {
  std::vector<std::int32_t> ids;
  const auto eot = tok.special_token("<|endoftext|>");
  for (const auto& f : files) {
    if (!ids.empty() && eot) ids.push_back(*eot);
    try {
      const auto part = tok.encode(read_text(f));
      ids.insert(ids.end(), part.begin(), part.end());
    } catch (const InvalidArgument& e) {
      throw Error(f.string() + ": " + e.what());
    }
  }
  return ids;
}

}   // namespace glassbox
