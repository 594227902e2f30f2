// Int8 and int4 models against an independent PyTorch emulation of the quantized products
// (scripts/quantized_reference.py, tests/fixtures/quantized/<fixture>.json): the fixtures' float64
// forward passes with every matrix product replaced by the contract of kernels/quantized.h. Where
// model_test.cpp's QuantizedLogitsStayNearPyTorch bounds the quantization error itself (loosely:
// random weights are the worst case for 16 levels), this bounds the engine's distance from what
// that quantization must give, tightly enough that a wrong row slice, nibble or scale shows.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "glassbox/model.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

// What is left between the engine and the reference is its float32 arithmetic outside the
// products (norms, attention, activations, the bias added in float32): a few float32 ulps of the
// logits. An activation that lies next to a rounding point of its int8 quantization may round the
// other way in float32 than in float64, and one such step moves the logits by up to ~0.1; the file
// holds the logits for every way of rounding the activations within 1e-6 (relative) of one
// ("near_ties", "alternatives"), and the engine must match one of them. The bound keeps a margin of
// about 3x over the largest difference of any fixture (printed per fixture and mode); each of the
// reference script's deliberate mistakes (nibble order, a row's scales, activations left in F32,
// another int4 rule) moves the logits by more than 0.1 in every fixture.
constexpr double kMaxLogitDiff = 1e-5;

// The largest |got - want| over the (T,V) logits.
double max_diff(const std::vector<float>& got, const nlohmann::json& want, int V) {
  double m = 0;
  for (std::size_t t = 0; t < want.size(); ++t)
    for (int v = 0; v < V; ++v) m = std::max(m, std::abs(got[t * V + v] - want[t][v].get<double>()));
  return m;
}

class QuantizedReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedReferenceTest, LogitsMatchTheQuantizedReference) {
  const auto expected = test::read_json(fixture_dir(GetParam()) / "expected.json");
  const auto reference = test::read_json(fixture_dir("quantized") / (GetParam() + ".json"));
  const auto tokens = reference["tokens"].get<std::vector<std::int32_t>>();
  ASSERT_EQ(tokens, expected["tokens"].get<std::vector<std::int32_t>>())
      << "tests/fixtures/quantized/" << GetParam() << ".json is stale: run scripts/quantized_reference.py";
  for (Quantization q : {Quantization::Int8, Quantization::Int4}) {
    const std::string name = quantization_name(q);
    const Model model = Model::load(fixture_dir(GetParam()), LoadOptions{q});
    const int V = model.config().vocab_size;
    ForwardOptions o;
    o.all_logits = true;
    KVCache cache = model.new_cache();
    const auto got = model.forward(tokens, cache, o);
    ASSERT_EQ(got.size(), tokens.size() * V);
    // The closest of the reference's logits: its own rounding, or another of its near ties'.
    const auto& want = reference[name];
    double diff = max_diff(got, want["logits"], V);
    std::string which = "as rounded in float64";
    for (const auto& alternative : want["alternatives"]) {
      const double d = max_diff(got, alternative["logits"], V);
      if (d < diff) diff = d, which = "near ties " + alternative["flipped"].dump() + " rounded the other way";
    }
    const double quantization_error = max_diff(got, expected["logits"], V);
    std::cout << "[ fixture  ] " << GetParam() << " " << name << ": max |logit - quantized reference| = " << diff
              << " (" << which << ", of " << want["near_ties"].size()
              << " near ties; quantization itself moves them by up to " << quantization_error << ")\n";
    EXPECT_LT(diff, kMaxLogitDiff) << name;
    // The reference really is the quantized model, far from the F32 logits.
    EXPECT_GT(quantization_error, 100 * kMaxLogitDiff) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, QuantizedReferenceTest, ::testing::ValuesIn(test::model_fixtures()),
                         test::fixture_test_name);

}   // namespace
}   // namespace glassbox
