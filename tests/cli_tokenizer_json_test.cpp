// tokenizer.json through the CLI (`glassbox tokenize -m DIR`): a SentencePiece-style directory
// gives the fixture's ids and decodes back; a bad file is one line naming the file and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "test_util.h"

namespace glassbox {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// The ids as the CLI prints them: [1,2,3]
std::string printed(const json& ids) { return ids.dump() + "\n"; }

TEST(CliTokenizerJson, SentencePieceDirectoryGivesTheFixturesIds) {
  const std::string dir = test::fixture_dir("tokenizer-json/sp-metaspace-tiny").string();
  const json expected = test::read_json(test::fixture_dir("tokenizer-json/sp-metaspace-tiny/expected.json"));
  int checked = 0;
  for (const json& c : expected["ordinary"]) {
    const std::string text = c["text"].get<std::string>();
    if (text.empty() || c["name"].get<std::string>().rfind("prose/", 0) != 0) continue;
    const auto r = test::run_cli({"tokenize", "-m", dir}, text);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, printed(c["ids"])) << c["name"];
    const auto back = test::run_cli({"detokenize", "-m", dir}, c["ids"].dump());
    ASSERT_EQ(back.exit_code, 0) << back.err;
    EXPECT_EQ(back.out, c["decode"].get<std::string>()) << c["name"];
    ++checked;
  }
  EXPECT_GE(checked, 5);
  const json& special = expected["allow_special"][0];
  const auto r = test::run_cli({"tokenize", "-m", dir, "--allow-special"}, special["text"].get<std::string>());
  EXPECT_EQ(r.out, printed(special["ids"])) << r.err;
}

TEST(CliTokenizerJson, BadFilesAreOneLineErrors) {
  const std::string good = test::read_file(test::fixture_dir("tokenizer-json/sp-metaspace-tiny/tokenizer.json"));
  const auto error_for = [](const std::string& file) {
    test::TempDir dir;
    test::write_file(dir.path() / "tokenizer.json", file);
    const auto r = test::run_cli({"tokenize", "-m", dir.path().string()}, "Hello");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err.find((dir.path() / "tokenizer.json").string() + ": "), r.err.find("error: ") + 7) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    return r.err;
  };
  json doc = json::parse(good);
  doc["pre_tokenizer"] = {{"type", "Foo"}};
  EXPECT_NE(error_for(doc.dump()).find(R"(unknown pre_tokenizer type "Foo")"), std::string::npos);
  doc = json::parse(good);
  doc["normalizer"] = {{"type", "Bar"}};
  EXPECT_NE(error_for(doc.dump()).find(R"(unknown normalizer type "Bar")"), std::string::npos);
  doc = json::parse(good);
  doc["model"]["merges"][0] = "\u2581 zzz";
  EXPECT_NE(error_for(doc.dump()).find(R"(names "zzz", which is not in model.vocab)"), std::string::npos);
  EXPECT_NE(error_for(good.substr(0, good.size() / 2)).find("not valid JSON"), std::string::npos);
}

}   // namespace
}   // namespace glassbox
