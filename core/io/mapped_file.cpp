#include "io/mapped_file.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glassbox/error.h"

namespace glassbox {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not a regular file).
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw ModelFormatError(name, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw ModelFormatError(name, "not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<std::size_t>(st.st_size);
  if (file->size_ == 0) {   // mmap rejects length 0; an empty view is what the caller validates
    ::close(fd);
    return file;
  }
#ifndef __EMSCRIPTEN__
  void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw ModelFormatError(name, std::string("cannot map: ") + std::strerror(errno));
  file->data_ = static_cast<const std::byte*>(p);
  file->mapped_ = true;
#else
  auto* buffer = new std::byte[file->size_];
  std::size_t done = 0;
  while (done < file->size_) {
    ssize_t n = ::read(fd, buffer + done, file->size_ - done);
    if (n <= 0) {
      ::close(fd);
      delete[] buffer;
      throw ModelFormatError(name, "read failed");
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  file->data_ = buffer;
#endif
  return file;
}

void MappedFile::drop_pages(std::span<const std::byte> range) const {
#ifndef __EMSCRIPTEN__
  if (!mapped_ || range.empty()) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(range.data()) + page - 1) / page * page;
  const auto end = reinterpret_cast<std::uintptr_t>(range.data() + range.size()) / page * page;
  if (end > begin)
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);   // a hint: failure changes nothing
#else
  (void)range;
#endif
}

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  // Through the mapping: a FIFO or /dev/zero is "not a regular file", not an endless read.
  const auto file = MappedFile::open(path);
  const auto bytes = file->bytes();
  if (bytes.size() > max_bytes)
    throw ModelFormatError(path.string(), "is " + std::to_string(bytes.size()) + " bytes, more than the " +
                                              std::to_string(max_bytes) + " allowed for this file");
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

MappedFile::~MappedFile() {
  if (data_ == nullptr) return;
#ifndef __EMSCRIPTEN__
  if (mapped_) {
    ::munmap(const_cast<std::byte*>(data_), size_);
    return;
  }
#endif
  delete[] data_;
}

}   // namespace glassbox
