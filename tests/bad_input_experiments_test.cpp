// The bad-input table (docs/bad-input.md), C++ API column of the interpretability experiments'
// rows (E1, E3-E8; E2, a token named by its text, is the JS API's): each bad argument throws
// InvalidArgument with the row's fragment. gpt2-bytes: one byte a token, 2 layers, an MLP 128
// wide; llama-gqa: a model type without a backward pass.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/experiments.h"
#include "glassbox/model.h"
#include "bad_input_table.h"
#include "test_util.h"
#ifdef GLASSBOX_TEST_TRAINING
#include "glassbox/saliency.h"
#endif

namespace glassbox {
namespace {

using test::expect_cpp;

class BadInputExperiments : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { model_ = new Model(Model::load(test::fixture_dir("gpt2-bytes"))); }
  static void TearDownTestSuite() {
    delete model_;
    model_ = nullptr;
  }
  static Model* model_;
  const std::vector<std::int32_t> clean_{1, 2, 3, 1, 2}, corrupted_{1, 2, 4, 1, 2};
};
Model* BadInputExperiments::model_ = nullptr;

TEST_F(BadInputExperiments, E1_PromptsOfDifferentLengths) {
  const std::vector<std::int32_t> longer{1, 2, 4, 1, 2, 5};
  expect_cpp<InvalidArgument>("E1", [&] { patch(*model_, clean_, longer, 1, 2); });
}

TEST_F(BadInputExperiments, E3_E4_SteeringLayerAndCoefficient) {
  expect_cpp<InvalidArgument>("E3", [&] { steering_vector(*model_, 2, 1.0f, clean_, corrupted_); });
  expect_cpp<InvalidArgument>(
      "E4", [&] { steering_vector(*model_, 0, std::numeric_limits<float>::quiet_NaN(), clean_, corrupted_); });
}

TEST_F(BadInputExperiments, E5_NeuronPastTheWidth) {
  expect_cpp<InvalidArgument>("E5", [&] { neuron_activations(*model_, clean_, 1, 128); });
}

TEST_F(BadInputExperiments, E6_E7_PatchingSiteAndEqualMetrics) {
  expect_cpp<InvalidArgument>("E6", [] { parse_patch_site("heads"); });
  expect_cpp<InvalidArgument>("E7", [&] { patch(*model_, clean_, clean_, 1, 2); });
}

#ifdef GLASSBOX_TEST_TRAINING
TEST(BadInputExperimentsSaliency, E8_ModelWithoutBackwardPass) {
  const Model llama = Model::load(test::fixture_dir("llama-gqa"));
  const std::vector<std::int32_t> tokens{1, 2, 3};
  expect_cpp<InvalidArgument>("E8", [&] { saliency(llama, tokens, 1); });
}
#endif

}   // namespace
}   // namespace glassbox
