// Looking inside the model against the PyTorch reference (tests/fixtures, scripts/make_fixtures.py):
// Hugging Face's output_hidden_states, the logit lens, and head_mask (heads switched off), on the
// logits and on the greedy tokens of generate.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

using test::ids_of;

// (n_layer, n_head) factors: 1, and 0 for the [layer, head] pairs listed.
std::vector<float> head_mask(const ModelConfig& c, const nlohmann::json& silenced) {
  std::vector<float> mask(std::size_t(c.n_layer) * c.n_head, 1.0f);
  for (const auto& pair : silenced) mask[pair[0].get<std::size_t>() * c.n_head + pair[1].get<std::size_t>()] = 0.0f;
  return mask;
}

class InspectTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    expected_ = test::read_json(fixture_dir(GetParam()) / "expected.json");
    tokens_ = ids_of(expected_["tokens"]);
    model_.emplace(Model::load(fixture_dir(GetParam())));
  }
  std::vector<float> forward(ForwardOptions o) const {
    KVCache cache = model_->new_cache();
    return model_->forward(tokens_, cache, o);
  }
  nlohmann::json expected_;
  std::vector<std::int32_t> tokens_;
  std::optional<Model> model_;
};

TEST_P(InspectTest, HiddenStatesMatchPyTorch) {
  const auto& c = model_->config();
  const int T = static_cast<int>(tokens_.size()), C = c.n_embd;
  std::vector<float> states;
  const auto logits = forward({.all_logits = true, .hidden_states = &states});
  ASSERT_EQ(states.size(), std::size_t(c.n_layer + 1) * T * C);
  double max_diff = 0;
  for (int i = 0; i <= c.n_layer; ++i)
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < C; ++k)
        max_diff = std::max(max_diff, std::abs(states[(std::size_t(i) * T + t) * C + k] -
                                               expected_["hidden_states"][i][t][k].get<double>()));
  std::cout << "[ fixture  ] " << GetParam() << ": max |hidden state - PyTorch| = " << max_diff << "\n";
  EXPECT_LT(max_diff, 1e-4);
  EXPECT_EQ(logits, forward({.all_logits = true}));   // asking for them changes nothing else
}

// The lens: at each rank, the probability within 1e-5 of the reference's, and the token the
// reference's unless it is in a near-tie (probabilities within 1e-4 of a neighbour, where float32
// and float64 may order them differently; past the last rank the reference's next is not known).
TEST_P(InspectTest, LensMatchesPyTorch) {
  const auto& c = model_->config();
  const int T = static_cast<int>(tokens_.size()), K = expected_["lens"]["k"].get<int>();
  std::vector<TokenProbability> lens;
  const auto logits = forward({.all_logits = true, .lens_k = K, .lens = &lens});
  ASSERT_EQ(lens.size(), std::size_t(c.n_layer) * T * K);
  double max_diff = 0;
  int ids_checked = 0;
  for (int l = 0; l < c.n_layer; ++l)
    for (int t = 0; t < T; ++t) {
      const auto& want = expected_["lens"]["layers"][l][t];
      const auto p = [&](int r) { return want[r]["p"].get<double>(); };
      for (int r = 0; r < K; ++r) {
        const TokenProbability& got = lens[(std::size_t(l) * T + t) * K + r];
        max_diff = std::max(max_diff, std::abs(got.probability - p(r)));
        const bool tie = (r > 0 && p(r - 1) - p(r) < 1e-4) || r == K - 1 || p(r) - p(r + 1) < 1e-4;
        if (!tie) {
          EXPECT_EQ(got.id, want[r]["id"].get<int>()) << "layer " << l << " position " << t << " rank " << r;
          ++ids_checked;
        }
      }
    }
  std::cout << "[ fixture  ] " << GetParam() << ": max |lens p - PyTorch| = " << max_diff << ", " << ids_checked
            << " ids compared\n";
  EXPECT_LT(max_diff, 1e-5);
  EXPECT_GT(ids_checked, c.n_layer * T * (K - 1) / 2);
  // The last layer's lens is the model's own distribution; without all_logits, the last row's.
  for (int t = 0; t < T; ++t) {
    const auto own = most_probable(std::span(logits).subspan(std::size_t(t) * c.vocab_size, c.vocab_size), K);
    for (int r = 0; r < K; ++r) {
      const TokenProbability& got = lens[(std::size_t(c.n_layer - 1) * T + t) * K + r];
      EXPECT_EQ(got.id, own[r].id);
      EXPECT_EQ(got.probability, own[r].probability);
    }
  }
  std::vector<TokenProbability> last;
  forward({.lens_k = K, .lens = &last});
  ASSERT_EQ(last.size(), std::size_t(c.n_layer) * K);
  for (int l = 0; l < c.n_layer; ++l)
    for (int r = 0; r < K; ++r) {
      EXPECT_EQ(last[std::size_t(l) * K + r].id, lens[(std::size_t(l) * T + T - 1) * K + r].id);
      EXPECT_EQ(last[std::size_t(l) * K + r].probability, lens[(std::size_t(l) * T + T - 1) * K + r].probability);
    }
}

// One head, a whole layer, every head of the model switched off: the logits of a prompt in one
// pass, of the same tokens decoded one at a time through the cache, and greedy generation.
TEST_P(InspectTest, HeadMasksMatchPyTorch) {
  const auto& c = model_->config();
  const int T = static_cast<int>(tokens_.size()), V = c.vocab_size;
  const auto unmasked = forward({.all_logits = true});
  const std::vector<float> ones(std::size_t(c.n_layer) * c.n_head, 1.0f);
  EXPECT_EQ(forward({.all_logits = true, .head_mask = ones}), unmasked);
  for (const auto& m : expected_["head_masks"]) {
    const auto mask = head_mask(c, m["silenced"]);
    const auto got = forward({.all_logits = true, .head_mask = mask});
    double max_diff = 0;
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < V; ++v)
        max_diff = std::max(max_diff, std::abs(got[std::size_t(t) * V + v] - m["logits"][t][v].get<double>()));
    std::cout << "[ fixture  ] " << GetParam() << " silenced " << m["silenced"].dump()
              << ": max |logit - PyTorch| = " << max_diff << "\n";
    EXPECT_LT(max_diff, 1e-4);
    EXPECT_NE(got, unmasked);

    KVCache cache = model_->new_cache();
    double step_diff = 0;
    for (int t = 0; t < T; ++t) {
      const auto step = model_->forward(std::span(tokens_).subspan(t, 1), cache, {.head_mask = mask});
      for (int v = 0; v < V; ++v)
        step_diff = std::max(step_diff, double(std::abs(step[v] - got[std::size_t(t) * V + v])));
    }
    EXPECT_LT(step_diff, 1e-5) << "decoding through the cache with the mask";

    const auto& g = m["greedy"];
    GenerateOptions o;
    o.max_tokens = g["max_tokens"].get<int>();
    o.sampling.temperature = 0;
    o.when_context_full = WhenContextFull::Stop;
    o.head_mask = mask;
    std::vector<std::int32_t> ids;
    const StopReason reason = generate(*model_, ids_of(g["prompt"]), o, [&](const GeneratedToken& t) {
      ids.push_back(t.id);
      return true;
    });
    EXPECT_EQ(ids, ids_of(g["tokens"])) << m["silenced"].dump();
    EXPECT_EQ(stop_reason_name(reason), g["stop"].get<std::string>());
  }
}

// A silenced head's attention probabilities are zero where a hook sees them (Hugging Face returns
// the multiplied probabilities); the other heads' are untouched.
TEST_P(InspectTest, SilencedHeadsAttendToNothing) {
  const auto& c = model_->config();
  const int T = static_cast<int>(tokens_.size());
  const auto capture = [&](std::span<const float> mask) {
    std::vector<float> att;
    TensorHook hook = [&](const NamedTensor& t) {
      if (std::string_view(t.name) == "attn_probs")
        att.insert(att.end(), t.data, t.data + std::size_t(c.n_head) * T * T);
    };
    forward({.all_logits = true, .hook = &hook, .head_mask = mask});
    return att;
  };
  auto mask = std::vector<float>(std::size_t(c.n_layer) * c.n_head, 1.0f);
  mask[0] = 0.0f;   // layer 0, head 0
  const auto plain = capture({}), masked = capture(mask);
  const std::size_t head = std::size_t(T) * T;
  for (std::size_t i = 0; i < head; ++i) EXPECT_EQ(masked[i], 0.0f);
  // Later heads of layer 0 see the same inputs: the same probabilities.
  EXPECT_TRUE(std::equal(plain.begin() + head, plain.begin() + c.n_head * head, masked.begin() + head));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, InspectTest, ::testing::ValuesIn(test::model_fixtures()), test::fixture_test_name);

// Hugging Face gives a block's head mask to its cross-attention too: one head off, with the
// fixture's encoder states, against PyTorch.
TEST(Inspect, HeadMaskReachesCrossAttention) {
  const auto expected = test::read_json(fixture_dir("gpt2-cross-attention") / "expected.json");
  const auto tokens = ids_of(expected["tokens"]);
  std::vector<float> enc;
  for (const auto& row : expected["cross"]["encoder_states"])
    for (const auto& v : row) enc.push_back(v.get<float>());
  const Model model = Model::load(fixture_dir("gpt2-cross-attention"));
  const auto& want = expected["cross"]["head_mask"];
  const auto mask = head_mask(model.config(), want["silenced"]);
  KVCache cache = model.new_cache();
  const auto got = model.forward(tokens, cache, {.all_logits = true, .encoder_states = enc, .head_mask = mask});
  const int V = model.config().vocab_size;
  double max_diff = 0;
  for (std::size_t t = 0; t < tokens.size(); ++t)
    for (int v = 0; v < V; ++v)
      max_diff = std::max(max_diff, std::abs(got[t * V + v] - want["logits"][t][v].get<double>()));
  std::cout << "[ fixture  ] gpt2-cross-attention with a head off: max |logit - PyTorch| = " << max_diff << "\n";
  EXPECT_LT(max_diff, 1e-4);
}

TEST(Inspect, BadOptionsAreClearErrorsAndLeaveTheCache) {
  const Model model = Model::load(fixture_dir("gpt2-f32"));   // 2 layers x 4 heads, 96 tokens
  KVCache cache = model.new_cache();
  const std::vector<std::int32_t> ids{1, 2, 3};
  const auto error = [&](const ForwardOptions& o) -> std::string {
    try {
      model.forward(ids, cache, o);
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "(no error)";
  };
  const std::vector<float> short_mask(7, 1.0f);
  EXPECT_EQ(error({.head_mask = short_mask}), "a head mask needs n_layer x n_head = 2 x 4 = 8 factors, got 7");
  std::vector<float> nan_mask(8, 1.0f);
  nan_mask[5] = std::nanf("");
  EXPECT_EQ(error({.head_mask = nan_mask}), "head mask: layer 1 head 1 has a factor that is not a finite number");
  std::vector<TokenProbability> lens;
  EXPECT_EQ(error({.lens_k = 0, .lens = &lens}), "the lens shows 1 to 96 tokens per layer (the vocabulary), got 0");
  EXPECT_EQ(error({.lens_k = 97, .lens = &lens}), "the lens shows 1 to 96 tokens per layer (the vocabulary), got 97");
  EXPECT_EQ(cache.size(), 0);
  EXPECT_EQ(error({.lens_k = 96, .lens = &lens}), "(no error)");
  EXPECT_EQ(lens.size(), 2u * 96);

  GenerateOptions o;
  o.lens = -1;
  EXPECT_THROW(Generator(model, ids, o), InvalidArgument);
  o.lens = 0;
  o.head_mask = short_mask;
  EXPECT_THROW(Generator(model, ids, o), InvalidArgument);
}

// generate's lens: each token comes with the lens at the position that produced it, which is
// forward's lens at that position.
TEST(Inspect, GenerateGivesEachTokensLens) {
  const Model model = Model::load(fixture_dir("gpt2-f32"));
  const auto& c = model.config();
  const std::vector<std::int32_t> prompt{5, 17, 40};
  GenerateOptions o;
  o.max_tokens = 4;
  o.sampling.temperature = 0;
  o.lens = 3;
  std::vector<std::int32_t> seq = prompt;
  int steps = 0;
  generate(model, prompt, o, [&](const GeneratedToken& t) {
    KVCache cache = model.new_cache();
    std::vector<TokenProbability> want;
    model.forward(seq, cache, {.lens_k = 3, .lens = &want});
    EXPECT_EQ(t.lens.size(), std::size_t(c.n_layer) * 3);
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(t.lens[i].id, want[i].id);
      EXPECT_NEAR(t.lens[i].probability, want[i].probability, 1e-6);
    }
    EXPECT_EQ(t.lens[std::size_t(c.n_layer - 1) * 3].id, t.id);   // greedy: the last layer's first
    seq.push_back(t.id);
    ++steps;
    return true;
  });
  EXPECT_EQ(steps, 4);
}

}   // namespace
}   // namespace glassbox
