// Tokenizers made from tokenizer.json: GPT-2's files written as tokenizer.json give the ids of the
// vocab.json + merges.txt path (and of tiktoken, tests/fixtures/tokenizer/cases.json); the regex
// engine against GPT-2's hand-written matcher, and its step budget; NFC; the Split behaviors; bad
// files. The fixtures of every pipeline (real files included) are tokenizer_json_fixtures_test.cpp's.
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "test_util.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/regex.h"

namespace glassbox {
namespace {

using nlohmann::json;

const nlohmann::json& gpt2_cases() {
  static const json c = test::read_json(test::fixture_dir("tokenizer/cases.json"));
  return c;
}

const Tokenizer& gpt2_files() {
  static const Tokenizer t = Tokenizer::load(test::fixture_dir("tokenizer/gpt2"));
  return t;
}

// GPT-2's tokenizer.json as the hub's "gpt2" repository has it, made from the fixture's
// vocab.json and merges.txt; `edit` changes the document before it is written out.
std::string gpt2_tokenizer_json(const std::function<void(json&)>& edit = {}) {
  json doc = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", json::array({{{"id", 50256},
                                     {"content", "<|endoftext|>"},
                                     {"single_word", false},
                                     {"lstrip", false},
                                     {"rstrip", false},
                                     {"normalized", true},
                                     {"special", true}}})},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor",
       {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
  };
  json merges = json::array();
  const std::string text = test::read_file(test::fixture_dir("tokenizer/gpt2/merges.txt"));
  std::size_t pos = 0;
  for (std::size_t end; (end = text.find('\n', pos)) != std::string::npos || pos < text.size(); pos = end + 1) {
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (!line.empty() && !line.starts_with("#version")) merges.push_back(line);
  }
  doc["model"] = {{"type", "BPE"},
                  {"dropout", nullptr},
                  {"unk_token", nullptr},
                  {"continuing_subword_prefix", ""},
                  {"end_of_word_suffix", ""},
                  {"fuse_unk", false},
                  {"byte_fallback", false},
                  {"vocab", test::read_json(test::fixture_dir("tokenizer/gpt2/vocab.json"))},
                  {"merges", merges}};
  if (edit) edit(doc);
  return doc.dump();
}

std::string load_error(const std::string& text);

const Tokenizer& gpt2_json() {
  static const Tokenizer t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json());
  return t;
}

TEST(TokenizerJson, Gpt2MatchesTheVocabJsonPathAndTiktoken) {
  EXPECT_EQ(gpt2_json().vocab_size(), 50257);
  EXPECT_EQ(gpt2_json().special_token("<|endoftext|>"), 50256);
  int checked = 0;
  for (const char* list : {"ordinary", "allow_special"}) {
    const bool allow = std::string(list) == "allow_special";
    for (const auto& c : gpt2_cases()[list]) {
      const auto text = c["text"].get<std::string>();
      const auto ids = gpt2_json().encode(text, allow);
      EXPECT_EQ(ids, gpt2_files().encode(text, allow)) << list << " / " << c["name"].get<std::string>();
      EXPECT_EQ(ids, c["ids"].get<std::vector<std::int32_t>>()) << list << " / " << c["name"].get<std::string>();
      EXPECT_EQ(gpt2_json().decode(ids), text);
      ++checked;
    }
  }
  std::cout << "[ gpt2 tokenizer.json ] " << checked << " cases\n";
  EXPECT_GT(checked, 300);
}

TEST(TokenizerJson, MergesAsPairsAndGpt2PatternAsSplitGiveTheSameIds) {
  // Newer files write merges as ["a", "b"] and the pattern as a Split before a regex-less ByteLevel.
  const auto t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json([](json& doc) {
    for (auto& m : doc["model"]["merges"]) {
      const std::string line = m.get<std::string>();
      m = json::array({line.substr(0, line.find(' ')), line.substr(line.find(' ') + 1)});
    }
    doc["model"]["ignore_merges"] = true;
    doc["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         json::array({{{"type", "Split"},
                       {"pattern",
                        {{"Regex", R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"}}},
                       {"behavior", "Isolated"},
                       {"invert", false}},
                      {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}})}};
  }));
  for (const auto& c : gpt2_cases()["ordinary"])
    EXPECT_EQ(t.encode(c["text"].get<std::string>()), c["ids"].get<std::vector<std::int32_t>>()) << c["name"];
}

TEST(TokenizerJson, LoadPrefersTokenizerJson) {
  test::TempDir dir;
  for (const char* name : {"vocab.json", "merges.txt"})
    std::filesystem::copy_file(test::fixture_dir("tokenizer/gpt2") / name, dir.path() / name);
  EXPECT_EQ(Tokenizer::load(dir.path()).encode("Hello"), (std::vector<std::int32_t>{15496}));
  // add_prefix_space makes "Hello" into " Hello": seen only if tokenizer.json was read.
  std::ofstream(dir.path() / "tokenizer.json")
      << gpt2_tokenizer_json([](json& doc) { doc["pre_tokenizer"]["add_prefix_space"] = true; });
  EXPECT_EQ(Tokenizer::load(dir.path()).encode("Hello"), (std::vector<std::int32_t>{18435}));
}

TEST(TokenizerJson, TemplateProcessingAddsItsTokensWhenAsked) {
  const auto t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json([](json& doc) {
    doc["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [],
         "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [50256], "tokens": ["<|endoftext|>"]}}}]})");
  }));
  EXPECT_EQ(t.encode("Hello"), (std::vector<std::int32_t>{15496}));
  EXPECT_EQ(t.encode("Hello", false, true), (std::vector<std::int32_t>{50256, 15496}));
}

TEST(TokenizerJson, AddedTokensMatchAsTheLibraryDoes) {
  // A non-special added token is always matched (lstrip takes the spaces before it); a special
  // one only with allow_special.
  const auto t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json([](json& doc) {
    doc["added_tokens"].push_back({{"id", 50257},
                                   {"content", "<sep>"},
                                   {"single_word", false},
                                   {"lstrip", true},
                                   {"rstrip", false},
                                   {"normalized", false},
                                   {"special", false}});
  }));
  EXPECT_EQ(t.encode("a  <sep> b"), (std::vector<std::int32_t>{64, 50257, 275}));
  EXPECT_EQ(t.encode("a<|endoftext|>"), (std::vector<std::int32_t>{64, 27, 91, 437, 1659, 5239, 91, 29}));
  EXPECT_EQ(t.encode("a<|endoftext|>", true), (std::vector<std::int32_t>{64, 50256}));
  EXPECT_EQ(t.decode(std::vector<std::int32_t>{64, 50257, 50256}), "a<sep><|endoftext|>");
  // The special ones are those marked so (<sep> is not), as for GPT-2's vocab.json.
  EXPECT_EQ(t.special_ids(), (std::vector<std::int32_t>{50256}));
  EXPECT_EQ(Tokenizer::load(test::fixture_dir("tokenizer/gpt2")).special_ids(), (std::vector<std::int32_t>{50256}));
}

TEST(TokenizerJson, AddedTokensInTheVocabularyAsText) {
  // GPT-NeoX lists its runs of spaces in model.vocab as plain text, not byte-level characters.
  const auto t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json([](json& doc) {
    doc["model"]["vocab"]["  "] = 50257;
    doc["added_tokens"].push_back({{"id", 50257},
                                   {"content", "  "},
                                   {"single_word", false},
                                   {"lstrip", false},
                                   {"rstrip", false},
                                   {"normalized", true},
                                   {"special", false}});
  }));
  EXPECT_EQ(t.encode("a  b"), (std::vector<std::int32_t>{64, 50257, 65}));
  EXPECT_NE(load_error(gpt2_tokenizer_json([](json& doc) {
              doc["model"]["vocab"]["  "] = 50257;
            })).find(R"(model.vocab token "  " is not made of byte-level characters)"),
            std::string::npos);
}

std::vector<std::string> regex_pieces(const Regex& re, std::string_view text) {
  std::vector<std::string> out;
  for (const auto& m : re.find_all(text)) out.emplace_back(text.substr(m.start, m.end - m.start));
  return out;
}

TEST(TokenizerJsonRegex, Gpt2PatternAgreesWithTheHandWrittenMatcher) {
  const Regex re(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)");
  int checked = 0;
  for (const auto& c : gpt2_cases()["ordinary"]) {
    const auto text = c["text"].get<std::string>();
    std::vector<std::string> expected;
    for (auto p : pretokenize(text)) expected.emplace_back(p);
    EXPECT_EQ(regex_pieces(re, text), expected) << c["name"];
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

TEST(TokenizerJsonRegex, Llama3AndQwen2MatchersAgreeWithTheEngine) {
  std::vector<std::string> texts;
  for (const auto& c : gpt2_cases()["ordinary"]) texts.push_back(c["text"].get<std::string>());
  for (const char* fixture : {"llama3", "qwen3"}) {
    // (held by name: a range-for over a member of the temporary would outlive it)
    const json expected =
        test::read_json(test::fixture_dir(std::string("tokenizer-json/") + fixture + "/expected.json"));
    for (const auto& c : expected["ordinary"]) texts.push_back(c["text"].get<std::string>());
  }
  // Random strings over the characters where the alternatives meet.
  const std::vector<std::string> alphabet = {"a", "Z",      "\u00e9",     "\u4f60", "1",  "\u00bd", "\u0663",
                                             " ", "  ",     "\t",         "\r",     "\n", "\u00a0", "\u3000",
                                             "'", "s",      "S",          "ll",     "RE", "\u017f", ".",
                                             "!", "\u0301", "\U0001F600", "-",      "\"", "\u200d"};
  std::mt19937 rng(40);
  for (int i = 0; i < 3000; ++i) {
    std::string t;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) t += alphabet[rng() % alphabet.size()];
    texts.push_back(t);
  }
  for (const auto& [pattern, digits] : {std::pair{kLlama3Pattern, 3}, std::pair{kQwen2Pattern, 1}}) {
    const Regex re(pattern);
    for (const std::string& text : texts) {
      std::vector<std::string> hand;
      for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t n = llama3_piece_length(text, pos, digits);
        hand.push_back(text.substr(pos, n));
        pos += n;
      }
      ASSERT_EQ(hand, regex_pieces(re, text)) << "digits " << digits << ": \"" << text << "\"";
    }
  }
  EXPECT_GT(texts.size(), 3000u);
}

TEST(TokenizerJsonRegex, Llama3Constructs) {
  const Regex contractions("(?i:'s|'t|'re|'ve|'m|'ll|'d)");
  EXPECT_EQ(regex_pieces(contractions, "'S 'll 'LL \u017F"), (std::vector<std::string>{"'S", "'ll", "'LL"}));
  EXPECT_EQ(regex_pieces(contractions, "'\u017F"), (std::vector<std::string>{"'\u017F"}));   // long s folds to s
  EXPECT_EQ(regex_pieces(Regex(R"(\p{N}{1,3})"), "12345 6"), (std::vector<std::string>{"123", "45", "6"}));
  EXPECT_EQ(regex_pieces(Regex(R"(\s+(?!\S)|\s+)"), "a   b  "), (std::vector<std::string>{"  ", " ", "  "}));
  EXPECT_EQ(regex_pieces(Regex(R"([^\r\n\p{L}\p{N}]?\p{L}+)"), "\"hello ,world"),
            (std::vector<std::string>{"\"hello", ",world"}));
  EXPECT_EQ(regex_pieces(Regex(R"(\s*[\r\n]+)"), "a \r\n\nb"), (std::vector<std::string>{" \r\n\n"}));
  EXPECT_EQ(regex_pieces(Regex("a(?=b)"), "aab ab"), (std::vector<std::string>{"a", "a"}));
}

TEST(TokenizerJsonRegex, UnsupportedSyntaxIsAnError) {
  for (const char* pattern : {R"(\p{Lu})", "^a", "a*?", "(?<name>a)", "(a", "a)", "[a", "x{2,1}", "(?:)*", R"(\d)"}) {
    EXPECT_THROW(Regex{pattern}, RegexError) << pattern;
  }
  EXPECT_THROW(Regex(std::string(1000, '(') + "a" + std::string(1000, ')')), RegexError);   // deep nesting
  EXPECT_THROW(Regex("((a{1000}){1000}){1000}"), RegexError);
  std::string stacked = "a";
  for (int i = 0; i < 50000; ++i) stacked += "{1}";
  try {
    Regex{stacked};
    ADD_FAILURE() << "50,000 stacked quantifiers compiled";
  } catch (const RegexError& e) {
    EXPECT_NE(std::string(e.what()).find("stacks more than"), std::string::npos) << e.what();
  }   // huge program
  EXPECT_NO_THROW(Regex(std::string(50, '(') + "a" + std::string(50, ')')));
  try {
    Regex re(R"(\p{Lu}+)");
  } catch (const RegexError& e) {
    EXPECT_NE(std::string(e.what()).find(R"(regex "\p{Lu}+")"), std::string::npos) << e.what();
  }
}

// Exponential backtracking ends at the step budget with an error naming the pattern and where.
TEST(TokenizerJsonRegex, HostilePatternsStopAtTheStepBudget) {
  const Regex re("(a|a)*b");
  EXPECT_EQ(re.find_all("aab").size(), 1u);
  const std::string text = std::string(40, 'a') + "c";
  try {
    re.find_all(text);
    ADD_FAILURE() << "(a|a)*b matched 40 a's without running out of steps";
  } catch (const RegexError& e) {
    EXPECT_EQ(std::string(e.what()), R"(regex "(a|a)*b" needs more than 10041000 steps on a 41-byte piece )"
                                     R"((gave up at byte 0))");
  }
  // Through a tokenizer.json: encode fails with the same error (a glassbox::Error).
  const auto t = Tokenizer::from_tokenizer_json(gpt2_tokenizer_json([](json& doc) {
    doc["pre_tokenizer"] = {{"type", "Sequence"},
                            {"pretokenizers",
                             {{{"type", "Split"}, {"pattern", {{"Regex", "(a|a)*b"}}}, {"behavior", "Isolated"}},
                              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
  }));
  EXPECT_EQ(t.decode(t.encode("aab c")), "aab c");
  EXPECT_THROW(t.encode(text), Error);
}

TEST(TokenizerJsonPipeline, SplitBehaviors) {
  // The library's documentation example: "the-final--countdown" split on "-".
  const auto split = [](SplitBehavior b) {
    PreTokenizerStep step{};
    step.kind = PreTokenizerStep::Kind::Split;
    step.regex = std::make_shared<const Regex>("-");
    step.behavior = b;
    Pipeline p;
    p.pre_tokenizers.push_back(step);
    std::vector<std::string> pieces;
    p.pre_tokenize("the-final--countdown", pieces);
    return pieces;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(split(SplitBehavior::Removed), (V{"the", "final", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::Isolated), (V{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::MergedWithPrevious), (V{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split(SplitBehavior::MergedWithNext), (V{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split(SplitBehavior::Contiguous), (V{"the", "-", "final", "--", "countdown"}));
}

TEST(TokenizerJsonPipeline, Digits) {
  PreTokenizerStep step{};
  step.kind = PreTokenizerStep::Kind::Digits;
  Pipeline p;
  p.pre_tokenizers.push_back(step);
  std::vector<std::string> pieces;
  p.pre_tokenize("a123b4", pieces);
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "123", "b", "4"}));
  p.pre_tokenizers[0].individual_digits = true;
  pieces.clear();
  p.pre_tokenize("a12", pieces);
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "1", "2"}));
}

// whitespace.rs's \w+|[^\w\s]+ (Unicode \w), the matches kept: leftmost-first, each run greedy.
TEST(TokenizerJsonPipeline, Whitespace) {
  PreTokenizerStep step{};
  step.kind = PreTokenizerStep::Kind::Whitespace;
  Pipeline p;
  p.pre_tokenizers.push_back(step);
  const auto pieces = [&p](std::string_view text) {
    std::vector<std::string> out;
    p.pre_tokenize(text, out);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(""), V{});
  EXPECT_EQ(pieces(" \t\n\u3000 "), V{});
  EXPECT_EQ(pieces("Hey friend!     How are you?!?"), (V{"Hey", "friend", "!", "How", "are", "you", "?!?"}));
  EXPECT_EQ(pieces("snake_case __init__ (a+b)*c"), (V{"snake_case", "__init__", "(", "a", "+", "b", ")*", "c"}));
  EXPECT_EQ(pieces("na\u00efve \u00dcber-stra\u00dfe"), (V{"na\u00efve", "\u00dcber", "-", "stra\u00dfe"}));
  // A combining mark joins the run it follows, and starts one after a space.
  EXPECT_EQ(pieces("cafe\u0301 \u0301x"), (V{"cafe\u0301", "\u0301x"}));
  EXPECT_EQ(pieces("\u6771\u4eac2024\u5e74\u3001\u0661\u0662"),
            (V{"\u6771\u4eac2024\u5e74", "\u3001", "\u0661\u0662"}));
  // ZWNJ / ZWJ are word characters: they join letters, and split an emoji sequence.
  EXPECT_EQ(pieces("\u0645\u06cc\u200c\u062e a\u200db"), (V{"\u0645\u06cc\u200c\u062e", "a\u200db"}));
  EXPECT_EQ(pieces("\U0001F469\u200d\U0001F4BB"), (V{"\U0001F469", "\u200d", "\U0001F4BB"}));
  // Neither word nor White_Space: U+200B and U+FEFF stay, as pieces of their own kind.
  EXPECT_EQ(pieces("a\u200b\ufeffb\u00a0c\u0085d"), (V{"a", "\u200b\ufeff", "b", "c", "d"}));
  EXPECT_EQ(pieces("\u00b2\u00bd\u2160 \U0001F600\U0001F600!"), (V{"\u00b2\u00bd", "\u2160", "\U0001F600\U0001F600!"}));
}

TEST(TokenizerJsonPipeline, Nfc) {
  const std::vector<NormalizerStep> nfc{{NormalizerStep::Kind::Nfc, "", "", nullptr}};
  EXPECT_EQ(normalize(nfc, "cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(normalize(nfc, "\u212B"), "\u00C5");                 // ANGSTROM SIGN: a singleton
  EXPECT_EQ(normalize(nfc, "q\u0307\u0323"), "q\u0323\u0307");   // canonical order, no composite
  EXPECT_EQ(normalize(nfc, "\u1100\u1161\u11A8"), "\uAC01");     // Hangul jamo compose
  EXPECT_EQ(normalize(nfc, "\u0915\u093C"), "\u0915\u093C");     // U+0958 is excluded from composition
  EXPECT_EQ(normalize(nfc, "e\u0302\u0323"), "\u1EC7");          // reordered, then composed
  EXPECT_EQ(normalize(nfc, "plain ASCII"), "plain ASCII");
}

TEST(TokenizerJsonPipeline, OtherNormalizers) {
  const auto one = [](NormalizerStep::Kind kind, std::string_view text) {
    NormalizerStep step{kind, "", "", nullptr};
    step.strip_left = step.strip_right = true;
    return normalize({step}, text);
  };
  using K = NormalizerStep::Kind;
  EXPECT_EQ(one(K::Nfd, "caf\u00e9"), "cafe\u0301");
  EXPECT_EQ(one(K::Nfd, "\uAC01"), "\u1100\u1161\u11A8");   // Hangul by its algorithm
  EXPECT_EQ(one(K::Nfkc, "\uFB01 x\u00B2 \u2460 \uFF21 \u00A0"), "fi x2 1 A  ");
  EXPECT_EQ(one(K::Nfkc, "\U0001D400"), "A");   // MATHEMATICAL BOLD CAPITAL A
  EXPECT_EQ(one(K::Nfkd, "\uFB01 \u00E9 \u00B2"), "fi e\u0301 2");
  // Each character alone, as Rust's char::to_lowercase: no final sigma, U+0130 -> i + U+0307.
  EXPECT_EQ(one(K::Lowercase, "\u039F\u0394\u039F\u03A3 \u0130 ABC"), "\u03BF\u03B4\u03BF\u03C3 i\u0307 abc");
  EXPECT_EQ(one(K::Strip, "\u3000\u0085 a b\t\n\u00A0"), "a b");
  EXPECT_EQ(one(K::Strip, "\uFEFFa\uFEFF"), "\uFEFFa\uFEFF");   // U+FEFF is not White_Space
}

std::string load_error(const std::string& text) {
  try {
    Tokenizer::from_tokenizer_json(text);
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenizerJson, BadFilesAreClearErrors) {
  EXPECT_NE(load_error("{").find("tokenizer.json: not valid JSON"), std::string::npos);
  EXPECT_NE(load_error("[]").find("tokenizer.json: must be a JSON object"), std::string::npos);
  EXPECT_NE(load_error("{}").find("tokenizer.json: the file has no \"model\""), std::string::npos);
  const auto with = [](const char* key, json value) {
    return load_error(gpt2_tokenizer_json([&](json& doc) { doc[key] = value; }));
  };
  EXPECT_EQ(with("normalizer", {{"type", "Foo"}}), R"(tokenizer.json: unknown normalizer type "Foo")");
  EXPECT_EQ(with("normalizer", {{"type", "Precompiled"}}),
            R"(tokenizer.json: normalizer type "Precompiled" is not supported)");
  EXPECT_EQ(with("pre_tokenizer", {{"type", "Foo"}}), R"(tokenizer.json: unknown pre_tokenizer type "Foo")");
  EXPECT_EQ(with("pre_tokenizer", {{"type", "BertPreTokenizer"}}),
            R"(tokenizer.json: pre_tokenizer type "BertPreTokenizer" is not supported)");
  EXPECT_EQ(with("decoder", {{"type", "WordPiece"}}), R"(tokenizer.json: decoder type "WordPiece" is not supported)");
  EXPECT_EQ(with("decoder", {{"type", "Foo"}}), R"(tokenizer.json: unknown decoder type "Foo")");
  EXPECT_EQ(with("post_processor", {{"type", "Foo"}}), R"(tokenizer.json: unknown post_processor type "Foo")");
  EXPECT_EQ(load_error(gpt2_tokenizer_json([](json& doc) { doc["model"]["type"] = "Foo"; })),
            R"(tokenizer.json: unknown model type "Foo")");
  EXPECT_EQ(load_error(gpt2_tokenizer_json([](json& doc) { doc["model"]["vocab"].erase("!"); })),
            "tokenizer.json: id 0 has no token (ids must be 0..50256)");
  EXPECT_EQ(with("post_processor", {{"type", "BertProcessing"}}),
            R"(tokenizer.json: post_processor type "BertProcessing" is not supported)");
  EXPECT_NE(with("pre_tokenizer", {{"type", "Split"}, {"pattern", {{"Regex", "\\p{Lu}"}}}, {"behavior", "Isolated"}})
                .find("does not support"),
            std::string::npos);
  EXPECT_NE(load_error(gpt2_tokenizer_json([](json& doc) {
              doc["model"]["type"] = "Unigram";
            })).find(R"(model type "Unigram" is not supported)"),
            std::string::npos);
  // Deep nesting, written as text: a json value that deep would recurse in the test itself.
  std::string deep = gpt2_tokenizer_json([](json& doc) { doc["pre_tokenizer"] = "HERE"; });
  std::string nested;
  for (int i = 0; i < 100000; ++i) nested += R"({"type": "Sequence", "pretokenizers": [)";
  nested += R"({"type": "ByteLevel"})";
  for (int i = 0; i < 100000; ++i) nested += "]}";
  deep.replace(deep.find(R"("HERE")"), 6, nested);
  EXPECT_EQ(load_error(deep), "tokenizer.json: nests Sequence components more than 16 deep");
  const std::string unknown = load_error(gpt2_tokenizer_json([](json& doc) { doc["model"]["merges"][5] = "Ġt zzz"; }));
  EXPECT_EQ(unknown, R"(tokenizer.json: model.merges[5] ("Ġt", "zzz") names "zzz", which is not in model.vocab)");
  EXPECT_NE(
      load_error(gpt2_tokenizer_json([](json& doc) { doc["model"]["merges"][0] = "a b c"; })).find("model.merges[0]"),
      std::string::npos);
  EXPECT_NE(load_error(gpt2_tokenizer_json([](json& doc) {
              doc["model"]["vocab"]["x"] = "7";
            })).find(R"(model.vocab token "x" has id "7")"),
            std::string::npos);
}

}   // namespace
}   // namespace glassbox
