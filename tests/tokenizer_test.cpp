// The GPT-2 tokenizer against tiktoken (tests/fixtures/tokenizer/cases.json, written by
// scripts/make_tokenizer_fixtures.mjs from npm tiktoken), plus round trips, streaming decode,
// bad input, and the BPE trainer.
#include <gtest/gtest.h>

#include <random>

#include "tokenizer/bpe.h"
#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "tokenizer/pretokenizer.h"
#include "test_util.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

const Tokenizer& gpt2() {
  static const Tokenizer t = Tokenizer::load(test::fixture_dir("tokenizer/gpt2"));
  return t;
}

const nlohmann::json& cases() {
  static const nlohmann::json c = test::read_json(test::fixture_dir("tokenizer/cases.json"));
  return c;
}

TEST(Tokenizer, LoadsGpt2Vocabulary) {
  EXPECT_EQ(gpt2().vocab_size(), 50257);
  EXPECT_EQ(gpt2().special_token("<|endoftext|>"), 50256);
  EXPECT_EQ(gpt2().token_bytes(464), "The");
  EXPECT_EQ(gpt2().token_bytes(220), " ");
}

TEST(Tokenizer, MatchesTiktokenOnEveryCase) {
  int checked = 0;
  for (const auto& c : cases()["ordinary"]) {
    const auto text = c["text"].get<std::string>();
    EXPECT_EQ(gpt2().encode(text), c["ids"].get<std::vector<std::int32_t>>())
        << c["kind"].get<std::string>() << " / " << c["name"].get<std::string>() << ": \"" << text << "\"";
    ++checked;
  }
  std::cout << "[ tiktoken ] " << checked << " ordinary cases\n";
  EXPECT_GT(checked, 300);
}

TEST(Tokenizer, MatchesTiktokenWithSpecialTokensAllowed) {
  int checked = 0;
  for (const auto& c : cases()["allow_special"]) {
    const auto text = c["text"].get<std::string>();
    EXPECT_EQ(gpt2().encode(text, /*allow_special=*/true), c["ids"].get<std::vector<std::int32_t>>()) << text;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(Tokenizer, EndOfTextIsOrdinaryTextUnlessAllowed) {
  const std::string text = "a<|endoftext|>b";
  const auto ordinary = gpt2().encode(text);
  EXPECT_EQ(std::count(ordinary.begin(), ordinary.end(), 50256), 0);
  EXPECT_EQ(gpt2().decode(ordinary), text);
  const auto special = gpt2().encode(text, true);
  EXPECT_EQ(special, (std::vector<std::int32_t>{64, 50256, 65}));
}

// A masked LM's <|mask|> takes the spaces written before it, as RoBERTa's <mask> does: it stands
// for a whole token, leading space included. Other special tokens leave the text alone (tiktoken).
TEST(Tokenizer, SpacesBeforeAMaskBelongToIt) {
  auto vocab = test::read_json(test::fixture_dir("tokenizer/gpt2/vocab.json"));
  vocab[std::string(kMaskToken)] = 50257;
  const Tokenizer tok =
      Tokenizer::from_strings(vocab.dump(), test::read_file(test::fixture_dir("tokenizer/gpt2/merges.txt")));
  const auto join = [](std::vector<std::int32_t> a, std::vector<std::int32_t> b, std::vector<std::int32_t> c) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  EXPECT_EQ(tok.encode("The jury <|mask|> the river.", true),
            join(tok.encode("The jury"), {50257}, tok.encode(" the river.")));
  EXPECT_EQ(tok.encode("a   <|mask|>", true), join(tok.encode("a"), {50257}, {}));
  EXPECT_EQ(tok.encode(" <|mask|><|mask|>x", true), (std::vector<std::int32_t>{50257, 50257, tok.encode("x")[0]}));
  EXPECT_EQ(tok.encode("a\n<|mask|>", true), join(tok.encode("a\n"), {50257}, {}));   // only spaces
  EXPECT_EQ(tok.encode("a <|endoftext|>", true), join(tok.encode("a "), {50256}, {}));
  const auto ordinary = tok.encode("a <|mask|>");   // not allowed: text, spaces and all
  EXPECT_EQ(std::count(ordinary.begin(), ordinary.end(), 50257), 0);
  EXPECT_EQ(tok.decode(ordinary), "a <|mask|>");
}

TEST(Tokenizer, DecodeInvertsEncodeOnTheCases) {
  for (const auto& c : cases()["ordinary"]) {
    const auto text = c["text"].get<std::string>();
    EXPECT_EQ(gpt2().decode(gpt2().encode(text)), text);
  }
}

// Random valid UTF-8 strings, biased towards the characters the pre-tokenizer treats specially.
std::string random_text(std::mt19937& rng, int length) {
  static const std::vector<char32_t> interesting = {
      ' ',    ' ',    '\n',   '\t',   '\r',  '\'',    's',     'l',    'A',    '1',    '!',    0xA0,   0x85,  0xFEFF,
      0x2028, 0x3000, 0x200B, 0x200D, 0x301, 0x1F600, 0x1F1FA, 0x4E00, 0x0939, 0x093F, 0x0661, 0x00BD, 0x2160};
  std::string s;
  for (int i = 0; i < length; ++i) {
    char32_t cp;
    switch (rng() % 3) {
      case 0:
        cp = interesting[rng() % interesting.size()];
        break;
      case 1:
        cp = 0x20 + rng() % 0x5F;
        break;
      default:
        do cp = rng() % 0x110000;
        while (cp >= 0xD800 && cp <= 0xDFFF);
    }
    unicode::append_utf8(s, cp);
  }
  return s;
}

TEST(Tokenizer, RoundTripsRandomUnicode) {
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const std::string text = random_text(rng, 1 + rng() % 40);
    ASSERT_EQ(gpt2().decode(gpt2().encode(text)), text);
  }
}

TEST(Tokenizer, RejectsInvalidUtf8WithTheOffset) {
  for (const std::string& bad : {std::string("ab\xff"), std::string("\xc3"), std::string("x\xed\xa0\x80"),
                                 std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80"), std::string("a\x80")}) {
    EXPECT_THROW(gpt2().encode(bad), InvalidArgument) << bad.size();
  }
  try {
    gpt2().encode("ab\xff");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "text is not valid UTF-8 at byte 2");
  }
  // Random bytes: an error or ids, never a crash.
  std::mt19937 rng(9);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(1 + rng() % 16, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng());
    try {
      EXPECT_EQ(gpt2().decode(gpt2().encode(bytes)), bytes);
    } catch (const InvalidArgument&) {
    }
  }
}

TEST(Tokenizer, DecodeReplacesInvalidBytesAndRejectsBadIds) {
  // Token 123 is the single byte 0xBF, a lone continuation byte.
  EXPECT_EQ(gpt2().token_bytes(123), "\xbf");
  EXPECT_EQ(gpt2().decode(std::vector<std::int32_t>{64, 123, 65}),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_THROW(gpt2().decode(std::vector<std::int32_t>{50257}), InvalidArgument);
  EXPECT_THROW(gpt2().decode(std::vector<std::int32_t>{-1}), InvalidArgument);
}

TEST(Tokenizer, LongRunsOfOneCharacter) {
  // 100k identical letters form one piece: the heap merge keeps this O(n log n).
  const std::string long_word(100000, 'a');
  const auto ids = gpt2().encode(long_word);
  EXPECT_EQ(gpt2().decode(ids), long_word);
  EXPECT_LE(ids.size(), 100000u / 4);   // merged at least into 4-letter tokens
  std::string spaces(50000, ' ');
  EXPECT_EQ(gpt2().decode(gpt2().encode(spaces + "x")), spaces + "x");
}

TEST(Bpe, HeapAndScanAgree) {
  // Random merge tables over a 4-symbol alphabet (many equal pairs, so many ties and overlapping
  // candidates), random sequences: both strategies must give the same ids.
  std::mt19937 rng(3);
  for (int table = 0; table < 50; ++table) {
    MergeTable merges;
    std::int32_t next_id = 4;
    for (int rank = 0; rank < 30; ++rank) {
      const auto l = static_cast<std::int32_t>(rng() % next_id), r = static_cast<std::int32_t>(rng() % next_id);
      if (!merges.find(l, r)) merges.add_first(l, r, {rank, next_id++});
    }
    for (int i = 0; i < 40; ++i) {
      std::vector<std::int32_t> a(1 + rng() % 400);
      for (auto& x : a) x = static_cast<std::int32_t>(rng() % 4);
      std::vector<std::int32_t> b = a;
      bpe_merge_scan(a, merges);
      bpe_merge_heap(b, merges);
      ASSERT_EQ(a, b) << "table " << table << " sequence " << i;
    }
  }
}

TEST(StreamingDecoder, EmitsOnlyWholeCharacters) {
  const std::string text = "Hi 👨‍👩‍👧 café 日本語 🇺🇸!";
  const auto ids = gpt2().encode(text);
  StreamingDecoder decoder(gpt2());
  std::string streamed;
  for (std::int32_t id : ids) {
    const std::string piece = decoder.push(id);
    EXPECT_TRUE(unicode::is_valid_utf8(piece)) << "token " << id;
    streamed += piece;
  }
  streamed += decoder.finish();
  EXPECT_EQ(streamed, text);
  // An emoji's bytes arrive over several tokens: nothing is emitted until the last one.
  const auto emoji = gpt2().encode("🦙");
  ASSERT_GT(emoji.size(), 1u);
  StreamingDecoder d2(gpt2());
  for (std::size_t i = 0; i + 1 < emoji.size(); ++i) EXPECT_EQ(d2.push(emoji[i]), "");
  EXPECT_EQ(d2.push(emoji.back()), "🦙");
  // An incomplete character at the end becomes U+FFFD.
  StreamingDecoder d3(gpt2());
  EXPECT_EQ(d3.push(emoji[0]), "");
  EXPECT_EQ(d3.finish(), "\xef\xbf\xbd");
}

TEST(Pretokenizer, FollowsGpt2Pattern) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(pretokenize("Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(pretokenize("it's   x"), (V{"it", "'s", "  ", " x"}));
  EXPECT_EQ(pretokenize("a\n\nb"), (V{"a", "\n", "\n", "b"}));
  EXPECT_EQ(pretokenize("x  "), (V{"x", "  "}));
  EXPECT_EQ(pretokenize("I'M 42!?"), (V{"I", "'", "M", " 42", "!?"}));
  EXPECT_EQ(pretokenize(" 'll"), (V{" '", "ll"}));
  EXPECT_EQ(pretokenize(""), V{});
}

TEST(TokenizerTrainer, LearnsFrequentWordsAndRoundTrips) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the cat sat on the mat. the dog ate the hat! ";
  text += "rare words: zyzzyva, quixotic, ñandú 🐈";
  TokenizerTrainingOptions options;
  options.vocab_size = 300;
  const TokenizerFiles files = train_tokenizer(text, options);
  const Tokenizer t = Tokenizer::from_strings(files.vocab_json, files.merges_txt);
  EXPECT_EQ(t.vocab_size(), 300);
  EXPECT_EQ(t.special_token("<|endoftext|>"), 299);
  EXPECT_EQ(t.encode(" the").size(), 1u);   // the most frequent piece became one token
  EXPECT_EQ(t.encode(" cat").size(), 1u);
  EXPECT_EQ(t.decode(t.encode(text)), text);
  EXPECT_LT(t.encode(text).size(), text.size() / 3);
  // Deterministic: the same text and options give the same files.
  const TokenizerFiles again = train_tokenizer(text, options);
  EXPECT_EQ(again.vocab_json, files.vocab_json);
  EXPECT_EQ(again.merges_txt, files.merges_txt);
  EXPECT_EQ(files.merges_txt.substr(0, 14), "#version: 0.2\n");
}

TEST(TokenizerTrainer, SavesFilesTheLoaderReads) {
  TokenizerTrainingOptions options;
  options.vocab_size = 260;
  const auto files = train_tokenizer("aaaa bbbb aaaa bbbb aaaa", options);
  test::TempDir dir;
  save_tokenizer(files, dir.path() / "tok");
  const Tokenizer t = Tokenizer::load(dir.path() / "tok");
  EXPECT_EQ(t.vocab_size(), 260);
  EXPECT_EQ(t.decode(t.encode("aaaa bbbb")), "aaaa bbbb");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "tok" / "vocab.json.tmp"));
}

TEST(TokenizerTrainer, RejectsBadOptions) {
  TokenizerTrainingOptions options;
  options.vocab_size = 100;
  EXPECT_THROW(train_tokenizer("abc", options), InvalidArgument);
  options.vocab_size = 300;
  EXPECT_THROW(train_tokenizer("ab\xff", options), InvalidArgument);
  options.special_tokens = {"END"};
  EXPECT_THROW(train_tokenizer("abc", options), InvalidArgument);
}

TEST(TokenizerFiles, BadFilesAreClearErrors) {
  auto error = [](const std::string& vocab, const std::string& merges) -> std::string {
    try {
      Tokenizer::from_strings(vocab, merges);
    } catch (const ModelFormatError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_NE(error("[1]", "").find("vocab.json: must be a non-empty JSON object"), std::string::npos);
  EXPECT_NE(error("{", "").find("vocab.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error(R"({"a": 5})", "").find("ids must be 0..0"), std::string::npos);
  EXPECT_NE(error(R"({"a": 0, "b": "1"})", "").find(R"(token "b" has id "1"; ids must be integers)"),
            std::string::npos);
  EXPECT_NE(error(R"({"a": 0, "b": 1.5})", "").find(R"(token "b" has id 1.5)"), std::string::npos);
  EXPECT_NE(error(R"({"a": {"b": 1}})", "").find(R"(token "a" has id an object)"), std::string::npos);
  EXPECT_NE(error(R"({"a": -1})", "").find(R"(token "a" has id -1)"), std::string::npos);
  EXPECT_NE(error(R"({"a": 0, "a": 1})", "").find(R"(token "a" is given twice)"), std::string::npos);
  EXPECT_NE(error(R"({"a": 0, "b": 0})", "").find("id 0 is given to two tokens"), std::string::npos);
  EXPECT_NE(error("{}", "").find("vocab.json: must be a non-empty JSON object"), std::string::npos);
  EXPECT_NE(error("7", "").find("vocab.json: must be a non-empty JSON object"), std::string::npos);
  EXPECT_NE(error(R"({"a": 0} x)", "").find("vocab.json: not valid JSON"), std::string::npos);
  EXPECT_NE(error(R"({"a": 0})", "").find("no token for the single byte 0"), std::string::npos);
  const auto files = [] {
    TokenizerTrainingOptions o;
    o.vocab_size = 258;
    return train_tokenizer("abab", o);
  }();
  EXPECT_EQ(error(files.vocab_json, files.merges_txt), "(no error)");
  EXPECT_NE(error(files.vocab_json, "#version: 0.2\na b c\n").find("merges.txt: line 2"), std::string::npos);
  EXPECT_NE(error(files.vocab_json, "#version: 0.2\nx y\n").find("not in the vocabulary"), std::string::npos);
}

}   // namespace
}   // namespace glassbox
