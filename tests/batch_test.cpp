// Batched forward (Model::forward_batch): sequences of different lengths in one pass, right-padded
// with a padding mask. Each sequence's logits must be exactly (bit for bit) those of its own
// forward, which the fixture tests hold against PyTorch: the rows of a batch go through the same
// kernels in the same order, and the mask keeps every padded position out of every real one.
#include <gtest/gtest.h>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;
using Batch = std::vector<std::vector<std::int32_t>>;

std::vector<float> own_logits(const Model& model, const std::vector<std::int32_t>& tokens) {
  ForwardOptions all;
  all.all_logits = true;
  KVCache cache = model.new_cache();
  return model.forward(tokens, cache, all);
}

// Sequences cut from the fixture's tokens: the longest first, then shorter ones, so that most
// sequences are padded, some by one position and one by almost the whole length.
Batch batch_from(const std::vector<std::int32_t>& tokens) {
  const auto n = static_cast<std::ptrdiff_t>(tokens.size());
  std::vector<std::int32_t> reversed(tokens.rbegin(), tokens.rend());
  return {tokens,
          {tokens.begin(), tokens.begin() + 1},
          {tokens.begin() + 2, tokens.begin() + 5},
          {reversed.begin(), reversed.begin() + (n - 1)},
          {tokens.begin() + 1, tokens.end()}};
}

class BatchTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchTest, EachSequenceGetsExactlyItsOwnLogits) {
  const auto tokens =
      test::read_json(fixture_dir(GetParam()) / "expected.json")["tokens"].get<std::vector<std::int32_t>>();
  ASSERT_GE(tokens.size(), 6u);
  for (Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    const Model model = Model::load(fixture_dir(GetParam()), LoadOptions{q});
    const int V = model.config().vocab_size;
    const auto batch = batch_from(tokens);
    const auto got = model.forward_batch(batch);
    ASSERT_EQ(got.size(), batch.size());
    for (std::size_t b = 0; b < batch.size(); ++b) {
      ASSERT_EQ(got[b].size(), batch[b].size() * V) << "sequence " << b;
      EXPECT_EQ(got[b], own_logits(model, batch[b])) << "sequence " << b << ", " << quantization_name(q);
    }
  }
}

// The padding content is not seen: the same sequence batched beside different neighbours (so
// padded with different lengths of other rows) gives the same logits.
TEST_P(BatchTest, NeighboursDoNotMatter) {
  const auto tokens =
      test::read_json(fixture_dir(GetParam()) / "expected.json")["tokens"].get<std::vector<std::int32_t>>();
  const Model model = Model::load(fixture_dir(GetParam()));
  const std::vector<std::int32_t> short_one(tokens.begin(), tokens.begin() + 3);
  const auto alone = model.forward_batch(Batch{short_one});
  const auto beside_long = model.forward_batch(Batch{tokens, short_one});
  const auto beside_other = model.forward_batch(Batch{short_one, std::vector<std::int32_t>(tokens.size(), 0)});
  EXPECT_EQ(alone[0], beside_long[1]);
  EXPECT_EQ(alone[0], beside_other[0]);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BatchTest, ::testing::ValuesIn(test::model_fixtures()), test::fixture_test_name);

std::string error_of(const Model& model, const Batch& batch) {
  try {
    model.forward_batch(batch);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Batch, BadSequencesAreNamed) {
  const Model model = Model::load(fixture_dir("gpt2-f32"));   // vocabulary 96, context 32
  EXPECT_EQ(error_of(model, {}), "the batch holds no sequences");
  EXPECT_EQ(error_of(model, {{1, 2}, {}}), "sequence 1: no tokens to run");
  EXPECT_EQ(error_of(model, {{1, 2}, {3}, {4, 96}}),
            "sequence 2: token id 96 is out of range: the vocabulary has ids 0..95");
  EXPECT_EQ(error_of(model, {std::vector<std::int32_t>(33, 1)}),
            "sequence 0: 33 tokens do not fit in the context of 32 positions");
  EXPECT_EQ(error_of(model, {std::vector<std::int32_t>(32, 1), {5}}), "(no error)");
}

}   // namespace
}   // namespace glassbox
