// `glassbox train`, run as a user would: a model directory out that generate loads, pause and
// resume giving the same model as one run, and clear errors.
#include <gtest/gtest.h>

#include <map>
#include <cstring>
#include <iostream>

#include "glassbox/model.h"
#include "glassbox/safetensors.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::run_cli;

// A few KB of repetitive English, so that a tiny model learns something in a few dozen steps.
std::string corpus(int sentences) {
  const char* subjects[] = {"The jury", "The mayor", "A farmer", "Her brother", "The old dog"};
  const char* verbs[] = {"said", "saw", "found", "wanted", "remembered"};
  const char* objects[] = {"the river.", "a new house.", "the long road.", "his money.", "the first snow."};
  std::string text;
  for (int i = 0; i < sentences; ++i)
    text += std::string(subjects[i % 5]) + " " + verbs[(i / 5) % 5] + " " + objects[(i / 25) % 5] +
            (i % 4 == 3 ? "\n\n" : " ");
  return text;
}

std::vector<std::string> train_args(const std::filesystem::path& text, const std::filesystem::path& out) {
  return {"train",
          text.string(),
          "-o",
          out.string(),
          "--vocab-size",
          "300",
          "--n-layer",
          "2",
          "--n-embd",
          "32",
          "--n-head",
          "2",
          "--n-positions",
          "32",
          "--seq-len",
          "32",
          "--batch-size",
          "4",
          "--steps",
          "30",
          "--warmup",
          "5",
          "--lr",
          "3e-3",
          "--eval-every",
          "10",
          "--checkpoint-every",
          "7",
          "--dropout",
          "0.1"};
}

// args with the value of `flag` replaced
std::vector<std::string> with(std::vector<std::string> args, const std::string& flag, const std::string& value) {
  *(std::find(args.begin(), args.end(), flag) + 1) = value;
  return args;
}

TEST(CliTrain, TrainsAModelThatGenerateLoads) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.path() / "texts" / ".git");
  test::write_file(dir.path() / "texts" / "a.txt", corpus(400));
  test::write_file(dir.path() / "texts" / ".git" / "index", std::string("\xff\xfe binary, hidden"));   // skipped
  const auto out = dir.path() / "model";
  const auto r = run_cli(train_args(dir.path() / "texts", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f :
       {"config.json", "model.safetensors", "vocab.json", "merges.txt", "checkpoint.safetensors", "training_log.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(out / f)) << f;
  EXPECT_NE(r.err.find("step 30/30"), std::string::npos) << r.err;   // plain progress lines: stderr is not a terminal
  EXPECT_NE(r.err.find("bits/byte"), std::string::npos) << r.err;
  // the log: 30 step lines, evaluations at 10 and 20, and the final one
  int steps = 0, evals = 0, finals = 0;
  std::istringstream log(test::read_file(out / "training_log.jsonl"));
  for (std::string line; std::getline(log, line);) {
    const auto j = nlohmann::json::parse(line);
    finals += j.contains("final");
    evals += j.contains("val_loss") && !j.contains("final");
    steps += j.contains("loss");
  }
  EXPECT_EQ(steps, 30);
  EXPECT_EQ(evals, 2);
  EXPECT_EQ(finals, 1);
  const auto g = run_cli({"generate", "-m", out.string(), "-p", "The jury", "-n", "10", "--seed", "1"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_FALSE(g.out.empty());
}

// --positions sinusoidal: the position table is the fixed sin/cos one from start to end (saved as
// wpe.weight, so that GPT-2 loaders run it), the model still learns, and the engine, which
// computes the table from config.json, gives the logits of a model read with the stored table.
TEST(CliTrain, SinusoidalPositionsStayFixedWhileTheModelLearns) {
  test::TempDir dir;
  test::write_file(dir.path() / "a.txt", corpus(400));
  const auto out = dir.path() / "model";
  const auto r = run_cli(with(with(train_args(dir.path() / "a.txt", out), "--steps", "40"), "--eval-every", "20"));
  const auto s = run_cli([&] {
    auto args = with(with(train_args(dir.path() / "a.txt", dir.path() / "sin"), "--steps", "40"), "--eval-every", "20");
    args.insert(args.end(), {"--positions", "sinusoidal"});
    return args;
  }());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(test::read_json(dir.path() / "sin" / "config.json")["position_encoding"], "sinusoidal");
  EXPECT_FALSE(test::read_json(out / "config.json").contains("position_encoding"));
  // The stored table is exactly the formula's (the trainer never moved it).
  const auto file = SafeTensors::open(dir.path() / "sin" / "model.safetensors");
  const TensorInfo* wpe = file.find("wpe.weight");
  ASSERT_TRUE(wpe && wpe->dtype == DType::F32);
  std::vector<float> stored(static_cast<std::size_t>(wpe->numel));
  std::memcpy(stored.data(), wpe->bytes.data(), wpe->bytes.size());
  std::vector<float> table(32 * 32);
  sinusoidal_positions(table.data(), 32, 32);
  EXPECT_EQ(stored, table);
  // It learned about as well as with learned positions: final validation losses (nats per token)
  // well below the first step's loss.
  const auto losses = [](const std::filesystem::path& model) {
    double first = 0, last = 0;
    std::istringstream log(test::read_file(model / "training_log.jsonl"));
    for (std::string line; std::getline(log, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j.contains("loss") && j["step"] == 1) first = j["loss"].get<double>();
      if (j.contains("final")) last = j["val_loss"].get<double>();
    }
    return std::pair{first, last};
  };
  const auto [sin_first, sin_last] = losses(dir.path() / "sin");
  const auto [learned_first, learned_last] = losses(out);
  std::cout << "[ training ] 40 steps: final validation loss " << sin_last << " with sinusoidal positions, "
            << learned_last << " with learned ones (first step " << sin_first << ", " << learned_first << ")\n";
  EXPECT_LT(sin_last, sin_first - 1.0);
  EXPECT_LT(sin_last, learned_last * 1.15);
  // The same logits whether the table is computed (config.json says sinusoidal) or read from the file.
  const Model computed = Model::load(dir.path() / "sin");
  auto config = test::read_json(dir.path() / "sin" / "config.json");
  config.erase("position_encoding");
  const Model read = Model::from_parts(config.dump(), file);
  const std::vector<std::int32_t> ids = {5, 17, 3, 40, 9, 1, 2};
  KVCache a = computed.new_cache(), b = read.new_cache();
  ForwardOptions all;
  all.all_logits = true;
  EXPECT_EQ(computed.forward(ids, a, all), read.forward(ids, b, all));
}

TEST(CliTrain, PausedAndResumedEqualsOneRun) {
  test::TempDir dir;
  test::write_file(dir.path() / "text.txt", corpus(300));
  const auto text = dir.path() / "text.txt";
  auto straight = train_args(text, dir.path() / "straight");
  straight.insert(straight.end(), {"--save-dtype", "f16"});
  ASSERT_EQ(run_cli(straight).exit_code, 0);
  auto args = train_args(text, dir.path() / "paused");
  args.insert(args.end(), {"--pause-at", "12", "--save-dtype", "f16"});
  const auto first = run_cli(args);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("paused at step 12"), std::string::npos) << first.err;
  // What an interrupted run logged after its last checkpoint must go: fake such lines.
  std::string log_text = test::read_file(dir.path() / "paused" / "training_log.jsonl");
  log_text += "{\"step\": 13, \"loss\": 1.0}\n{\"final\": true, \"step\": 12, \"val_loss\": 1.0}\n";
  test::write_file(dir.path() / "paused" / "training_log.jsonl", log_text);
  args.push_back("--resume");
  for (const char* flag : {"--pause-at", "--save-dtype"})   // the run's dtype is kept by the checkpoint
    args.erase(std::find(args.begin(), args.end(), flag), std::find(args.begin(), args.end(), flag) + 2);
  const auto second = run_cli(args);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("resuming at step 12"), std::string::npos) << second.err;
  EXPECT_EQ(test::read_file(dir.path() / "straight" / "model.safetensors"),
            test::read_file(dir.path() / "paused" / "model.safetensors"));
  // F16 could hide small differences: the checkpoints' F32 parameters and AdamW moments are equal too
  const SafeTensors a = SafeTensors::open(dir.path() / "straight" / "checkpoint.safetensors");
  const SafeTensors b = SafeTensors::open(dir.path() / "paused" / "checkpoint.safetensors");
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const auto& t : a.tensors())
    ASSERT_TRUE(std::equal(t.bytes.begin(), t.bytes.end(), b.find(t.name)->bytes.begin())) << t.name;
  EXPECT_NE(test::read_file(dir.path() / "paused" / "model.safetensors").find("\"F16\""), std::string::npos);
  // the log of the resumed run has each step once
  int steps = 0, finals = 0;
  std::istringstream log(test::read_file(dir.path() / "paused" / "training_log.jsonl"));
  for (std::string line; std::getline(log, line);) {
    const auto j = nlohmann::json::parse(line);
    steps += j.contains("loss");
    finals += j.contains("final");
    EXPECT_NE(j.value("loss", 0.0), 1.0) << "a line logged after the checkpoint survived";
  }
  EXPECT_EQ(steps, 30);
  EXPECT_EQ(finals, 1);
  // a run's settings cannot change on resume
  const auto refused = run_cli(with(args, "--steps", "40"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--steps cannot change when resuming"), std::string::npos) << refused.err;
}

// The inference engine (glassbox evaluate) scores held-out text as the trainer did at the end.
TEST(CliTrain, EvaluateAgreesWithTheTrainersFinalValidation) {
  test::TempDir dir;
  test::write_file(dir.path() / "text.txt", corpus(400));
  test::write_file(dir.path() / "valid.txt", corpus(60).substr(1000) + "The mayor remembered a new road.");
  const auto out = dir.path() / "model";
  auto args = train_args(dir.path() / "text.txt", out);
  args.insert(args.end(), {"--valid", (dir.path() / "valid.txt").string()});
  ASSERT_EQ(run_cli(args).exit_code, 0);
  nlohmann::json final;
  std::istringstream log(test::read_file(out / "training_log.jsonl"));
  for (std::string line; std::getline(log, line);)
    if (auto j = nlohmann::json::parse(line); j.contains("final")) final = j;
  const auto r = run_cli({"evaluate", "-m", out.string(), (dir.path() / "valid.txt").string(), "--context", "32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = nlohmann::json::parse(r.out);
  EXPECT_EQ(e["tokens"], final["val_tokens"]);
  EXPECT_EQ(e["bytes"], final["val_bytes"]);
  EXPECT_NEAR(e["loss"].get<double>(), final["val_loss"].get<double>(), 1e-4);
  EXPECT_NEAR(e["bits_per_byte"].get<double>(), final["val_bits_per_byte"].get<double>(), 1e-4);
  const auto bad = run_cli({"evaluate", "-m", out.string(), (dir.path() / "valid.txt").string(), "--context", "33"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("the context must be 1..32 positions"), std::string::npos) << bad.err;
}

// Labelled lines of a task that needs attention: the label is the colour word hidden at a
// random place among filler words, and the classifier reads the last token.
std::string colour_lines(int n, std::uint64_t seed) {
  const char* colours[] = {"red", "green", "blue"};
  const char* filler[] = {"the",   "a",   "cat",   "dog", "sat", "on",    "mat",  "ran",  "to",
                          "house", "big", "small", "old", "new", "quick", "slow", "over", "under"};
  std::uint64_t x = seed;
  auto next = [&](std::uint64_t m) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % m;
  };
  std::string text;
  for (int i = 0; i < n; ++i) {
    const int label = int(next(3));
    const int words = 3 + int(next(7));
    const int at = int(next(std::uint64_t(words) + 1));
    std::string line;
    for (int w = 0; w <= words; ++w) {
      line += w ? " " : "";
      line += w == at ? colours[label] : filler[next(18)];
    }
    text += std::string(colours[label]) + "\t" + line + "\n";
  }
  return text;
}

std::vector<std::string> classify_args(const std::filesystem::path& text, const std::filesystem::path& out) {
  return {"train",
          "--task",
          "classify",
          text.string(),
          "-o",
          out.string(),
          "--vocab-size",
          "300",
          "--n-layer",
          "2",
          "--n-embd",
          "32",
          "--n-head",
          "2",
          "--n-positions",
          "32",
          "--seq-len",
          "32",
          "--batch-size",
          "16",
          "--steps",
          "300",
          "--warmup",
          "10",
          "--lr",
          "3e-3",
          "--eval-every",
          "100",
          "--checkpoint-every",
          "50"};
}

// --task classify learns the synthetic task to high accuracy on lines it never saw; `classify`
// gives each line's label and the accuracy; the run pauses and resumes like a language model's.
TEST(CliTrain, ClassifierLearnsASyntheticTaskToHighAccuracy) {
  test::TempDir dir;
  test::write_file(dir.path() / "train.txt", colour_lines(600, 1));
  test::write_file(dir.path() / "unseen.txt", colour_lines(100, 2));
  const auto out = dir.path() / "model";
  const auto r = run_cli(classify_args(dir.path() / "train.txt", out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("3 labels: blue, green, red"), std::string::npos) << r.err;
  nlohmann::json final;
  std::istringstream log(test::read_file(out / "training_log.jsonl"));
  for (std::string line; std::getline(log, line);)
    if (auto j = nlohmann::json::parse(line); j.contains("final")) final = j;
  ASSERT_TRUE(final.contains("val_accuracy")) << final.dump();
  std::map<std::string, int> per_label;   // every 10th line of each label is held out
  std::istringstream all(colour_lines(600, 1));
  for (std::string line; std::getline(all, line);) ++per_label[line.substr(0, line.find('\t'))];
  int held = 0;
  for (const auto& [label, n] : per_label) held += n / 10;
  EXPECT_EQ(final["val_examples"], held);
  EXPECT_GE(final["val_accuracy"].get<double>(), 0.95) << final.dump();
  std::cout << "[ classify ] held-out accuracy " << final["val_accuracy"] << ", label loss " << final["val_loss"]
            << "\n";

  const auto c = run_cli({"classify", "-m", out.string(), "--input", (dir.path() / "unseen.txt").string()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  std::istringstream lines(c.out);
  int n = 0, correct = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    const auto j = nlohmann::json::parse(line);
    double total = 0;
    for (const auto& [name, p] : j["probabilities"].items()) total += p.get<double>();
    EXPECT_NEAR(total, 1.0, 1e-9);
    correct += j["label"] == j["expected"];
  }
  EXPECT_EQ(n, 100);
  EXPECT_GE(correct, 95) << c.err;
  EXPECT_NE(c.err.find("accuracy"), std::string::npos);
  const auto one = run_cli({"classify", "-m", out.string(), "-p", "the quick dog sat under a green house"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(nlohmann::json::parse(one.out)["label"], "green") << one.out;

  // paused at 70 and resumed: the same model as the uninterrupted run
  auto paused = classify_args(dir.path() / "train.txt", dir.path() / "paused");
  paused.insert(paused.end(), {"--pause-at", "70"});
  ASSERT_EQ(run_cli(paused).exit_code, 0);
  auto resumed = classify_args(dir.path() / "train.txt", dir.path() / "paused");
  resumed.push_back("--resume");
  const auto again = run_cli(resumed);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(test::read_file(dir.path() / "paused" / "model.safetensors"), test::read_file(out / "model.safetensors"));
}

// --task mlm: a bidirectional model with <|mask|> as its [MASK] that learns (its held-out masked
// loss falls), fills masks, and refuses to generate.
TEST(CliTrain, MaskedLanguageModelLearnsAndFillsMasks) {
  test::TempDir dir;
  test::write_file(dir.path() / "a.txt", corpus(400));
  const auto out = dir.path() / "model";
  auto args = with(with(train_args(dir.path() / "a.txt", out), "--steps", "60"), "--eval-every", "20");
  args.insert(args.end(), {"--task", "mlm"});
  const auto r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("nats per masked token"), std::string::npos) << r.err;
  const auto config = test::read_json(out / "config.json");
  EXPECT_EQ(config["bidirectional"], true);
  const auto vocab = test::read_json(out / "vocab.json");
  EXPECT_EQ(config["mask_token_id"], vocab["<|mask|>"]);
  std::vector<double> val;
  std::istringstream log(test::read_file(out / "training_log.jsonl"));
  for (std::string line; std::getline(log, line);)
    if (auto j = nlohmann::json::parse(line); j.contains("val_loss")) val.push_back(j["val_loss"]);
  ASSERT_EQ(val.size(), 3u);
  std::cout << "[ mlm      ] held-out masked loss at steps 20, 40, 60: " << val[0] << " " << val[1] << " " << val[2]
            << "\n";
  EXPECT_LT(val.back(), val.front() - 0.3)
      << "held-out masked loss at steps 20, 40, 60: " << val[0] << " " << val[1] << " " << val[2];

  const auto fill = run_cli({"fill-mask", "-m", out.string(), "-p", "The jury <|mask|> the river.", "--top", "3"});
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const auto guesses = nlohmann::json::parse(fill.out);
  ASSERT_EQ(guesses.size(), 1u);
  EXPECT_EQ(guesses[0]["candidates"].size(), 3u);
  const auto g = run_cli({"generate", "-m", out.string(), "-p", "The jury"});
  EXPECT_NE(g.exit_code, 0);
  EXPECT_NE(g.err.find("does not generate text"), std::string::npos) << g.err;
  const auto e = run_cli({"evaluate", "-m", out.string(), (dir.path() / "a.txt").string()});
  EXPECT_NE(e.exit_code, 0);
  EXPECT_NE(e.err.find("evaluate measures next-token prediction"), std::string::npos) << e.err;
  // The mask rate is the run's: another one on --resume is refused.
  auto resume = args;
  resume.insert(resume.end(), {"--resume", "--mask-rate", "0.4"});
  const auto again = run_cli(resume);
  EXPECT_NE(again.exit_code, 0);
  EXPECT_NE(again.err.find("--mask-rate cannot change when resuming"), std::string::npos) << again.err;
  // A run with another rate says so and learns.
  auto more = with(args, "-o", (dir.path() / "more").string());
  more.insert(more.end(), {"--mask-rate", "0.4"});
  const auto m = run_cli(more);
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.err.find("40% of them masked"), std::string::npos) << m.err;
}

// --init-from: a new run starts from another run's parameters instead of a random initialisation;
// here a masked LM from a GPT of the same shape and vocabulary (scripts/train_family_models
// starts brown-mlm's second run from its first, on longer windows). One step at a learning rate too small to move
// anything leaves the GPT's weights, now run bidirectionally.
TEST(CliTrain, InitFromStartsFromAnotherRunsParameters) {
  test::TempDir dir;
  const auto text = dir.path() / "a.txt";
  test::write_file(text, corpus(400));
  const auto tok = run_cli(
      {"train-tokenizer", text.string(), "--vocab-size", "300", "--mask-token", "-o", (dir.path() / "tok").string()});
  ASSERT_EQ(tok.exit_code, 0) << tok.err;
  ASSERT_TRUE(test::read_json(dir.path() / "tok" / "vocab.json").contains("<|mask|>"));
  auto gpt = train_args(text, dir.path() / "gpt");
  gpt.insert(gpt.end(), {"--tokenizer", (dir.path() / "tok").string()});
  const auto g = run_cli(gpt);
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const auto encoder = [&](const std::string& name, bool init) {
    auto args =
        with(with(with(with(train_args(text, dir.path() / name), "--steps", "1"), "--lr", "1e-12"), "--warmup", "0"),
             "--eval-every", "0");
    args.insert(args.end(), {"--task", "mlm", "--min-lr", "1e-12"});
    if (init)
      args.insert(args.end(), {"--init-from", (dir.path() / "gpt").string()});
    else
      args.insert(args.end(), {"--tokenizer", (dir.path() / "tok").string()});
    return run_cli(args);
  };
  for (const auto& [name, init] : {std::pair{"mlm", true}, std::pair{"fresh", false}}) {
    const auto r = encoder(name, init);
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
  }
  const auto config = test::read_json(dir.path() / "mlm" / "config.json");
  EXPECT_EQ(config["bidirectional"], true);
  EXPECT_EQ(config["mask_token_id"],
            test::read_json(dir.path() / "mlm" / "vocab.json")["<|mask|>"]);   // the GPT's vocabulary
  const auto logits = [&](const std::string& name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"forward", "-m", (dir.path() / name).string(), "--tokens", "5,60,7,90"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out)["logits"].get<std::vector<std::vector<double>>>();
  };
  const auto want = logits("gpt", {"--mask", "bidirectional"}), got = logits("mlm"), fresh = logits("fresh");
  double diff = 0, fresh_diff = 0;
  for (std::size_t t = 0; t < want.size(); ++t)
    for (std::size_t v = 0; v < want[t].size(); ++v) {
      diff = std::max(diff, std::abs(got[t][v] - want[t][v]));
      fresh_diff = std::max(fresh_diff, std::abs(fresh[t][v] - want[t][v]));
    }
  EXPECT_LT(diff, 1e-4) << "the encoder starts from the GPT's weights";
  EXPECT_GT(fresh_diff, 0.1) << "(a random initialisation does not)";

  // Another shape, or a folder that is no run: one-line errors, nothing written.
  auto narrow = with(with(train_args(text, dir.path() / "narrow"), "--n-embd", "16"), "--steps", "1");
  narrow.insert(narrow.end(), {"--init-from", (dir.path() / "gpt").string()});
  const auto n = run_cli(narrow);
  EXPECT_NE(n.exit_code, 0);
  EXPECT_NE(n.err.find("values, this run's"), std::string::npos) << n.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "narrow" / "model.safetensors"));
  auto nowhere = train_args(text, dir.path() / "nowhere");
  nowhere.insert(nowhere.end(), {"--init-from", (dir.path() / "tok").string()});
  const auto w = run_cli(nowhere);
  EXPECT_NE(w.exit_code, 0);
  EXPECT_NE(w.err.find("checkpoint.safetensors"), std::string::npos) << w.err;
}

TEST(CliTrain, MistakesAreOneLineErrors) {
  test::TempDir dir;
  test::write_file(dir.path() / "text.txt", corpus(200));
  const auto text = dir.path() / "text.txt";
  auto fails = [&](std::vector<std::string> args, const std::string& words) {
    const auto r = run_cli(args);
    EXPECT_NE(r.exit_code, 0) << words;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    // one error line, the last (progress lines such as "learning a vocabulary" may come before it)
    EXPECT_EQ(r.err.find("error:"), r.err.rfind("error:")) << r.err;
    EXPECT_EQ(r.err.find('\n', r.err.find("error:")), r.err.size() - 1) << r.err;
  };
  fails({"train", (dir.path() / "missing.txt").string(), "-o", (dir.path() / "m").string()}, "no such file");
  fails({"train", text.string(), "-o", (dir.path() / "m").string(), "--resume"}, "no checkpoint to resume");
  fails(with(train_args(text, dir.path() / "m"), "--seq-len", "64"), "sequence length");
  fails(with(train_args(text, dir.path() / "m2"), "--lr", "nan"), "learning rate");
  fails(with(train_args(text, dir.path() / "m2"), "--n-head", "3"), "not divisible");
  auto positions = train_args(text, dir.path() / "m2");
  positions.insert(positions.end(), {"--positions", "rotary"});
  fails(positions, "--positions must be learned or sinusoidal, got rotary");
  auto args = train_args(text, dir.path() / "m3");
  ASSERT_EQ(run_cli(args).exit_code, 0);
  fails(args, "pass --resume");   // would overwrite a run
  std::filesystem::remove(dir.path() / "m3" / "checkpoint.safetensors");
  fails(args, "not an empty folder");   // an existing model folder is never overwritten
  test::write_file(dir.path() / "one.txt", "H");
  auto one = train_args(text, dir.path() / "m5");
  one.insert(one.end(), {"--valid", (dir.path() / "one.txt").string()});
  fails(one, "single token");
  test::write_file(dir.path() / "bad.txt", "caf\xe9 latin-1, not UTF-8");
  fails(train_args(dir.path() / "bad.txt", dir.path() / "m6"), "bad.txt: not valid UTF-8 at byte 3");
  args = train_args(dir.path() / "bad.txt", dir.path() / "m4");
  args.insert(args.end(), {"--tokenizer", (dir.path() / "m3").string()});
  fails(args, "bad.txt");
  // the tasks' own bad input: an unknown task, bad labelled lines, options of another task
  auto task = train_args(text, dir.path() / "m7");
  task.insert(task.end(), {"--task", "translate"});
  fails(task, "--task must be lm, mlm or classify, got translate");
  auto rate = with(train_args(text, dir.path() / "rate"), "--steps", "2");
  rate.insert(rate.end(), {"--task", "mlm", "--mask-rate", "0"});
  fails(rate, "--mask-rate must be more than 0 and at most 1");
  test::write_file(dir.path() / "labelled.txt", "red\ta red house\nno tab on this line\n");
  fails(classify_args(dir.path() / "labelled.txt", dir.path() / "m8"), "labelled.txt:2: expected a label, a tab");
  test::write_file(dir.path() / "one-label.txt", "red\ta red house\nred\tthe red dog\n");
  fails(classify_args(dir.path() / "one-label.txt", dir.path() / "m8"), "at least two labels");
  fails({"classify", "-m", (dir.path() / "m3").string(), "-p", "hello"}, "is not a classifier");
  fails(with(classify_args(dir.path() / "labelled.txt", dir.path() / "m9"), "--seq-len", "16"),
        "give --seq-len equal to --n-positions");
  auto weight = train_args(text, dir.path() / "m9");
  weight.insert(weight.end(), {"--lm-weight", "0.3"});
  fails(weight, "--lm-weight weighs the LM loss beside a classifier's label loss");
  test::write_file(dir.path() / "latin1.txt", "caf\xe9\ta caf\xe9\nred\tthe red dog\n");
  fails(classify_args(dir.path() / "latin1.txt", dir.path() / "m9"), "latin1.txt:1: not valid UTF-8");
  fails({"fill-mask", "-m", (dir.path() / "m3").string(), "-p", "hello"}, "is not a masked LM");
}

}   // namespace
}   // namespace glassbox
