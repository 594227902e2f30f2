#include "mapped_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glassbox/error.h"

namespace glassbox {

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
  const std::string name = path.string();
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ModelFormatError(name, std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
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

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelFormatError(path.string(), "cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
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

}  // namespace glassbox
