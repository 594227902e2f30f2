// A bidirectional encoder (config "bidirectional": every position sees every other, as BERT) with
// a mask token, at inference: the same weights as a GPT give PyTorch's forward(causal=False)
// logits, and such a model refuses to generate. Its masked-LM training is checked in
// training_test.cpp and cli_train_test.cpp.
#include <gtest/gtest.h>

#include <cmath>

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

}   // namespace
}   // namespace glassbox
