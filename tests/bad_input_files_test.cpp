// The bad-input table's rows about a model's files (docs/bad-input.md), C++ API and CLI columns:
// special files (a FIFO, a device, a directory) where a model directory's files belong, and small
// files over their caps, refused before they are read (never a wait for a FIFO's writer or an
// endless read of /dev/zero). The JS API's side: tests/js/bad-input-files.test.mjs.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::expect_cli;
using test::expect_cpp;

// A copy of the gpt2-bytes fixture (which has a tokenizer) whose `file` is replaced by make(path).
class ModelWith {
 public:
  template <typename F>
  ModelWith(const std::string& file, F make) {
    fs::copy(test::fixture_dir("gpt2-bytes"), dir_.path(),
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    fs::remove(dir_.path() / file);
    make(dir_.path() / file);
  }
  std::string path() const { return dir_.path().string(); }

 private:
  test::TempDir dir_;
};

// Row `id` for `file` made by `make`: the CLI (a command that reads the file) and the C++ API.
template <typename F>
void expect_row(const std::string& id, const std::string& file, F make) {
  SCOPED_TRACE(id + ": " + file);
  ModelWith m(file, make);
  const bool tokenizer_file = file == "vocab.json" || file == "merges.txt";
  if (tokenizer_file) {
    expect_cli(id, {"tokenize", "-m", m.path()}, "Hello");
    expect_cpp<ModelFormatError>(id, [&] { Tokenizer::load(m.path()); });
  } else {
    expect_cli(id, {"forward", "-m", m.path(), "--tokens", "1"});
    expect_cpp<ModelFormatError>(id, [&] { Model::load(m.path()); });
  }
}

const char* const kFiles[] = {"config.json", "vocab.json", "merges.txt", "model.safetensors"};

void sparse(const fs::path& path, std::uintmax_t bytes) {
  test::write_file(path, "");
  fs::resize_file(path, bytes);   // a hole: no disk, no memory
}

TEST(BadInputFiles, B66_Fifo) {
  for (const char* file : kFiles)
    expect_row("B66", file, [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0); });
}

TEST(BadInputFiles, B67_Device) {
  for (const char* file : kFiles)
    for (const char* device : {"/dev/zero", "/dev/urandom"})
      expect_row("B67", file, [&](const fs::path& p) { fs::create_symlink(device, p); });
}

TEST(BadInputFiles, B68_Directory) {
  for (const char* file : kFiles) expect_row("B68", file, [](const fs::path& p) { fs::create_directory(p); });
}

TEST(BadInputFiles, B69_HugeTokenizerFile) {
  expect_row("B69", "vocab.json", [](const fs::path& p) { sparse(p, 1'500'000'000); });
  expect_row("B69", "merges.txt", [](const fs::path& p) { sparse(p, 65u << 20); });
}

TEST(BadInputFiles, B70_HugeConfig) {
  expect_row("B70", "config.json", [](const fs::path& p) { sparse(p, 2u << 20); });
}

}   // namespace
}   // namespace glassbox
