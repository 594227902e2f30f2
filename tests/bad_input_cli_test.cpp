// The bad-input table (docs/bad-input.md), the rows of the tokenizer files and of the command
// line's arguments: each bad input, given through the C++ API and the CLI where it can be, fails
// with the fragment its row shows. Beside the rows: what the fixes must not break (a tokenizer
// without merges that needs none, decimal numbers with leading zeros, --force).
#include <gtest/gtest.h>

#include <cmath>
#include <sys/stat.h>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "bad_input_table.h"
#include "test_util.h"
#ifdef GLASSBOX_TEST_TRAINING
#include "glassbox/trainer.h"
#include "glassbox/training_setup.h"
#endif

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::cell;
using test::expect_cli;
using test::expect_cpp;
using test::run_cli;
using test::TempDir;

const fs::path kShipped = GLASSBOX_SHIPPED_MODEL_DIR;   // 8,192 tokens, 7,935 merges

using test::has_cli;

// The CLI refuses these while it reads its arguments: one line, exit status 2 (bad usage).
void expect_cli_usage(const std::string& id, const std::vector<std::string>& args) {
  if (!has_cli()) return;
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << id << ": " << r.err;
  EXPECT_EQ(r.err.rfind("glassbox: error: ", 0), 0u) << id << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << id << ": " << r.err;
  EXPECT_NE(r.err.find(cell(id, test::kCli)), std::string::npos) << id << ": " << r.err;
}

// A tokenizer directory: the shipped model's vocab.json with this merges.txt.
struct TokenizerDir {
  TempDir dir;
  explicit TokenizerDir(const std::string& merges,
                        const std::string& vocab = test::read_file(kShipped / "vocab.json")) {
    test::write_file(dir.path() / "vocab.json", vocab);
    test::write_file(dir.path() / "merges.txt", merges);
  }
  std::string path() const { return dir.path().string(); }
};

std::string shipped_merges() { return test::read_file(kShipped / "merges.txt"); }

TEST(BadInputCli, B35_EmptyMerges) {
  for (const std::string merges : {"", "#version: 0.2\n"}) {
    TokenizerDir t(merges);
    expect_cli("B35", {"tokenize", "-m", t.path()}, "The jury said");
    expect_cpp<ModelFormatError>("B35", [&] { Tokenizer::load(t.path()); });
    expect_cpp<ModelFormatError>("B35",
                                 [&] { Tokenizer::from_strings(test::read_file(kShipped / "vocab.json"), merges); });
  }
}

// A vocabulary of the 256 bytes and <|endoftext|> has no merges, and needs none.
TEST(BadInputCli, B35_NoMergesWhereNoneAreNeeded) {
  const fs::path bytes = test::fixture_dir("gpt2-bytes");
  const Tokenizer t = Tokenizer::from_strings(test::read_file(bytes / "vocab.json"), "");
  EXPECT_EQ(t.encode("ab").size(), 2u);
  EXPECT_EQ(Tokenizer::load(bytes).vocab_size(), 257);
  // A token added whole is only decoded; one that two tokens make needs its merge.
  auto vocab = test::read_json(bytes / "vocab.json");
  vocab["ĠwholeĠtoken"] = 257;
  EXPECT_EQ(Tokenizer::from_strings(vocab.dump(), "").decode(std::vector<std::int32_t>{257}), " whole token");
  vocab["ab"] = 258;
  expect_cpp<ModelFormatError>("B35", [&] { Tokenizer::from_strings(vocab.dump(), ""); });
  EXPECT_NO_THROW(Tokenizer::from_strings(vocab.dump(), "a b\n"));
}

TEST(BadInputCli, B36_MergesCutShort) {
  const std::string merges = shipped_merges();
  TokenizerDir t(merges.substr(0, merges.size() / 2));
  const std::string half = merges.substr(0, merges.rfind('\n', merges.size() / 2) + 1);
  TokenizerDir whole_lines(half);   // cut at a line: every line it has is good, some are missing
  for (const auto* d : {&t, &whole_lines}) {
    expect_cli("B36", {"tokenize", "-m", d->path()}, "The jury said");
    expect_cpp<ModelFormatError>("B36", [&] { Tokenizer::load(d->path()); });
  }
}

TEST(BadInputCli, B37_MergeOfTokensNotInTheVocabulary) {
  TokenizerDir t("#version: 0.2\nq z\n" + shipped_merges().substr(14));
  expect_cli("B37", {"tokenize", "-m", t.path()}, "The jury said");
  expect_cpp<ModelFormatError>("B37", [&] { Tokenizer::load(t.path()); });
}

TEST(BadInputCli, B38_VocabularyWithoutTheBytes) {
  auto vocab = test::read_json(kShipped / "vocab.json");
  vocab.erase("A");   // the byte 0x41: ids then skip one, so give the last token its id
  std::string last;
  for (const auto& [k, v] : vocab.items())
    if (v.get<int>() == 8191) last = k;
  vocab[last] = test::read_json(kShipped / "vocab.json")["A"];
  TokenizerDir t("#version: 0.2\n", vocab.dump());
  expect_cli("B38", {"tokenize", "-m", t.path()}, "The jury said");
  expect_cpp<ModelFormatError>("B38", [&] { Tokenizer::load(t.path()); });
}

TEST(BadInputCli, B39_DuplicateIds) {
  auto vocab = test::read_json(kShipped / "vocab.json");
  vocab["A"] = vocab["B"];
  TokenizerDir t(shipped_merges(), vocab.dump());
  expect_cli("B39", {"tokenize", "-m", t.path()}, "The jury said");
  expect_cpp<ModelFormatError>("B39", [&] { Tokenizer::load(t.path()); });
}

// A 5 MB merges line holding NUL and non-ASCII characters: quoted in part, whole characters,
// the NUL escaped, the message one short line of valid UTF-8.
TEST(BadInputCli, B40_HugeMergesLineInTheMessage) {
  const std::string line = std::string("\xC3\xA9\0", 3) + std::string(5'000'000, 'a') + " b";
  TokenizerDir t(line + "\n");
  auto check = [&](const std::string& message) {
    EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
    EXPECT_FALSE(first_invalid_utf8(message).has_value()) << message;
    EXPECT_NE(message.find("(5000005 bytes)"), std::string::npos) << message;
    EXPECT_EQ(message.find('\0'), std::string::npos);
  };
  expect_cli("B40", {"tokenize", "-m", t.path()}, "The jury said");
  if (has_cli()) check(run_cli({"tokenize", "-m", t.path()}, "x").err);
  expect_cpp<ModelFormatError>("B40", [&] { Tokenizer::load(t.path()); });
  try {
    Tokenizer::load(t.path());
  } catch (const ModelFormatError& e) {
    check(std::string(e.what()));
  }
}

TEST(BadInputCli, QuotedKeepsWholeCharactersAndEscapes) {
  EXPECT_EQ(quote_text("llama"), "\"llama\"");
  EXPECT_EQ(quote_text(std::string("a\0b\"\\\n", 6)), "\"a\\u0000b\\\"\\\\\\n\"");
  EXPECT_EQ(quote_text("ab\xFF"), "\"ab\\xFF\"");
  EXPECT_EQ(quote_text("ll\xC3\xA4ma"), "\"ll\xC3\xA4ma\"");
  EXPECT_EQ(quote_text("\xC3\xA4\xC3\xA4\xC3\xA4", 5), "\"\xC3\xA4\xC3\xA4...\" (6 bytes)");   // not half an ä
}

// -o holding a tokenizer (or a whole model) already: not replaced without --force.
TEST(BadInputCli, B41_TrainTokenizerOverAModel) {
  if (!has_cli()) return;
  TempDir dir;
  const fs::path text = dir.path() / "text.txt", model = dir.path() / "model";
  test::write_file(text, "The jury said the river was high. The mayor said the road was long.\n");
  fs::create_directories(model);
  test::write_file(model / "vocab.json", "{\"kept\": 0}");
  test::write_file(model / "merges.txt", "kept");
  expect_cli("B41", {"train-tokenizer", "--vocab-size", "270", "-o", model.string(), text.string()});
  EXPECT_EQ(test::read_file(model / "vocab.json"), "{\"kept\": 0}");
  EXPECT_EQ(test::read_file(model / "merges.txt"), "kept");
  const auto forced =
      run_cli({"train-tokenizer", "--vocab-size", "270", "-o", model.string(), text.string(), "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(Tokenizer::load(model).vocab_size(), 270);
}

TEST(BadInputCli, B42_NumberNotInDecimal) {
  const std::string m = test::fixture_dir("gpt2-f32").string();
  expect_cli_usage("B42", {"forward", "-m", m, "--tokens", "1", "--lens", "0x10"});
  expect_cli_usage("B42", {"generate", "-m", m, "--tokens", "1", "-n", "0b11"});
  expect_cli_usage("B42", {"generate", "-m", m, "--tokens", "1", "--temperature", "0x1p-1"});
  expect_cli_usage("B42", {"generate", "-m", m, "--tokens", "1", "--top-k", " 5"});
  expect_cli_usage("B42", {"train", "text.txt", "-o", "out", "--steps", "0x10"});
  expect_cli_usage("B42", {"train", "text.txt", "-o", "out", "--lr", "1e-3x"});
  expect_cli_usage("B42", {"evaluate", "-m", m, "--context", "1e3", "text.txt"});
}

// Leading zeros are decimal: --lens 010 shows ten tokens per layer (strtol's base 0 read eight).
TEST(BadInputCli, NumbersWithLeadingZerosAreDecimal) {
  if (!has_cli()) return;
  const std::string m = test::fixture_dir("gpt2-f32").string();
  const auto r = run_cli({"forward", "-m", m, "--tokens", "1,2", "--lens", "010"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lens = nlohmann::json::parse(r.out)["lens"];
  EXPECT_EQ(lens[0][0].size(), 10u);
  const auto a = run_cli({"generate", "-m", m, "--tokens", "1", "-n", "010", "--seed", "+0017", "--top-p", "00.5"});
  const auto b = run_cli({"generate", "-m", m, "--tokens", "1", "-n", "10", "--seed", "17", "--top-p", ".5"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(std::count(a.out.begin(), a.out.end(), ' '), 9) << a.out;   // ten ids
  EXPECT_NE(a.err.find("seed 17,"), std::string::npos) << a.err;
}

TEST(BadInputCli, B43_NegativeSeed) {
  const std::string m = test::fixture_dir("gpt2-f32").string();
  expect_cli_usage("B43", {"generate", "-m", m, "--tokens", "1", "--seed", "-1"});
  if (!has_cli()) return;
  const auto big = run_cli({"generate", "-m", m, "--tokens", "1", "--seed", "18446744073709551616"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("--seed: is out of range"), std::string::npos) << big.err;
}

// Beside the rows: a number too large for its option, empty names, a long argument quoted in part,
// a training text that is not UTF-8.
TEST(BadInputCli, OutOfRangeNumbersAndEmptyNames) {
  if (!has_cli()) return;
  const std::string m = test::fixture_dir("gpt2-f32").string();
  const auto big = run_cli({"generate", "-m", m, "--tokens", "1", "-n", "99999999999"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("--max-tokens: 99999999999 is out of range for this option"), std::string::npos) << big.err;
  const auto no_model = run_cli({"generate", "-m", "", "--tokens", "1"});
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_NE(no_model.err.find("-m needs a model directory, got an empty value"), std::string::npos) << no_model.err;
  const auto no_text = run_cli({"evaluate", "-m", kShipped.string(), ""});
  EXPECT_EQ(no_text.exit_code, 1);
  EXPECT_NE(no_text.err.find("\"\" (an empty name): no such file or folder"), std::string::npos) << no_text.err;
  const auto long_ids = run_cli({"forward", "-m", m, "--tokens", "1,x" + std::string(100'000, 'y')});
  EXPECT_EQ(long_ids.exit_code, 1);
  EXPECT_LT(long_ids.err.size(), 300u);
  EXPECT_NE(long_ids.err.find("yyy...\" (100003 bytes)"), std::string::npos) << long_ids.err.substr(0, 300);
  TempDir dir;   // train-tokenizer names the file that is not UTF-8, and the byte in it
  test::write_file(dir.path() / "a.txt", "good text\n");
  test::write_file(dir.path() / "b.txt", "ab\xFF");
  const auto not_utf8 = run_cli({"train-tokenizer", "-o", (dir.path() / "out").string(), dir.path().string()});
  EXPECT_EQ(not_utf8.exit_code, 1);
  EXPECT_NE(not_utf8.err.find("b.txt: not valid UTF-8 at byte 2"), std::string::npos) << not_utf8.err;
  const auto no_output = run_cli({"train-tokenizer", "-o", "", "README.md"});
  EXPECT_EQ(no_output.exit_code, 1);
  EXPECT_NE(no_output.err.find("-o needs a folder, got an empty value"), std::string::npos) << no_output.err;
}

TEST(BadInputCli, B44_EmptyNumber) {
  const std::string m = test::fixture_dir("gpt2-f32").string();
  expect_cli_usage("B44", {"forward", "-m", m, "--tokens", "1", "--lens", ""});
  expect_cli_usage("B44", {"generate", "-m", m, "--tokens", "1", "--temperature", ""});
  expect_cli_usage("B44", {"train-tokenizer", "--vocab-size", "", "-o", "x", "y"});
}

// -o where nothing can be written: said at once, before any text is read or vocabulary learned.
TEST(BadInputCli, B45_UnwritableOutput) {
  if (!has_cli()) return;
  TempDir dir;
  const fs::path text = dir.path() / "text.txt", file = dir.path() / "a-file";
  test::write_file(text, "The jury said the river was high.\n");
  test::write_file(file, "");
  const std::string under_a_file = (file / "out").string();
  expect_cli("B45", {"train-tokenizer", "--vocab-size", "270", "-o", under_a_file, text.string()});
  expect_cli("B45", {"train", text.string(), "-o", under_a_file, "--vocab-size", "270"});
  // Before the text is read: a text that does not exist is not what is said.
  expect_cli("B45", {"train-tokenizer", "-o", under_a_file, (dir.path() / "missing.txt").string()});
  expect_cli("B45", {"train", (dir.path() / "missing.txt").string(), "-o", under_a_file});
  if (::geteuid() == 0) return;   // root writes anywhere: a read-only folder is no test
  const fs::path read_only = dir.path() / "read-only";
  fs::create_directories(read_only);
  ::chmod(read_only.c_str(), 0555);
  const auto r = run_cli({"train-tokenizer", "-o", (read_only / "out").string(), text.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot write to"), std::string::npos) << r.err;
}

TEST(BadInputCli, B46_SpecialFileAsText) {
  if (!has_cli()) return;
  TempDir dir;
  expect_cli("B46", {"train-tokenizer", "-o", (dir.path() / "out").string(), "/dev/null"});
  expect_cli("B46", {"train", "/dev/null", "-o", (dir.path() / "model").string()});
  expect_cli("B46", {"evaluate", "-m", test::fixture_dir("gpt2-f32").string(), "/dev/zero"});
  expect_cli("B46", {"forward", "-m", test::fixture_dir("gpt2-f32").string(), "--batch", "/dev/zero"});
  const fs::path fifo = dir.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = run_cli({"train-tokenizer", "-o", (dir.path() / "out").string(), fifo.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a regular file (a FIFO)"), std::string::npos) << r.err;
  const auto folder =
      run_cli({"classify", "-m", (kShipped.parent_path() / "brown-genre").string(), "--input", dir.path().string()});
  EXPECT_EQ(folder.exit_code, 1);
  EXPECT_NE(folder.err.find("a folder, not a file"), std::string::npos) << folder.err;
}

#ifdef GLASSBOX_TEST_TRAINING
// A checkpoint whose weights hold a NaN: the file is damaged, not the learning rate too high.
TEST(BadInputCli, B47_NaNInACheckpoint) {
  TempDir dir;
  TrainingSettings s;
  s.n_layer = 1;
  s.n_embd = 16;
  s.n_head = 2;
  s.n_positions = 16;
  TrainingOptions o;
  o.seq_len = 16;
  o.batch_size = 2;
  o.steps = 4;
  o.warmup_steps = 1;
  Trainer trainer(training_model_config(s, 300), o);
  const std::string name = trainer.parameter_names().at(3);
  std::vector<float> values(trainer.parameter(name).begin(), trainer.parameter(name).end());
  values[values.size() / 2] = NAN;
  trainer.set_parameter(name, values);
  trainer.save_checkpoint(dir.path() / "checkpoint.safetensors");
  expect_cpp<ModelFormatError>("B47", [&] { Trainer::from_checkpoint(dir.path() / "checkpoint.safetensors"); });

  if (!has_cli()) return;   // the CLI: a run paused after a step, then its checkpoint damaged
  const fs::path text = dir.path() / "text.txt", out = dir.path() / "model";
  std::string words;
  for (int i = 0; i < 300; ++i) words += i % 3 ? "the river was high. " : "The mayor said so.\n";
  test::write_file(text, words);
  const std::vector<std::string> args = {"train",
                                         text.string(),
                                         "-o",
                                         out.string(),
                                         "--vocab-size",
                                         "300",
                                         "--n-layer",
                                         "1",
                                         "--n-embd",
                                         "16",
                                         "--n-head",
                                         "2",
                                         "--n-positions",
                                         "16",
                                         "--seq-len",
                                         "16",
                                         "--batch-size",
                                         "2",
                                         "--steps",
                                         "4",
                                         "--warmup",
                                         "1",
                                         "--eval-every",
                                         "0",
                                         "--threads",
                                         "1"};
  auto paused = args;
  paused.insert(paused.end(), {"--pause-at", "1"});
  const auto first = run_cli(paused);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  Trainer run = Trainer::from_checkpoint(out / "checkpoint.safetensors");
  const std::string weight = run.parameter_names().at(0);
  std::vector<float> w(run.parameter(weight).begin(), run.parameter(weight).end());
  w[1] = INFINITY;
  run.set_parameter(weight, w);
  run.save_checkpoint(out / "checkpoint.safetensors", run.checkpoint_extra());
  auto resume = args;
  resume.push_back("--resume");
  const auto r = run_cli(resume);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has a non-finite value (infinity)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--lr"), std::string::npos) << r.err;
  expect_cli("B47", resume);
}
#endif

}   // namespace
}   // namespace glassbox
