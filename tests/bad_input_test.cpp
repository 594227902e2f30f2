// The bad-input table (docs/bad-input.md), C++ API and CLI columns: each row's bad input, given
// the way a person would give it, must fail with the message fragment the table shows. The
// fragments are read from the table itself, so the document cannot drift from the engine.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

using test::BrokenModel;
using test::edit_config;
using test::expect_cli;
using test::expect_cpp;

TEST(BadInput, B1_TruncatedModelFile) {
  BrokenModel m([](const auto& dir) {
    test::write_file(dir / "model.safetensors", test::read_file(dir / "model.safetensors").substr(0, 5000));
  });
  expect_cli("B1", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B1", [&] { Model::load(m.path()); });
}

TEST(BadInput, B2_HostileHeader) {
  BrokenModel m([](const auto& dir) {
    test::write_file(dir / "model.safetensors", std::string("\x08\0\0\0\0\0\0\0notjson!", 16));
  });
  expect_cli("B2", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B2", [&] { Model::load(m.path()); });
}

TEST(BadInput, B3_ConfigAndWeightsDisagree) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "n_embd", 64); });
  expect_cli("B3", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B3", [&] { Model::load(m.path()); });
}

TEST(BadInput, B4_UnknownArchitecture) {
  BrokenModel m([](const auto& dir) { edit_config(dir, "model_type", "mamba"); });
  expect_cli("B4", {"forward", "-m", m.path(), "--tokens", "1"});
  expect_cpp<ModelFormatError>("B4", [&] { Model::load(m.path()); });
}

class BadInputOnAModel : public ::testing::Test {
 protected:
  std::string dir_ = fixture_dir("gpt2-f32").string();
  Model model_ = Model::load(dir_);
};

TEST_F(BadInputOnAModel, B5_PromptLongerThanTheContext) {
  std::string ids = "1";
  for (int i = 0; i < 32; ++i) ids += ",1";
  expect_cli("B5", {"generate", "-m", dir_, "--tokens", ids});
  expect_cpp<InvalidArgument>("B5", [&] { Generator(model_, std::vector<std::int32_t>(33, 1), {}); });
}

TEST_F(BadInputOnAModel, B6_EmptyPrompt) {
  expect_cli("B6", {"generate", "-p", ""});   // the shipped model, which has a tokenizer
  expect_cpp<InvalidArgument>("B6", [&] { Generator(model_, {}, {}); });
}

TEST(BadInput, B7_TextThatIsNotUtf8) {
  const std::string bad =
      "ab\xff"
      "c";
  expect_cli("B7", {"tokenize"}, bad);
  const Tokenizer tokenizer = Tokenizer::load(GLASSBOX_SHIPPED_MODEL_DIR);
  expect_cpp<InvalidArgument>("B7", [&] { tokenizer.encode(bad); });
}

TEST_F(BadInputOnAModel, B8_TokenIdOutsideTheVocabulary) {
  expect_cli("B8", {"forward", "-m", dir_, "--tokens", "1,96"});
  expect_cpp<InvalidArgument>("B8", [&] {
    KVCache cache = model_.new_cache();
    model_.forward(std::vector<std::int32_t>{1, 96}, cache);
  });
}

TEST_F(BadInputOnAModel, B17_BatchFileThatIsNotArraysOfIds) {
  test::TempDir dir;
  test::write_file(dir.path() / "batch.json", "[[5, 17], 3]");
  expect_cli("B17", {"forward", "-m", dir_, "--batch", (dir.path() / "batch.json").string()});
}

TEST_F(BadInputOnAModel, B18_BatchWithATokenIdOutsideTheVocabulary) {
  test::TempDir dir;
  test::write_file(dir.path() / "batch.json", "[[5, 17], [3, 96]]");
  expect_cli("B18", {"forward", "-m", dir_, "--batch", (dir.path() / "batch.json").string()});
  expect_cpp<InvalidArgument>("B18", [&] {
    model_.forward_batch(std::vector<std::vector<std::int32_t>>{{5, 17}, {3, 96}});
  });
}

TEST_F(BadInputOnAModel, B19_AMaskThatIsNeitherCausalNorBidirectional) {
  expect_cli("B19", {"forward", "-m", dir_, "--tokens", "1,2", "--mask", "future"});
}

TEST_F(BadInputOnAModel, B20_EncoderStatesForAModelWithoutCrossAttention) {
  const std::vector<float> encoder(32 * 3, 0.5f);   // 3 positions of n_embd 32
  expect_cpp<InvalidArgument>("B20", [&] {
    KVCache cache = model_.new_cache();
    ForwardOptions o;
    o.encoder_states = encoder;
    model_.forward(std::vector<std::int32_t>{1, 2}, cache, o);
  });
}

TEST_F(BadInputOnAModel, B21_ClassifyOnAModelWithoutAClassificationHead) {
  expect_cli("B21", {"classify", "-m", dir_, "--tokens", "1,2"});
  expect_cpp<InvalidArgument>("B21", [&] { model_.classify(std::vector<std::int32_t>{1, 2}); });
}

TEST(BadInput, B22_LabelledLineWithoutATab) {
  test::TempDir dir;
  test::write_file(dir.path() / "labelled.txt", "red\ta red house\nblue house\n");
  expect_cli("B22", {"train", "--task", "classify", (dir.path() / "labelled.txt").string(), "-o",
                     (dir.path() / "out").string(), "--n-positions", "128"});
}

TEST(BadInput, B23_GenerationFromABidirectionalModel) {
  test::TempDir dir;
  test::copy_fixture("gpt2-f32", dir.path());
  edit_config(dir.path(), "bidirectional", true);
  expect_cli("B23", {"generate", "-m", dir.path().string(), "--tokens", "1,2"});
  const Model model = Model::load(dir.path());
  expect_cpp<InvalidArgument>("B23", [&] { Generator g(model, std::vector<std::int32_t>{1, 2}, GenerateOptions{}); });
}

TEST(BadInput, B27_FillMaskWithoutAMask) {
  test::TempDir dir;
  test::copy_fixture("gpt2-bytes", dir.path());
  for (const char* f : {"vocab.json", "merges.txt"})
    std::filesystem::copy_file(fixture_dir("gpt2-bytes") / f, dir.path() / f);
  edit_config(dir.path(), "bidirectional", true);
  edit_config(dir.path(), "mask_token_id", 95);
  expect_cli("B27", {"fill-mask", "-m", dir.path().string(), "-p", "hello"});
}

TEST_F(BadInputOnAModel, B24_AHeadMaskNamingAHeadTheModelLacks) {
  expect_cli("B24", {"forward", "-m", dir_, "--tokens", "1,2", "--head-mask", "0:4"});
  expect_cli("B24", {"generate", "-m", dir_, "--tokens", "1,2", "--head-mask", "0:4"});
  const std::array<int, 2> head{0, 4};
  expect_cpp<InvalidArgument>("B24", [&] { silencing_head_mask(model_.config(), std::span(&head, 1)); });
}

TEST_F(BadInputOnAModel, B25_AMalformedHeadMask) {
  expect_cli("B25", {"forward", "-m", dir_, "--tokens", "1,2", "--head-mask", "0-3"});
  const std::vector<float> seven(7, 1.0f);
  expect_cpp<InvalidArgument>("B25", [&] {
    KVCache cache = model_.new_cache();
    model_.forward(std::vector<std::int32_t>{1, 2}, cache, {.head_mask = seven});
  });
}

TEST_F(BadInputOnAModel, B26_ALensOfNoTokens) {
  expect_cli("B26", {"forward", "-m", dir_, "--tokens", "1,2", "--lens", "0"});
  std::vector<TokenProbability> lens;
  expect_cpp<InvalidArgument>("B26", [&] {
    KVCache cache = model_.new_cache();
    model_.forward(std::vector<std::int32_t>{1, 2}, cache, {.lens_k = 0, .lens = &lens});
  });
}

TEST_F(BadInputOnAModel, B9_TemperatureNaNOrNegative) {
  for (const std::string t : {"nan", "-1"})
    expect_cli("B9", {"generate", "-m", dir_, "--tokens", "1", "--temperature", t});
  for (const float t : {NAN, -1.0f}) {
    GenerateOptions o;
    o.sampling.temperature = t;
    expect_cpp<InvalidArgument>("B9", [&] { Generator(model_, std::vector<std::int32_t>{1}, o); });
  }
}

TEST_F(BadInputOnAModel, B10_TopPOutOfRange) {
  expect_cli("B10", {"generate", "-m", dir_, "--tokens", "1", "--top-p", "1.5"});
  GenerateOptions o;
  o.sampling.top_p = 1.5f;
  expect_cpp<InvalidArgument>("B10", [&] { Generator(model_, std::vector<std::int32_t>{1}, o); });
}

TEST_F(BadInputOnAModel, B11_TopKNegative) {
  expect_cli("B11", {"generate", "-m", dir_, "--tokens", "1", "--top-k", "-2"});
  GenerateOptions o;
  o.sampling.top_k = -2;
  expect_cpp<InvalidArgument>("B11", [&] { Generator(model_, std::vector<std::int32_t>{1}, o); });
}

}   // namespace
}   // namespace glassbox
