// The CLI's experiments (patch, attribute, forward --saliency / --neurons / --neuron, generate
// --steer) against the float64 PyTorch reference (tests/fixtures/experiments), as a user runs them.
#include <gtest/gtest.h>

#include <cmath>

#include "test_util.h"

namespace glassbox {
namespace {

using test::run_cli;

nlohmann::json reference(const std::string& name) {
  return test::read_json(test::fixture_dir("experiments") / (name + ".json"));
}

std::string ids_arg(const nlohmann::json& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ",") + std::to_string(id.get<int>());
  return s;
}

std::string tok(const nlohmann::json& id) { return "#" + std::to_string(id.get<int>()); }

// The JSON a successful command prints.
nlohmann::json run_json(const std::vector<std::string>& args) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double max_diff(const nlohmann::json& got, const nlohmann::json& want) {
  if (want.is_number()) return std::abs(got.get<double>() - want.get<double>());
  EXPECT_EQ(got.size(), want.size());
  double worst = 0;
  for (std::size_t i = 0; i < want.size() && i < got.size(); ++i) worst = std::max(worst, max_diff(got[i], want[i]));
  return worst;
}

class CliExperiments : public ::testing::TestWithParam<std::string> {};

TEST_P(CliExperiments, PatchAndAttributeMatchPyTorch) {
  const auto want = reference(GetParam());
  const std::string dir = test::fixture_dir(want["model"].get<std::string>()).string();
  const auto got =
      run_json({"patch", "-m", dir, "--clean-tokens", ids_arg(want["clean"]), "--corrupted-tokens",
                ids_arg(want["corrupted"]), "--answer", tok(want["answer"]), "--wrong", tok(want["wrong"])});
  EXPECT_LE(max_diff(got["clean"], want["patch"]["clean"]), 1e-5);
  EXPECT_LE(max_diff(got["corrupted"], want["patch"]["corrupted"]), 1e-5);
  for (const char* site : {"resid_pre", "attn_out", "mlp_out", "head"})
    EXPECT_LE(max_diff(got[site], want["patch"][site]), 1e-4) << site;
  // --what: only the sites asked for
  const auto heads = run_json({"patch", "-m", dir, "--clean-tokens", ids_arg(want["clean"]), "--corrupted-tokens",
                               ids_arg(want["corrupted"]), "--answer", tok(want["answer"]), "--wrong",
                               tok(want["wrong"]), "--what", "head"});
  EXPECT_FALSE(heads.contains("resid_pre"));
  EXPECT_LE(max_diff(heads["head"], want["patch"]["head"]), 1e-4);
  if (!want.contains("attribute")) return;
  for (const auto& w : want["attribute"]) {
    std::vector<std::string> args = {"attribute",     "-m", dir, "--tokens", ids_arg(want["clean"]), "--answer",
                                     tok(w["answer"])};
    if (w.contains("wrong")) args.insert(args.end(), {"--wrong", tok(w["wrong"])});
    const auto a = run_json(args);
    for (const char* part : {"embed", "pos_embed", "heads", "mlp", "bias", "total"})
      EXPECT_LE(max_diff(a[part], w[part]), 1e-5) << part;
    EXPECT_LE(std::abs(a["residual"].get<double>()), 1e-5);
  }
}

TEST_P(CliExperiments, ForwardSaliencyAndNeuronsMatchPyTorch) {
  const auto want = reference(GetParam());
  const std::string dir = test::fixture_dir(want["model"].get<std::string>()).string();
  const auto& neurons = want["neurons"];
  const int L = int(neurons["top"].size()), T = int(want["clean"].size());
  const auto got = run_json({"forward", "-m", dir, "--tokens", ids_arg(want["clean"]), "--neurons",
                             std::to_string(neurons["k"].get<int>()), "--neuron", std::to_string(L - 1) + ":7"});
  for (int l = 0; l < L; ++l)
    for (int t = 0; t < T; ++t)
      for (std::size_t i = 0; i < neurons["top"][l][t].size(); ++i) {
        EXPECT_EQ(got["neurons"][l][t][i]["index"], neurons["top"][l][t][i]["index"]);
        EXPECT_LE(max_diff(got["neurons"][l][t][i]["value"], neurons["top"][l][t][i]["value"]), 1e-5);
      }
  for (int t = 0; t < T; ++t) EXPECT_LE(max_diff(got["neuron"][t], neurons["mlp_act"][L - 1][t][7]), 1e-5);
  if (!want.contains("saliency")) return;
  for (const auto& w : want["saliency"]) {
    std::vector<std::string> args = {"forward", "-m", dir, "--tokens", ids_arg(want["clean"]), "--saliency"};
    if (!w["default"].get<bool>()) args.insert(args.end(), {"--target", tok(w["target"])});
    const auto s = run_json(args);
    EXPECT_EQ(s["target"], w["target"]);   // given, or the last position's argmax
    double largest = 0;
    for (const auto& v : w["scores"]) largest = std::max(largest, std::abs(v.get<double>()));
    EXPECT_LE(max_diff(s["saliency"], w["scores"]), 1e-4 * largest);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliExperiments,
                         ::testing::Values("gpt2-f32", "openai-gpt", "qwen2-bf16", "gpt-neox-parallel"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// The example of the page and the README on the shipped model: text prompts, answers as text.
TEST(CliExperimentsText, TheExampleRunsWithTextAndTokens) {
  const std::string clean = "When Mary and John went to the store, John gave a drink to";
  const std::string corrupted = "When Mary and John went to the store, Mary gave a drink to";
  const auto by_text = run_json(
      {"patch", "--clean", clean, "--corrupted", corrupted, "--answer", " Mary", "--wrong", " John", "--what", "head"});
  const auto ids = run_cli({"tokenize"}, clean), other = run_cli({"tokenize"}, corrupted);
  const auto mary = run_cli({"tokenize"}, " Mary"), john = run_cli({"tokenize"}, " John");
  auto arg = [](const std::string& json) { return ids_arg(nlohmann::json::parse(json)); };
  const auto by_ids = run_json({"patch", "--clean-tokens", arg(ids.out), "--corrupted-tokens", arg(other.out),
                                "--answer", "#" + arg(mary.out), "--wrong", "#" + arg(john.out), "--what", "head"});
  EXPECT_EQ(by_text, by_ids);
  EXPECT_EQ(by_text["head"].size(), 6u);
}

// generate --steer: a coefficient of 0 is plain generation (the same text, bit for bit), another
// coefficient changes it.
TEST(CliExperimentsText, SteeringByZeroIsPlainGeneration) {
  const std::vector<std::string> plain = {"generate", "-p", "The day was", "-n", "16", "--temperature", "0"};
  auto with = [&](const std::string& steer) {
    auto args = plain;
    args.insert(args.end(), {"--steer", steer});
    return run_cli(args);
  };
  const auto base = run_cli(plain);
  ASSERT_EQ(base.exit_code, 0) << base.err;
  EXPECT_EQ(with("2:0:Love/Hate").out, base.out);
  EXPECT_NE(with("2:8:Love/Hate").out, base.out);
  // A and B verbatim: split at the first two ':' and the first '/' after them
  const auto colons = with("2:8:a:b/c/d");
  EXPECT_EQ(colons.exit_code, 0) << colons.err;
}

}   // namespace
}   // namespace glassbox
