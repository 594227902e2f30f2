// The interpretability experiments (glassbox/experiments.h, glassbox/saliency.h) against their
// float64 PyTorch reference (tests/fixtures/experiments, scripts/make_experiment_fixtures.py), on
// every model type: activation patching, direct logit attribution, steering, neurons, saliency.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "test_util.h"
#ifdef GLASSBOX_TEST_TRAINING
#include "glassbox/saliency.h"
#endif

namespace glassbox {
namespace {

using test::fixture_dir;

using test::ids_of;

// The reference's tolerances (the fixtures' README): raw metrics and attribution parts 1e-5,
// normalized grids 1e-4 (every fixture's clean-corrupted gap is at least 1), neurons 1e-5.
constexpr double kRaw = 1e-5, kGrid = 1e-4, kNeuron = 1e-5;

class ExperimentTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    want_ = test::read_json(fixture_dir("experiments") / (GetParam() + ".json"));
    model_.emplace(Model::load(fixture_dir(want_["model"].get<std::string>())));
    clean_ = ids_of(want_["clean"]);
    corrupted_ = ids_of(want_["corrupted"]);
  }
  nlohmann::json want_;
  std::optional<Model> model_;
  std::vector<std::int32_t> clean_, corrupted_;
};

// Largest |got - want| over a grid [rows][cols] laid out row by row.
double max_diff(std::span<const float> got, const nlohmann::json& want) {
  double worst = 0;
  std::size_t i = 0;
  for (const auto& row : want)
    for (const auto& v : row) worst = std::max(worst, std::abs(double(got[i++]) - v.get<double>()));
  EXPECT_EQ(i, got.size());
  return worst;
}

TEST_P(ExperimentTest, PatchingMatchesPyTorch) {
  const auto& want = want_["patch"];
  const PatchResult got = patch(*model_, clean_, corrupted_, want_["answer"], want_["wrong"]);
  EXPECT_NEAR(got.clean, want["clean"].get<double>(), kRaw);
  EXPECT_NEAR(got.corrupted, want["corrupted"].get<double>(), kRaw);
  EXPECT_EQ(got.layers, model_->config().n_layer);
  EXPECT_EQ(got.positions, int(clean_.size()));
  for (const PatchSite site : {PatchSite::ResidPre, PatchSite::AttnOut, PatchSite::MlpOut, PatchSite::Head}) {
    const std::string name(patch_site_name(site));
    const double diff = max_diff(got.grid(site), want[name]);
    std::cout << "[ fixture  ] " << GetParam() << " " << name << ": max |normalized - PyTorch| = " << diff << "\n";
    EXPECT_LE(diff, kGrid) << name;
  }
}

TEST_P(ExperimentTest, PatchingReportsEachLayerAndStops) {
  std::vector<std::pair<PatchSite, int>> seen;
  PatchOptions o;
  o.sites = {PatchSite::Head, PatchSite::MlpOut};
  o.progress = [&](const PatchProgress& p) {
    seen.push_back({p.site, p.layer});
    EXPECT_EQ(p.done, int(seen.size()));
    EXPECT_EQ(p.total, 2 * model_->config().n_layer);
    EXPECT_EQ(p.row.size(), std::size_t(p.site == PatchSite::Head ? model_->config().n_head : clean_.size()));
    return true;
  };
  const PatchResult got = patch(*model_, clean_, corrupted_, want_["answer"], want_["wrong"], o);
  EXPECT_TRUE(got.resid_pre.empty());
  EXPECT_TRUE(got.attn_out.empty());
  EXPECT_LE(max_diff(got.head, want_["patch"]["head"]), kGrid);
  ASSERT_EQ(seen.size(), std::size_t(2 * model_->config().n_layer));
  EXPECT_EQ(seen.front(), std::make_pair(PatchSite::Head, 0));
  EXPECT_EQ(seen.back(), std::make_pair(PatchSite::MlpOut, model_->config().n_layer - 1));
  int calls = 0;
  o.progress = [&](const PatchProgress&) { return ++calls < 2; };
  EXPECT_THROW(patch(*model_, clean_, corrupted_, want_["answer"], want_["wrong"], o), Cancelled);
  EXPECT_EQ(calls, 2);
}

// Patching one layer at a time (what the JS API runs, returning to its event loop between layers):
// the same bits as patch(), each step's row already its final value.
TEST_P(ExperimentTest, PatchingStepByStepIsPatch) {
  const PatchResult whole = patch(*model_, clean_, corrupted_, want_["answer"], want_["wrong"]);
  Patching run(*model_, clean_, corrupted_, want_["answer"], want_["wrong"], {PatchSite::MlpOut, PatchSite::ResidPre});
  EXPECT_EQ(run.result().clean, whole.clean);
  EXPECT_EQ(run.result().corrupted, whole.corrupted);
  int steps = 0;
  while (!run.done()) {
    const PatchProgress p = run.step();
    ++steps;
    EXPECT_EQ(p.done, steps);
    EXPECT_EQ(p.site, steps <= model_->config().n_layer ? PatchSite::MlpOut : PatchSite::ResidPre);
    const std::vector<float>& grid = whole.grid(p.site);
    EXPECT_TRUE(std::equal(p.row.begin(), p.row.end(), grid.begin() + std::ptrdiff_t(p.layer) * p.row.size()));
  }
  EXPECT_EQ(steps, 2 * model_->config().n_layer);
  EXPECT_THROW(run.step(), InvalidArgument);
  const PatchResult got = run.take();
  EXPECT_EQ(got.resid_pre, whole.resid_pre);
  EXPECT_EQ(got.mlp_out, whole.mlp_out);
  EXPECT_TRUE(got.attn_out.empty());
  EXPECT_TRUE(got.head.empty());
}

TEST_P(ExperimentTest, AttributionMatchesPyTorch) {
  if (!want_.contains("attribute")) {   // post-norm: refused, naming why
    try {
      attribute(*model_, clean_, want_["answer"], want_["wrong"].get<std::int32_t>());
      FAIL() << "attribution on a post-norm model";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("post-norm"), std::string::npos) << e.what();
    }
    return;
  }
  for (const auto& want : want_["attribute"]) {
    const std::optional<std::int32_t> wrong =
        want.contains("wrong") ? std::optional(want["wrong"].get<std::int32_t>()) : std::nullopt;
    const Attribution got = attribute(*model_, clean_, want["answer"], wrong);
    EXPECT_NEAR(got.embed, want["embed"].get<double>(), kRaw);
    EXPECT_NEAR(got.pos_embed, want["pos_embed"].get<double>(), kRaw);
    EXPECT_NEAR(got.bias, want["bias"].get<double>(), kRaw);
    EXPECT_NEAR(got.total, want["total"].get<double>(), kRaw);
    double worst = 0, sum = got.embed + got.pos_embed + got.bias;
    for (int l = 0; l < got.layers; ++l) {
      worst = std::max(worst, std::abs(got.mlp[l] - want["mlp"][l].get<double>()));
      sum += got.mlp[l];
      for (int h = 0; h < got.heads_per_layer; ++h) {
        const double v = got.heads[std::size_t(l) * got.heads_per_layer + h];
        worst = std::max(worst, std::abs(v - want["heads"][l][h].get<double>()));
        sum += v;
      }
    }
    std::cout << "[ fixture  ] " << GetParam() << " attribution" << (wrong ? "" : " (answer alone)")
              << ": max |part - PyTorch| = " << worst << ", residual " << got.residual << "\n";
    EXPECT_LE(worst, kRaw);
    EXPECT_NEAR(got.total - sum, got.residual, 1e-12);
    EXPECT_LE(std::abs(got.residual), kRaw);
  }
}

TEST_P(ExperimentTest, NeuronsMatchPyTorch) {
  const auto& want = want_["neurons"];
  const int k = want["k"], L = model_->config().n_layer, T = int(clean_.size());
  const auto top = top_neurons(*model_, clean_, k);
  ASSERT_EQ(top.size(), std::size_t(L) * T * k);
  double worst = 0;
  for (int l = 0; l < L; ++l)
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < k; ++i) {
        const NeuronValue& got = top[(std::size_t(l) * T + t) * k + i];
        EXPECT_EQ(got.index, want["top"][l][t][i]["index"].get<int>()) << "layer " << l << " position " << t;
        worst = std::max(worst, std::abs(got.value - want["top"][l][t][i]["value"].get<double>()));
      }
  EXPECT_LE(worst, kNeuron);
  // one neuron over the prompt: the first top neuron of the last layer's last position
  const int n = want["top"][L - 1][T - 1][0]["index"];
  const auto values = neuron_activations(*model_, clean_, L - 1, n);
  ASSERT_EQ(values.size(), std::size_t(T));
  for (int t = 0; t < T; ++t) EXPECT_NEAR(values[t], want["mlp_act"][L - 1][t][n].get<double>(), kNeuron);
}

TEST_P(ExperimentTest, SteeringMatchesPyTorch) {
  const auto& want = want_["steer"];
  const int layer = want["layer"];
  for (const auto& run : want["runs"]) {
    const float c = run["coefficient"];
    const auto v = steering_vector(*model_, layer, c, ids_of(want["plus"]), ids_of(want["minus"]));
    ASSERT_EQ(v.size(), want["vector"].size());
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], c * want["vector"][i].get<double>(), kRaw);
    // the steered logits of the clean prompt's last position
    KVCache cache = model_->new_cache();
    ForwardOptions o;
    o.steer = v;
    o.steer_layer = layer;
    const auto logits = model_->forward(clean_, cache, o);
    double worst = 0;
    for (std::size_t i = 0; i < logits.size(); ++i)
      worst = std::max(worst, std::abs(logits[i] - run["logits"][i].get<double>()));
    EXPECT_LE(worst, 1e-4) << "coefficient " << c;
    // greedy generation, steered at every position (the margins are at least 1e-3)
    GenerateOptions g;
    g.max_tokens = run["greedy"]["max_tokens"];
    g.sampling.temperature = 0;
    g.steer = v;
    g.steer_layer = layer;
    g.eos_token_ids = std::vector<std::int32_t>{};
    std::vector<std::int32_t> tokens;
    generate(*model_, ids_of(run["greedy"]["prompt"]), g, [&](const GeneratedToken& t) {
      tokens.push_back(t.id);
      return true;
    });
    EXPECT_EQ(tokens, ids_of(run["greedy"]["tokens"])) << "coefficient " << c;
  }
}

#ifdef GLASSBOX_TEST_TRAINING
TEST_P(ExperimentTest, SaliencyMatchesPyTorch) {
  if (!want_.contains("saliency")) {   // no backward pass for this type: refused, naming it
    try {
      saliency(*model_, clean_, 0);
      FAIL() << "saliency on " << want_["model_type"];
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(want_["model_type"].get<std::string>()), std::string::npos) << e.what();
    }
    return;
  }
  for (const auto& want : want_["saliency"]) {
    const auto got = saliency(*model_, clean_, want["target"]);
    double largest = 0, worst = 0;
    for (const auto& s : want["scores"]) largest = std::max(largest, std::abs(s.get<double>()));
    for (std::size_t t = 0; t < got.size(); ++t)
      worst = std::max(worst, std::abs(got[t] - want["scores"][t].get<double>()));
    std::cout << "[ fixture  ] " << GetParam() << " saliency: max |score - PyTorch| / max |score| = " << worst / largest
              << "\n";
    EXPECT_LE(worst, 1e-4 * largest);
  }
}
#endif

// Steering with a coefficient of 0 adds zeros: generation is plain generation, bit for bit.
TEST(Experiments, SteeringByZeroIsPlainGeneration) {
  const Model model = Model::load(fixture_dir("gpt2-f32"));
  const std::vector<std::int32_t> prompt = {5, 9, 13, 2};
  GenerateOptions plain;
  plain.max_tokens = 12;
  plain.sampling.temperature = 0.8f;
  plain.sampling.seed = 7;
  GenerateOptions steered = plain;
  steered.steer = steering_vector(model, 1, 0.0f, std::vector<std::int32_t>{1, 2, 3}, std::vector<std::int32_t>{4, 5});
  steered.steer_layer = 1;
  auto run = [&](const GenerateOptions& o) {
    std::vector<std::vector<float>> logits;
    generate(model, prompt, o, [&](const GeneratedToken& t) {
      logits.emplace_back(t.logits.begin(), t.logits.end());
      return true;
    });
    return logits;
  };
  EXPECT_EQ(run(plain), run(steered));
}

// Bad input: a clear error naming the problem, on the C++ surface.
TEST(Experiments, BadInputIsRefusedClearly) {
  const Model model = Model::load(fixture_dir("gpt2-f32"));
  const std::vector<std::int32_t> a = {1, 2, 3, 4}, b = {1, 2, 5, 4}, shorter = {1, 2, 3};
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message([&] { patch(model, a, shorter, 1, 2); }),
            "the clean prompt has 4 tokens and the corrupted one 3: patching needs prompts of the same length");
  EXPECT_NE(message([&] { patch(model, a, a, 1, 2); }).find("give the same metric"), std::string::npos);
  EXPECT_NE(message([&] { patch(model, a, b, 96, 2); }).find("the answer is token id 96, outside the vocabulary"),
            std::string::npos);
  PatchOptions no_sites;
  no_sites.sites.clear();
  EXPECT_NE(message([&] { patch(model, a, b, 1, 2, no_sites); }).find("no site"), std::string::npos);
  EXPECT_NE(message([&] { attribute(model, {}, 1); }).find("the prompt has no tokens"), std::string::npos);
  EXPECT_NE(message([&] { steering_vector(model, 2, 1.0f, a, b); }).find("there is no layer 2"), std::string::npos);
  EXPECT_NE(message([&] { steering_vector(model, 0, NAN, a, b); }).find("not a finite number"), std::string::npos);
  EXPECT_NE(message([&] { neuron_activations(model, a, 0, model.config().n_inner); }).find("there is no neuron 128"),
            std::string::npos);
  EXPECT_NE(message([&] { top_neurons(model, a, 0); }).find("1 to 128"), std::string::npos);
  KVCache cache = model.new_cache();
  const std::vector<float> short_vector(5, 1.0f);
  ForwardOptions o;
  o.steer = short_vector;
  EXPECT_NE(message([&] { model.forward(a, cache, o); }).find("the vector has 5 values"), std::string::npos);
  EXPECT_EQ(cache.size(), 0);
  EXPECT_EQ(parse_patch_site("head"), PatchSite::Head);
  EXPECT_NE(message([] { parse_patch_site("heads"); }).find("unknown patching site 'heads'"), std::string::npos);
}

// A classifier or a masked LM has no next-token metric: refused by name.
TEST(Experiments, RefusesModelsWithoutNextTokenLogits) {
  const Model classifier = Model::load(fixture_dir("gpt2-classifier"));
  const std::vector<std::int32_t> a = {1, 2, 3}, b = {1, 4, 3};
  try {
    patch(classifier, a, b, 1, 2);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("classifier"), std::string::npos) << e.what();
  }
}

// int8 weights: the experiments run on them (dequantized rows for the metric), within int8's
// error of F32's (a few percent on these tiny random models).
TEST(Experiments, RunOnInt8Weights) {
  const auto want = test::read_json(fixture_dir("experiments") / "gpt2-f32.json");
  const Model model = Model::load(fixture_dir("gpt2-f32"), {.quantize = Quantization::Int8});
  const PatchResult got = patch(model, ids_of(want["clean"]), ids_of(want["corrupted"]), want["answer"], want["wrong"]);
  EXPECT_NEAR(got.clean, want["patch"]["clean"].get<double>(), 0.05 * want["patch"]["clean"].get<double>());
  const Attribution parts = attribute(model, ids_of(want["clean"]), want["answer"], want["wrong"].get<std::int32_t>());
  EXPECT_NEAR(parts.total, got.clean, 1e-9);
  EXPECT_LE(std::abs(parts.residual), 0.05);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ExperimentTest,
                         ::testing::Values("gpt2-f32", "gpt2-single-head", "gpt2-sinusoidal", "openai-gpt", "llama-gqa",
                                           "mistral-sliding", "qwen2-bf16", "qwen3-qk-norm", "gpt-neox-parallel",
                                           "gpt-neox-sequential-f16-v5", "gpt-neo-local"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}   // namespace
}   // namespace glassbox
