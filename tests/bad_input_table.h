// The bad-input table (docs/bad-input.md) as tests read it: the fragment a row expects in the CLI
// and C++ API columns, and the checks that a call fails with it. Shared by the test files that
// cover the table's rows (bad_input_test.cpp and those that follow its pattern).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace glassbox::test {

enum Column { kCli = 2, kCpp = 3 };

// The `code` fragment in one cell of row `id` ("B1", ...) of docs/bad-input.md; fails the test
// if the row or the fragment is missing.
inline std::string cell(const std::string& id, Column column) {
  std::istringstream doc(read_file(GLASSBOX_DOCS_DIR "/bad-input.md"));
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("| " + id + " |", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream row(line.substr(1));
    for (std::string c; std::getline(row, c, '|');) cells.push_back(c);
    const std::string& c = cells.at(column);
    const auto a = c.find('`'), b = c.rfind('`');
    if (a == std::string::npos || b == a) {
      ADD_FAILURE() << id << ": no `message` in column " << column << ": " << c;
      return "(missing)";
    }
    return c.substr(a + 1, b - a - 1);
  }
  ADD_FAILURE() << "docs/bad-input.md has no row " << id;
  return "(missing)";
}

// `call` must throw E with cell(id, kCpp) in its message.
template <typename E, typename F>
void expect_cpp(const std::string& id, F call) {
  const std::string want = cell(id, kCpp);
  try {
    call();
    ADD_FAILURE() << id << ": no exception (wanted \"" << want << "\")";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << id << ": " << e.what();
  }
}

// The CLI with these arguments (and stdin) must fail with one line holding cell(id, kCli).
inline void expect_cli(const std::string& id, const std::vector<std::string>& args, const std::string& in = "") {
  if (std::string(GLASSBOX_CLI_PATH).empty()) return;   // WebAssembly build: no CLI to run
  const auto r = run_cli(args, in);
  EXPECT_EQ(r.exit_code, 1) << id;
  EXPECT_EQ(r.err.rfind("glassbox: error: ", 0), 0u) << id << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << id << ": " << r.err;
  EXPECT_NE(r.err.find(cell(id, kCli)), std::string::npos) << id << ": " << r.err;
}

// A fixture's config.json and weights (model.safetensors, or the index and the shards it names)
// copied into `dir`.
inline void copy_model(const std::string& fixture, const std::filesystem::path& dir) {
  const std::filesystem::path from = fixture_dir(fixture);
  if (std::filesystem::exists(from / "model.safetensors")) return copy_fixture(fixture, dir);
  std::filesystem::copy_file(from / "config.json", dir / "config.json");
  const std::string index = "model.safetensors.index.json";
  std::filesystem::copy_file(from / index, dir / index);
  const nlohmann::json map = read_json(from / index)["weight_map"];
  for (const auto& [name, shard] : map.items())
    if (!std::filesystem::exists(dir / shard.get<std::string>()))
      std::filesystem::copy_file(from / shard.get<std::string>(), dir / shard.get<std::string>());
}

// A copy of a fixture (gpt2-f32 unless named) with `change` applied to its directory.
class BrokenModel {
 public:
  template <typename F>
  explicit BrokenModel(F change, const std::string& fixture = "gpt2-f32") {
    copy_model(fixture, dir_.path());
    change(dir_.path());
  }
  std::string path() const { return dir_.path().string(); }

 private:
  TempDir dir_;
};

inline void edit_config(const std::filesystem::path& dir, const std::string& key, const nlohmann::json& value) {
  auto config = read_json(dir / "config.json");
  config[key] = value;
  write_file(dir / "config.json", config.dump());
}

}   // namespace glassbox::test
