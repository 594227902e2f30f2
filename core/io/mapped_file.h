// A read-only view of a whole file: memory-mapped natively, read into memory under Emscripten
// (which has no real mmap; in the browser the bytes come from fetch instead).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

namespace glassbox {

class MappedFile {
 public:
  // Throws ModelFormatError naming the path if the file cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }

  // Tells the OS that `range` (inside bytes()) will not be read again soon: natively the whole
  // pages inside it leave memory (a private read-only mapping reads them back from the file if
  // they are used again); under Emscripten nothing. A model loader calls it for every tensor it
  // has converted into its own copy, so the file's pages do not stay resident beside the copies.
  void drop_pages(std::span<const std::byte> range) const;

 private:
  MappedFile() = default;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
#ifndef __EMSCRIPTEN__
  bool mapped_ = false;   // true: munmap on destruction; false: delete[]
#endif
};

// The whole file as a string (config.json, vocab.json, merges.txt). Throws ModelFormatError naming
// the path if it is not a regular file, cannot be read, or is larger than max_bytes.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes = 64u << 20);

}   // namespace glassbox
