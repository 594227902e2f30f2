// A bidirectional encoder (config "bidirectional": every position sees every other, as BERT) with
// a mask token, at inference: the same weights as a GPT give PyTorch's forward(causal=False)
// logits, and such a model refuses to generate. Its masked-LM training is checked in
// training_test.cpp and cli_train_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

TEST(Bidirectional, ConfigMakesAttentionBidirectionalAndGenerationIsRefused) {
  // gpt2-f32's weights with "bidirectional": true give what forward(..., mask bidirectional) gives.
  const auto dir = fixture_dir("gpt2-f32");
  auto j = test::read_json(dir / "config.json");
  j["bidirectional"] = true;
  j["mask_token_id"] = 95;
  const Model encoder = Model::from_parts(j.dump(), SafeTensors::open(dir / "model.safetensors"));
  EXPECT_TRUE(encoder.config().bidirectional);
  EXPECT_EQ(encoder.config().mask_token_id, 95);
  const auto expected = test::read_json(dir / "expected.json");
  const auto tokens = expected["tokens"].get<std::vector<std::int32_t>>();
  ForwardOptions o;
  o.all_logits = true;
  KVCache cache = encoder.new_cache();
  const auto got = encoder.forward(tokens, cache, o);
  const int V = encoder.config().vocab_size;
  double max_diff = 0;
  for (std::size_t t = 0; t < tokens.size(); ++t)
    for (int v = 0; v < V; ++v)
      max_diff = std::max(max_diff, std::abs(got[t * V + v] - expected["bidirectional"]["logits"][t][v].get<double>()));
  EXPECT_LT(max_diff, 1e-4);   // PyTorch's forward(causal=False)
  EXPECT_EQ(encoder.forward_batch(std::vector<std::vector<std::int32_t>>{tokens})[0], got);
  // Appending to a used cache would leave the earlier positions blind to the new tokens.
  EXPECT_THROW(encoder.forward(std::span(tokens).first(1), cache), InvalidArgument);
  try {
    generate(encoder, tokens, GenerateOptions{}, [](const GeneratedToken&) { return true; });
    ADD_FAILURE() << "generation from a bidirectional model";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("does not generate text"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ModelConfig::parse(R"({"model_type": "gpt2", "vocab_size": 10, "mask_token_id": 10})"),
               ModelFormatError);
  EXPECT_THROW(ModelConfig::parse(R"({"model_type": "gpt2", "bidirectional": "yes"})"), ModelFormatError);
}

TEST(Bidirectional, LogitRowsRunTheHeadOnThoseRowsAlone) {
  // A masked LM's guesses need the logits of its masks' rows: with logit_rows the final norm and
  // the LM head see those rows alone (the "logits" tensor is (R,V)), and each row is bit for bit
  // the same position's row of the full (T,V) pass, F32 and int8 alike.
  const auto dir = fixture_dir("gpt2-f32");
  auto j = test::read_json(dir / "config.json");
  j["bidirectional"] = true;
  j["mask_token_id"] = 95;
  const auto tokens = test::read_json(dir / "expected.json")["tokens"].get<std::vector<std::int32_t>>();
  ASSERT_GE(tokens.size(), 4u);
  for (Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    const Model encoder = Model::from_parts(j.dump(), SafeTensors::open(dir / "model.safetensors"), "config.json", {q});
    const int V = encoder.config().vocab_size;
    ForwardOptions all;
    all.all_logits = true;
    KVCache full_cache = encoder.new_cache();
    const auto full = encoder.forward(tokens, full_cache, all);
    const std::vector<std::int32_t> rows = {0, 2, static_cast<std::int32_t>(tokens.size() - 1)};
    std::vector<std::array<int, 3>> logits_shapes;
    const TensorHook watch = [&](const NamedTensor& t) {
      if (std::string_view(t.name) == "logits") logits_shapes.push_back(t.shape);
    };
    ForwardOptions some;
    some.logit_rows = rows;
    some.hook = &watch;
    KVCache cache = encoder.new_cache();
    const auto got = encoder.forward(tokens, cache, some);
    ASSERT_EQ(got.size(), rows.size() * V);
    ASSERT_EQ(logits_shapes.size(), 1u);
    EXPECT_EQ(logits_shapes[0][0], 3) << "the LM head ran on the three rows asked for";
    for (std::size_t r = 0; r < rows.size(); ++r)
      EXPECT_TRUE(std::equal(got.begin() + r * V, got.begin() + (r + 1) * V, full.begin() + rows[r] * V))
          << quantization_name(q) << " row " << rows[r];
  }
  // Rows out of order, repeated, outside the call, or beside all_logits or the lens: refused.
  const Model encoder = Model::from_parts(j.dump(), SafeTensors::open(dir / "model.safetensors"));
  const auto refused = [&](std::vector<std::int32_t> rows, bool all_logits, int lens_k) {
    ForwardOptions o;
    o.logit_rows = rows;
    o.all_logits = all_logits;
    std::vector<TokenProbability> lens;
    if (lens_k) o.lens = &lens, o.lens_k = lens_k;
    KVCache cache = encoder.new_cache();
    try {
      encoder.forward(tokens, cache, o);
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("logit rows"), std::string::npos) << e.what();
      return true;
    }
    return false;
  };
  const auto T = static_cast<std::int32_t>(tokens.size());
  EXPECT_TRUE(refused({2, 1}, false, 0));
  EXPECT_TRUE(refused({1, 1}, false, 0));
  EXPECT_TRUE(refused({-1}, false, 0));
  EXPECT_TRUE(refused({T}, false, 0));
  EXPECT_TRUE(refused({0}, true, 0));
  EXPECT_TRUE(refused({0}, false, 3));
  EXPECT_FALSE(refused({0, T - 1}, false, 0));
}

}   // namespace
}   // namespace glassbox
