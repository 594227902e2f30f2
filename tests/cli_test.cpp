// The glassbox command line, run as a user would: output format, exit codes, one-line errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "kernels/kernels.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;
using test::run_cli;

std::string model(const std::string& name) { return fixture_dir(name).string(); }

TEST(Cli, ForwardPrintsLogitsAndAttentionAsJson) {
  const auto expected = test::read_json(fixture_dir("openai-gpt") / "expected.json");
  std::string ids;
  for (int id : expected["tokens"]) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const auto r = run_cli({"forward", "-m", model("openai-gpt"), "--tokens", ids, "--attention"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  const std::size_t T = expected["tokens"].size();
  ASSERT_EQ(out["logits"].size(), T);
  ASSERT_EQ(out["logits"][0].size(), 96u);
  double max_diff = 0;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t v = 0; v < 96; ++v)
      max_diff =
          std::max(max_diff, std::abs(out["logits"][t][v].get<double>() - expected["logits"][t][v].get<double>()));
  EXPECT_LT(max_diff, 1e-4);
  ASSERT_EQ(out["attention"].size(), 2u);           // layers
  ASSERT_EQ(out["attention"][0].size(), 4u);        // heads
  ASSERT_EQ(out["attention"][0][0].size(), T);      // queries
  ASSERT_EQ(out["attention"][0][0][0].size(), T);   // keys
  EXPECT_NEAR(out["attention"][1][3][5][2].get<double>(), expected["attention"][1][3][5][2].get<double>(), 1e-5);
  EXPECT_FALSE(run_cli({"forward", "-m", model("openai-gpt"), "--tokens", "1,2"}).out.find("attention") !=
               std::string::npos);
}

std::string joined(const nlohmann::json& ids, const char* sep = ",") {
  std::string s;
  for (int id : ids) s += (s.empty() ? "" : sep) + std::to_string(id);
  return s;
}

// --hidden-states and --lens against PyTorch (make_fixtures.py): the residual stream after the
// embeddings and each block (the last after ln_f), and each layer's most likely next tokens.
TEST(Cli, ForwardPrintsHiddenStatesAndTheLens) {
  const auto expected = test::read_json(fixture_dir("gpt2-f32") / "expected.json");
  const auto r = run_cli(
      {"forward", "-m", model("gpt2-f32"), "--tokens", joined(expected["tokens"]), "--hidden-states", "--lens", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  const auto& want = expected["hidden_states"];
  ASSERT_EQ(out["hidden_states"].size(), 3u);   // n_layer + 1
  double max_diff = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(out["hidden_states"][i].size(), expected["tokens"].size());
    for (std::size_t t = 0; t < want[i].size(); ++t)
      for (std::size_t k = 0; k < 32; ++k)
        max_diff =
            std::max(max_diff, std::abs(out["hidden_states"][i][t][k].get<double>() - want[i][t][k].get<double>()));
  }
  EXPECT_LT(max_diff, 1e-4);
  const auto& lens = out["lens"];
  ASSERT_EQ(lens.size(), 2u);   // n_layer
  ASSERT_EQ(lens[1].size(), expected["tokens"].size());
  ASSERT_EQ(lens[1][0].size(), 5u);
  EXPECT_EQ(lens[0][3][0]["id"], expected["lens"]["layers"][0][3][0]["id"]);
  EXPECT_NEAR(lens[0][3][0]["p"].get<double>(), expected["lens"]["layers"][0][3][0]["p"].get<double>(), 1e-5);
  EXPECT_EQ(run_cli({"forward", "-m", model("gpt2-f32"), "--tokens", "1,2"}).out.find("hidden_states"),
            std::string::npos);
}

// --head-mask L:H,...: those heads silenced, in forward and generate, as PyTorch's head_mask.
TEST(Cli, HeadMaskSilencesHeads) {
  const auto expected = test::read_json(fixture_dir("gpt2-f32") / "expected.json");
  const auto& whole_layer = expected["head_masks"][1];   // layer 1, every head
  std::string mask;
  for (const auto& pair : whole_layer["silenced"])
    mask += (mask.empty() ? "" : ",") + pair[0].dump() + ":" + pair[1].dump();
  const auto r =
      run_cli({"forward", "-m", model("gpt2-f32"), "--tokens", joined(expected["tokens"]), "--head-mask", mask});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto logits = nlohmann::json::parse(r.out)["logits"];
  double max_diff = 0;
  for (std::size_t t = 0; t < logits.size(); ++t)
    for (std::size_t v = 0; v < 96; ++v)
      max_diff = std::max(max_diff, std::abs(logits[t][v].get<double>() - whole_layer["logits"][t][v].get<double>()));
  EXPECT_LT(max_diff, 1e-4);
  const auto& one_head = expected["head_masks"][0];   // one head
  const auto& g = one_head["greedy"];
  const auto head = one_head["silenced"][0][0].dump() + ":" + one_head["silenced"][0][1].dump();
  const auto gen = run_cli({"generate", "-m", model("gpt2-f32"), "--tokens", joined(g["prompt"]), "-n",
                            std::to_string(g["max_tokens"].get<int>()), "--temperature", "0", "--head-mask", head});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(gen.out, joined(g["tokens"], " ") + "\n");
  // classify: the class logits of GPT2ForSequenceClassification with those heads off
  const auto classifier = test::read_json(fixture_dir("gpt2-classifier") / "expected.json");
  for (const auto& c : classifier["classify_head_masks"]) {
    std::string heads;
    for (const auto& pair : c["silenced"]) heads += (heads.empty() ? "" : ",") + pair[0].dump() + ":" + pair[1].dump();
    const auto cls =
        run_cli({"classify", "-m", model("gpt2-classifier"), "--tokens", joined(c["ids"]), "--head-mask", heads});
    ASSERT_EQ(cls.exit_code, 0) << cls.err;
    const auto got = nlohmann::json::parse(cls.out)["logits"];
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(got[k].get<double>(), c["logits"][k].get<double>(), 1e-4) << heads;
  }
}

TEST(Cli, BadInspectOptionsAreOneLineErrors) {
  const auto m = model("gpt2-f32");   // 2 layers x 4 heads, 96 tokens
  const auto error = [&](std::vector<std::string> args, const std::string& want) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(want), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  };
  for (const char* bad : {"1", "1:", ":1", "1:2,", "a:b", "1:2;3:1", "1:2:3"})
    error({"forward", "-m", m, "--tokens", "1,2", "--head-mask", bad},
          "--head-mask must be layer:head pairs separated by commas");
  error({"forward", "-m", m, "--tokens", "1,2", "--head-mask", "2:0"},
        "--head-mask: there is no layer 2: the model has layers 0..1");
  error({"forward", "-m", m, "--tokens", "1,2", "--head-mask", "0:4"},
        "--head-mask: there is no head 4: the model's layers have heads 0..3");
  error({"generate", "-m", m, "--tokens", "1,2", "--head-mask", "0:-1"}, "there is no head -1");
  error({"classify", "-m", model("gpt2-classifier"), "--tokens", "1,2", "--head-mask", "0:9"},
        "--head-mask: there is no head 9");
  error({"classify", "-m", model("gpt2-classifier"), "--tokens", "1,2", "--head-mask", "0;1"},
        "--head-mask must be layer:head pairs");
  error({"forward", "-m", m, "--tokens", "1,2", "--lens", "0"},
        "the lens shows 1 to 96 tokens per layer (the vocabulary), got 0");
  error({"forward", "-m", m, "--tokens", "1,2", "--lens", "97"}, "got 97");
}

// The model the project ships (web/models/brown-small) is what the CLI runs without -m.
TEST(Cli, RunsTheShippedModelByDefault) {
  const auto g = run_cli({"generate", "-p", "The jury said", "-n", "20", "--seed", "1", "--temperature", "0.8"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_GT(g.out.size(), 20u) << g.out;
  EXPECT_NE(g.err.find("20 tokens"), std::string::npos) << g.err;
  const auto t = run_cli({"tokenize"}, "The jury said");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  const auto ids = nlohmann::json::parse(t.out);
  EXPECT_GE(ids.size(), 2u);
  EXPECT_LE(ids.size(), 4u);   // a vocabulary learned from English: common words are single tokens
}

TEST(Cli, GenerateGreedyPrintsTheReferenceIds) {
  const auto g = test::read_json(fixture_dir("gpt2-bf16") / "expected.json")["greedy"];
  std::string prompt, want;
  for (int id : g["prompt"]) prompt += (prompt.empty() ? "" : ",") + std::to_string(id);
  for (int id : g["tokens"]) want += (want.empty() ? "" : " ") + std::to_string(id);
  const auto r = run_cli({"generate", "-m", model("gpt2-bf16"), "--tokens", prompt, "-n",
                          std::to_string(g["max_tokens"].get<int>()), "--temperature", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, want + "\n");
  EXPECT_NE(r.err.find("stopped: max_tokens"), std::string::npos) << r.err;
}

// --quantize int8 runs the same commands on int8 weights: near F32's logits, not equal to them.
TEST(Cli, QuantizeInt8) {
  const auto expected = test::read_json(fixture_dir("gpt2-f32") / "expected.json");
  std::string ids;
  for (int id : expected["tokens"]) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const auto r = run_cli({"forward", "-m", model("gpt2-f32"), "--tokens", ids, "--quantize", "int8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto logits = nlohmann::json::parse(r.out)["logits"];
  double max_diff = 0;
  for (std::size_t t = 0; t < logits.size(); ++t)
    for (std::size_t v = 0; v < logits[t].size(); ++v)
      max_diff = std::max(max_diff, std::abs(logits[t][v].get<double>() - expected["logits"][t][v].get<double>()));
  EXPECT_GT(max_diff, 1e-4);
  EXPECT_LT(max_diff, 0.5);
  const auto g = run_cli({"generate", "-p", "The jury said", "-n", "8", "--temperature", "0", "--quantize", "int8"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_NE(g.err.find("8 tokens"), std::string::npos) << g.err;
}

TEST(Cli, GenerateWithSeedIsReproducible) {
  const std::vector<std::string> args = {
      "generate", "-m", model("gpt2-f32"), "--tokens", "1,2,3",  "-n", "12", "--temperature", "0.9",
      "--top-k",  "20", "--top-p",         "0.95",     "--seed", "7"};
  const auto a = run_cli(args), b = run_cli(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.err.find("seed 7"), std::string::npos);
}

// Bad input: non-zero exit, one line on stderr that names the problem, nothing on stdout.
void expect_error(const std::vector<std::string>& args, const std::string& message) {
  const auto r = run_cli(args);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find(message), std::string::npos) << "stderr: " << r.err;
  EXPECT_EQ(r.out, "");
}

// --mask bidirectional: the same weights with every key visible, as PyTorch's forward(causal=False).
TEST(Cli, ForwardWithABidirectionalMask) {
  const auto expected = test::read_json(fixture_dir("gpt2-f32") / "expected.json");
  std::string ids;
  for (int id : expected["tokens"]) ids += (ids.empty() ? "" : ",") + std::to_string(id);
  const auto r =
      run_cli({"forward", "-m", model("gpt2-f32"), "--tokens", ids, "--attention", "--mask", "bidirectional"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  const auto& want = expected["bidirectional"];
  double max_diff = 0;
  for (std::size_t t = 0; t < expected["tokens"].size(); ++t)
    for (std::size_t v = 0; v < 96; ++v)
      max_diff = std::max(max_diff, std::abs(out["logits"][t][v].get<double>() - want["logits"][t][v].get<double>()));
  EXPECT_LT(max_diff, 1e-4);
  EXPECT_NEAR(out["attention"][1][0][0][3].get<double>(), want["attention"][1][0][0][3].get<double>(), 1e-5);
  EXPECT_GT(out["attention"][1][0][0][3].get<double>(), 0.0);   // query 0 sees key 3
  expect_error({"forward", "-m", model("gpt2-f32"), "--tokens", "1,2", "--mask", "future"},
               "--mask must be causal or bidirectional, got future");
}

// --batch FILE: several sequences in one pass; each sequence's logits are those `forward
// --tokens` prints for it alone (the same floats, printed the same way).
TEST(Cli, ForwardBatchPrintsEachSequencesLogits) {
  const test::TempDir dir;
  const auto file = (dir.path() / "batch.json").string();
  std::ofstream(file) << "[[5, 17, 3, 40], [9], [1, 2]]";
  const auto r = run_cli({"forward", "-m", model("gpt2-f32"), "--batch", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  ASSERT_EQ(out["logits"].size(), 3u);
  const char* alone[] = {"5,17,3,40", "9", "1,2"};
  for (std::size_t b = 0; b < 3; ++b) {
    const auto one = run_cli({"forward", "-m", model("gpt2-f32"), "--tokens", alone[b]});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_EQ(out["logits"][b], nlohmann::json::parse(one.out)["logits"]) << "sequence " << b;
  }
  std::ofstream(file) << "[[5, 17], [96]]";
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", file}, "sequence 1: token id 96 is out of range");
  std::ofstream(file) << "[[5, 17], 3]";
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", file},
               "sequence 1 is not an array: expected a JSON array of token-id arrays");
  std::ofstream(file) << "[[5, 1.5]]";
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", file}, "sequence 0 holds 1.5, not a token id");
  std::ofstream(file) << "[[5, 17]";
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", file}, "is not JSON");
  std::ofstream(file) << "[]";
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", file}, "the batch holds no sequences");
  expect_error({"forward", "-m", model("gpt2-f32"), "--batch", (dir.path() / "missing.json").string()},
               "missing.json: no such file or folder");
  const auto both = run_cli({"forward", "-m", model("gpt2-f32"), "--batch", file, "--tokens", "1"});
  EXPECT_EQ(both.exit_code, 2);   // usage: --batch excludes a prompt
}

TEST(Cli, BadInputIsAOneLineError) {
  const std::string m = model("gpt2-f32");
  expect_error({"forward", "-m", m, "--tokens", "1,x"}, "--tokens must be comma-separated integers");
  expect_error({"forward", "-m", m, "--tokens", "1,96"}, "token id 96 is out of range");
  expect_error({"forward", "-m", m, "--tokens", "1,2,"}, "--tokens must be comma-separated integers");
  expect_error({"forward", "-m", "/nonexistent", "--tokens", "1"}, "/nonexistent: not a directory");
  expect_error({"generate", "-m", m, "--tokens", "1", "--temperature", "-1"},
               "temperature must be a finite number >= 0");
  expect_error({"generate", "-m", m, "--tokens", "1", "--temperature", "nan"}, "temperature");
  expect_error({"generate", "-m", m, "--tokens", "1", "--top-p", "0"}, "top-p must be in (0, 1]");
  expect_error({"generate", "-m", m, "--tokens", "1", "--top-k", "-3"}, "top-k must be >= 0");
  std::string too_long = "1";
  for (int i = 0; i < 32; ++i) too_long += ",1";
  expect_error({"generate", "-m", m, "--tokens", too_long}, "longer than the context of 32");
  expect_error({"frobnicate"}, "unknown command 'frobnicate'");
  expect_error({"generate", "-m", m, "--tokens", "1", "--quantize", "int5"},
               "unknown quantization 'int5' (use none, int8 or int4)");
  expect_error({"forward", "-m", m, "--tokens", "1", "--arithmetic", "fma"},
               "unknown arithmetic 'fma' (use fused or portable)");
  expect_error({"generate", "-m", m, "--tokens", "1", "--context-full", "wrap"},
               "context-full policy must be \"slide\" or \"stop\"");
  const auto r = run_cli({"forward", "-m", "/nonexistent", "--tokens", "1"});
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// --arithmetic reaches the products: fused multiply-adds (the default) give other logits than the
// portable products on a CPU with FMA, and the same without one.
TEST(Cli, ArithmeticChoosesHowTheProductsRound) {
  const std::vector<std::string> args = {"forward", "-m", model("gpt2-f32"), "--tokens", "1,2,3,4,5"};
  auto with = [&](const char* arithmetic) {
    auto a = args;
    if (arithmetic) a.insert(a.end(), {"--arithmetic", arithmetic});
    const auto r = run_cli(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::string fused = with("fused"), portable = with("portable");
  EXPECT_EQ(with(nullptr), fused);
  if (kernels::has_fused_multiply_add())
    EXPECT_NE(fused, portable);
  else
    EXPECT_EQ(fused, portable);
}

// Past the end of the context: by default the window slides and generation goes on (5,000 tokens
// with the shipped model's 256 positions); --context-full stop ends it there instead.
TEST(Cli, GeneratesPastTheContextBySliding) {
  const auto r = run_cli({"generate", "-p", "The jury said", "-n", "5000", "--seed", "5", "--temperature", "0.9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("5000 tokens in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("stopped: max_tokens"), std::string::npos) << r.err;
  EXPECT_GT(r.out.size(), 10000u);
  const auto s = run_cli({"generate", "-p", "The jury said", "-n", "5000", "--seed", "5", "--temperature", "0.9",
                          "--context-full", "stop"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.err.find("stopped: context_full"), std::string::npos) << s.err;
  EXPECT_EQ(r.out.compare(0, s.out.size() - 1, s.out, 0, s.out.size() - 1), 0)
      << "the same tokens up to the end of the context";
}

TEST(Cli, BrokenModelFileIsAnError) {
  test::TempDir dir;
  test::copy_fixture("gpt2-f32", dir.path());
  test::write_file(dir.path() / "model.safetensors", std::string("\x10\0\0\0\0\0\0\0{\"a\":", 13));
  expect_error({"forward", "-m", dir.path().string(), "--tokens", "1"},
               "model.safetensors: header length 16 runs past the end");
}

TEST(Cli, NonFiniteLogitsAreAnErrorNotInvalidJson) {
  test::TempDir dir;
  test::copy_fixture("gpt2-f32", dir.path());
  auto tensors = test::read_tensors(dir.path() / "model.safetensors");
  for (auto& t : tensors)
    if (t.name == "ln_f.bias") {
      const float inf = INFINITY;
      std::memcpy(t.bytes.data(), &inf, 4);
    }
  test::write_file(dir.path() / "model.safetensors", test::make_safetensors(tensors));
  expect_error({"forward", "-m", dir.path().string(), "--tokens", "1,2"}, "not finite");
  expect_error({"generate", "-m", dir.path().string(), "--tokens", "1,2"}, "non-finite");
}

TEST(Cli, TokenizeAndDetokenize) {
  const std::string dir = fixture_dir("tokenizer/gpt2").string();
  auto r = run_cli({"tokenize", "-m", dir}, "Hello world<|endoftext|>");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[15496,995,27,91,437,1659,5239,91,29]\n");
  r = run_cli({"tokenize", "-m", dir, "--allow-special"}, "Hello world<|endoftext|>");
  EXPECT_EQ(r.out, "[15496,995,50256]\n");
  r = run_cli({"detokenize", "-m", dir}, "[15496, 995, 50256]");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Hello world<|endoftext|>");
}

TEST(Cli, TokenizerErrors) {
  const std::string dir = fixture_dir("tokenizer/gpt2").string();
  auto r = run_cli({"tokenize", "-m", dir}, "a\xff");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not valid UTF-8 at byte 1"), std::string::npos) << r.err;
  r = run_cli({"detokenize", "-m", dir}, "[1, \"x\"]");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("\"x\" is not a token id"), std::string::npos) << r.err;
  r = run_cli({"detokenize", "-m", dir}, "[50257]");
  EXPECT_NE(r.err.find("token id 50257 is out of range"), std::string::npos) << r.err;
  r = run_cli({"detokenize", "-m", dir}, "hello");
  EXPECT_NE(r.err.find("JSON array of token ids"), std::string::npos) << r.err;
  r = run_cli({"tokenize", "-m", fixture_dir("gpt2-f32").string()}, "x");   // a model without tokenizer files
  EXPECT_NE(r.err.find("vocab.json: cannot open"), std::string::npos) << r.err;
}

TEST(Cli, GenerateFromTextStreamsTheReferenceText) {
  // gpt2-bytes has a byte-level tokenizer; the reference decodes its greedy bytes with U+FFFD.
  const auto g = test::read_json(fixture_dir("gpt2-bytes") / "expected.json")["greedy"];
  const auto r = run_cli({"generate", "-m", model("gpt2-bytes"), "-p", g["prompt_text"].get<std::string>(), "-n",
                          std::to_string(g["max_tokens"].get<int>()), "--temperature", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, g["text"].get<std::string>() + "\n");
  expect_error({"generate", "-m", model("gpt2-bytes"), "-p", ""}, "the prompt is empty");
  expect_error({"generate", "-m", model("gpt2-bytes")}, "give a prompt");
}

}   // namespace
}   // namespace glassbox
