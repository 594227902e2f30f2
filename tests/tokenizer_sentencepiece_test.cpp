// SentencePiece-style tokenizer.json pipelines (the text token representation): the model's
// byte_fallback / unk_token / fuse_unk, the decoder chain's ByteFallback on bytes that are not
// UTF-8, and streaming decoding, which must give the whole decode piece by piece. The fixtures'
// ids and decodes are checked in tokenizer_json_fixtures_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "glassbox/tokenizer.h"
#include "test_util.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

using nlohmann::json;

const Tokenizer& sp_fixture(const std::string& name) {
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end()) {
    const auto path = test::fixture_dir("tokenizer-json/" + name + "/tokenizer.json");
    it = loaded.emplace(name, Tokenizer::from_tokenizer_json(test::read_file(path), path.string())).first;
  }
  return it->second;
}

// A Llama 2-form file over a tiny vocabulary, without byte_fallback: characters it lacks are unk.
std::string unk_tokenizer_json(bool fuse_unk, bool with_unk = true) {
  json doc = {
      {"added_tokens", json::array({{{"id", 0},
                                     {"content", "<unk>"},
                                     {"single_word", false},
                                     {"lstrip", false},
                                     {"rstrip", false},
                                     {"normalized", false},
                                     {"special", true}}})},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\u2581"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"unk_token", with_unk ? json("<unk>") : json(nullptr)},
        {"fuse_unk", fuse_unk},
        {"byte_fallback", false},
        {"vocab", {{"<unk>", 0}, {"\u2581", 1}, {"a", 2}, {"b", 3}, {"\u2581a", 4}}},
        {"merges", json::array({"\u2581 a"})}}},
  };
  return doc.dump();
}

TEST(TokenizerSentencePiece, UnknownCharactersAreUnkFusedOrNot) {
  const auto fused = Tokenizer::from_tokenizer_json(unk_tokenizer_json(true));
  const auto unfused = Tokenizer::from_tokenizer_json(unk_tokenizer_json(false));
  const auto dropped = Tokenizer::from_tokenizer_json(unk_tokenizer_json(true, false));
  EXPECT_EQ(fused.encode("a\u00e9\u00e8b"), (std::vector<std::int32_t>{4, 0, 3}));
  EXPECT_EQ(unfused.encode("a\u00e9\u00e8b"), (std::vector<std::int32_t>{4, 0, 0, 3}));
  // No unk_token: the library's BPE leaves the character out.
  EXPECT_EQ(dropped.encode("a\u00e9\u00e8b"), (std::vector<std::int32_t>{4, 3}));
  EXPECT_EQ(fused.decode(std::vector<std::int32_t>{4, 0, 3}), "a<unk>b");
  EXPECT_EQ(fused.token_bytes(4), " a");
}

// A pair merged twice in model.merges: the library's merge map keeps the last rank (a HashMap
// collected from the list, models/bpe/model.rs), so "b c" (rank 1) goes before "a b" (rank 2).
TEST(TokenizerSentencePiece, ADuplicateMergeKeepsItsLastRank) {
  json doc = json::parse(unk_tokenizer_json(true));
  doc["normalizer"] = nullptr;
  doc["model"]["vocab"] = {{"<unk>", 0}, {"a", 1}, {"b", 2}, {"c", 3}, {"ab", 4}, {"bc", 5}};
  doc["model"]["merges"] = {"a b", "b c", "a b"};
  EXPECT_EQ(Tokenizer::from_tokenizer_json(doc.dump()).encode("abc"), (std::vector<std::int32_t>{1, 5}));
  doc["model"]["merges"] = {"a b", "b c"};
  EXPECT_EQ(Tokenizer::from_tokenizer_json(doc.dump()).encode("abc"), (std::vector<std::int32_t>{4, 3}));
}

std::string stream(const Tokenizer& t, const std::vector<std::int32_t>& ids);

// A file without ByteLevel, cut into words by WhitespaceSplit, with this model and decoder.
std::string words_tokenizer_json(const json& model, const json& decoder) {
  return json{
      {"added_tokens", json::array()}, {"normalizer", nullptr}, {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
      {"post_processor", nullptr},     {"decoder", decoder},    {"model", model}}
      .dump();
}

// end_of_word_suffix on each word's last character, merges over it, and the BPEDecoder turning
// it back into spaces (models/bpe/model.rs merge_word, decoders/bpe.rs).
TEST(TokenizerSentencePiece, EndOfWordSuffix) {
  const json model = {{"type", "BPE"},
                      {"unk_token", "<unk>"},
                      {"end_of_word_suffix", "</w>"},
                      {"vocab",
                       {{"<unk>", 0},
                        {"a", 1},
                        {"b", 2},
                        {"c", 3},
                        {"a</w>", 4},
                        {"b</w>", 5},
                        {"c</w>", 6},
                        {"ab</w>", 7},
                        {"ab", 8}}},
                      {"merges", {"a b</w>", "a b"}}};
  const auto t =
      Tokenizer::from_tokenizer_json(words_tokenizer_json(model, {{"type", "BPEDecoder"}, {"suffix", "</w>"}}));
  const auto ids = t.encode("ab ba abc");
  EXPECT_EQ(ids, (std::vector<std::int32_t>{7, 2, 4, 8, 6}));
  EXPECT_EQ(t.decode(ids), "ab ba abc");
  EXPECT_EQ(stream(t, ids), "ab ba abc");
  EXPECT_EQ(t.token_bytes(7), "ab ");
}

// continuing_subword_prefix on every character but a word's first; a merge's token is a + b
// without b's prefix. No decoder: the library joins the tokens with spaces.
TEST(TokenizerSentencePiece, ContinuingSubwordPrefix) {
  const json model = {{"type", "BPE"},
                      {"unk_token", "<unk>"},
                      {"continuing_subword_prefix", "##"},
                      {"vocab", {{"<unk>", 0}, {"a", 1}, {"##b", 2}, {"##c", 3}, {"ab", 4}, {"b", 5}, {"##a", 6}}},
                      {"merges", {"a ##b"}}};
  const auto t = Tokenizer::from_tokenizer_json(words_tokenizer_json(model, nullptr));
  const auto ids = t.encode("ab abc ba bx");
  EXPECT_EQ(ids, (std::vector<std::int32_t>{4, 4, 3, 5, 6, 5, 0}));
  EXPECT_EQ(t.decode(std::vector<std::int32_t>{4, 3}), "ab ##c");
  EXPECT_EQ(stream(t, ids), t.decode(ids));
}

TEST(TokenizerSentencePiece, ByteFallbackRunsThatAreNotUtf8GiveOneReplacementPerToken) {
  const Tokenizer& t = sp_fixture("sp-prepend-tiny");
  const auto ids = t.encode("\u4f60");   // 你: E4 BD A0, three fallback bytes after "▁"
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(t.token_bytes(ids[1]), "\xE4");
  EXPECT_EQ(t.decode(ids), "\u4f60");
  // E4 BD without its last byte, then a word: the run is not UTF-8, so each byte token is one
  // U+FFFD (byte_fallback.rs), not one for the whole incomplete sequence.
  std::vector<std::int32_t> cut = {ids[1], ids[2]};
  for (std::int32_t id : t.encode("a")) cut.push_back(id);   // "▁a"
  EXPECT_EQ(t.decode(cut), "\uFFFD\uFFFD a");
  // Valid bytes inside an invalid run are replaced too: E4 BD A0 BD.
  EXPECT_EQ(t.decode(std::vector<std::int32_t>{ids[1], ids[2], ids[3], ids[2]}), "\uFFFD\uFFFD\uFFFD\uFFFD");
}

// What a generation loop shows: each push's text, joined, then finish().
std::string stream(const Tokenizer& t, const std::vector<std::int32_t>& ids) {
  StreamingDecoder decoder(t);
  std::string text;
  for (std::int32_t id : ids) {
    const std::string piece = decoder.push(id);
    EXPECT_TRUE(unicode::is_valid_utf8(piece)) << "token " << id;
    text += piece;
  }
  return text + decoder.finish();
}

TEST(TokenizerSentencePiece, StreamingGivesTheWholeDecode) {
  int checked = 0;
  for (const char* name : {"sp-prepend-tiny", "sp-metaspace-tiny", "sp-metaspace-split-tiny"}) {
    const Tokenizer& t = sp_fixture(name);
    const json expected = test::read_json(test::fixture_dir(std::string("tokenizer-json/") + name + "/expected.json"));
    for (const char* list : {"ordinary", "allow_special"})
      for (const json& c : expected[list]) {
        const auto ids = c["ids"].get<std::vector<std::int32_t>>();
        EXPECT_EQ(stream(t, ids), t.decode(ids)) << name << " " << c["name"].get<std::string>();
        ++checked;
      }
  }
  EXPECT_GT(checked, 1500);
}

TEST(TokenizerSentencePiece, StreamingHoldsByteRunsUntilTheyEnd) {
  const Tokenizer& t = sp_fixture("sp-metaspace-split-tiny");
  const auto ids = t.encode("a \u4f60 b");
  StreamingDecoder decoder(t);
  std::vector<std::string> out;
  for (std::int32_t id : ids) out.push_back(decoder.push(id));
  out.push_back(decoder.finish());
  // The fallback bytes of 你 come out together, with the token after them.
  std::string joined;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (t.token_bytes(ids[i]).size() == 1 && static_cast<unsigned char>(t.token_bytes(ids[i])[0]) >= 0x80) {
      EXPECT_EQ(out[i], "") << "token " << i;
    }
    joined += out[i];
  }
  joined += out.back();
  EXPECT_EQ(joined, "a \u4f60 b");
  // A run cut short at the end: one U+FFFD per byte token, as the whole decode gives.
  const std::vector<std::int32_t> cut(ids.begin(), ids.begin() + 4);
  EXPECT_EQ(stream(t, cut), t.decode(cut));
  EXPECT_NE(t.decode(cut).find("\uFFFD"), std::string::npos);
}

}   // namespace
}   // namespace glassbox
