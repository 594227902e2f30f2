// The bad-input table (docs/bad-input.md), the rows of the interpretability experiments (E1-E9):
// each bad input, through the C++ API and the CLI, fails with the fragment its row shows, as one
// line on the CLI.
#include <gtest/gtest.h>

#include <cmath>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "bad_input_table.h"
#include "test_util.h"
#ifdef GLASSBOX_TEST_TRAINING
#include "glassbox/saliency.h"
#endif

namespace glassbox {
namespace {

using test::expect_cli;
using test::expect_cpp;

const std::vector<std::int32_t> kPrompt = {1, 2, 3, 4, 5}, kOther = {1, 2, 6, 4, 5}, kLonger = {1, 2, 3, 4, 5, 6};

std::string fixture(const std::string& name) { return test::fixture_dir(name).string(); }

TEST(BadInputExperiments, E1PromptsOfDifferentLengths) {
  const Model model = Model::load(fixture("gpt2-f32"));
  expect_cpp<InvalidArgument>("E1", [&] { patch(model, kPrompt, kLonger, 1, 2); });
  expect_cli("E1", {"patch", "-m", fixture("gpt2-f32"), "--clean-tokens", "1,2,3,4,5", "--corrupted-tokens",
                    "1,2,3,4,5,6", "--answer", "#1", "--wrong", "#2"});
}

TEST(BadInputExperiments, E2AnAnswerOfSeveralTokens) {
  expect_cli("E2", {"patch", "-m", GLASSBOX_SHIPPED_MODEL_DIR, "--clean", "a b", "--corrupted", "a c", "--answer",
                    " Mary Ann", "--wrong", " John"});
}

TEST(BadInputExperiments, E3SteeringAtALayerTheModelLacks) {
  const Model model = Model::load(fixture("gpt2-f32"));
  expect_cpp<InvalidArgument>("E3", [&] { steering_vector(model, 2, 1.0f, kPrompt, kOther); });
  KVCache cache = model.new_cache();
  const std::vector<float> v(std::size_t(model.config().n_embd), 1.0f);
  ForwardOptions o;
  o.steer = v;
  o.steer_layer = 2;
  expect_cpp<InvalidArgument>("E3", [&] { model.forward(kPrompt, cache, o); });
  expect_cli("E3", {"generate", "-m", fixture("gpt2-bytes"), "-p", "hi", "--steer", "2:1:a/b"});
}

TEST(BadInputExperiments, E4ACoefficientThatIsNotANumber) {
  const Model model = Model::load(fixture("gpt2-f32"));
  expect_cpp<InvalidArgument>("E4", [&] { steering_vector(model, 0, NAN, kPrompt, kOther); });
  expect_cli("E4", {"generate", "-m", fixture("gpt2-bytes"), "-p", "hi", "--steer", "1:abc:a/b"});
}

TEST(BadInputExperiments, E5ANeuronPastTheWidth) {
  const Model model = Model::load(fixture("gpt2-f32"));
  expect_cpp<InvalidArgument>("E5", [&] { neuron_activations(model, kPrompt, 0, 128); });
  expect_cli("E5", {"forward", "-m", fixture("gpt2-f32"), "--tokens", "1,2,3", "--neuron", "0:128"});
}

TEST(BadInputExperiments, E6ASiteThatIsNotOne) {
  expect_cpp<InvalidArgument>("E6", [] { parse_patch_site("heads"); });
  expect_cli("E6", {"patch", "-m", fixture("gpt2-f32"), "--clean-tokens", "1,2,3,4", "--corrupted-tokens", "1,2,5,4",
                    "--answer", "#1", "--wrong", "#2", "--what", "resid_pre,heads"});
}

TEST(BadInputExperiments, E7PromptsWithTheSameMetric) {
  const Model model = Model::load(fixture("gpt2-f32"));
  expect_cpp<InvalidArgument>("E7", [&] { patch(model, kPrompt, kPrompt, 1, 2); });
  expect_cli("E7", {"patch", "-m", fixture("gpt2-f32"), "--clean-tokens", "1,2,3,4", "--corrupted-tokens", "1,2,3,4",
                    "--answer", "#1", "--wrong", "#2"});
}

#ifdef GLASSBOX_TEST_TRAINING
TEST(BadInputExperiments, E8SaliencyWithoutABackwardPass) {
  const Model model = Model::load(fixture("llama-gqa"));
  expect_cpp<InvalidArgument>("E8", [&] { saliency(model, kPrompt, 1); });
  expect_cli("E8", {"forward", "-m", fixture("llama-gqa"), "--tokens", "1,2,3", "--saliency"});
}
#endif

TEST(BadInputExperiments, E9AttributionOnAPostNormModel) {
  const Model model = Model::load(fixture("openai-gpt"));
  expect_cpp<InvalidArgument>("E9", [&] { attribute(model, kPrompt, 1, 2); });
  expect_cli("E9", {"attribute", "-m", fixture("openai-gpt"), "--tokens", "1,2,3", "--answer", "#1"});
}

}   // namespace
}   // namespace glassbox
