// generation_config.json (glassbox/generation_config.h): the keys real checkpoints carry, errors
// that name the key and the file, and the order user > file > glassbox's default.
#include <gtest/gtest.h>

#include "glassbox/error.h"
#include "glassbox/generation_config.h"
#include "test_util.h"

namespace glassbox {
namespace {

using Ids = std::vector<std::int32_t>;

TEST(GenerationConfig, ReadsQwen3sFile) {
  // Qwen3's generation_config.json as the hub has it.
  const auto c = GenerationConfig::parse(R"({"bos_token_id": 151643, "do_sample": true,
    "eos_token_id": [151645, 151643], "pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95,
    "transformers_version": "4.51.0"})");
  EXPECT_EQ(c.eos_token_ids, Ids({151645, 151643}));
  EXPECT_EQ(c.temperature, 0.6f);
  EXPECT_EQ(c.top_k, 20);
  EXPECT_EQ(c.top_p, 0.95f);
  EXPECT_FALSE(c.repetition_penalty);
  EXPECT_EQ(c.do_sample, true);
}

TEST(GenerationConfig, OneEosIdNullsAndAMissingFile) {
  const auto c = GenerationConfig::parse(R"({"eos_token_id": 2, "temperature": null, "repetition_penalty": 1.1})");
  EXPECT_EQ(c.eos_token_ids, Ids({2}));
  EXPECT_FALSE(c.temperature);
  EXPECT_EQ(c.repetition_penalty, 1.1f);
  test::TempDir dir;
  const auto none = GenerationConfig::load(dir.path());
  EXPECT_FALSE(none.eos_token_ids || none.temperature || none.top_k || none.top_p || none.repetition_penalty ||
               none.do_sample);
  test::write_file(dir.path() / "generation_config.json", R"({"top_k": 5})");
  EXPECT_EQ(GenerationConfig::load(dir.path()).top_k, 5);
}

TEST(GenerationConfig, MalformedValuesNameTheKeyAndFile) {
  const auto message = [](const std::string& text) {
    try {
      GenerationConfig::parse(text, "DIR/generation_config.json");
    } catch (const ModelFormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::pair<const char*, const char*> cases[] = {
      {"{", "DIR/generation_config.json: not valid JSON"},
      {"[1]", "DIR/generation_config.json: must be a JSON object"},
      {R"({"temperature": "hot"})", "DIR/generation_config.json: temperature must be a number, got \"hot\""},
      {R"({"temperature": -1})", "temperature must be >= 0, got -1"},
      {R"({"temperature": 1e300})", "temperature must be a finite number"},
      {R"({"temperature": 1e1111})",
       "DIR/generation_config.json: not valid JSON"},   // past double: nlohmann's out_of_range
      {R"({"top_k": 2.5})", "top_k must be an integer, got 2.5"},
      {R"({"top_k": -3})", "top_k must be >= 0, got -3"},
      {R"({"top_k": 99999999999})", "top_k is out of range"},
      {R"({"top_p": 0})", "top_p must be in (0, 1], got 0"},
      {R"({"top_p": 1.5})", "top_p must be in (0, 1], got 1.5"},
      {R"({"repetition_penalty": 0})", "repetition_penalty must be > 0, got 0"},
      {R"({"repetition_penalty": [1]})", "repetition_penalty must be a number"},
      {R"({"do_sample": "yes"})", "do_sample must be true or false, got \"yes\""},
      {R"({"eos_token_id": "</s>"})", "eos_token_id must be an integer, got \"</s>\""},
      {R"({"eos_token_id": [1, -2]})", "eos_token_id must be token ids >= 0, got -2"},
      {R"({"eos_token_id": [1, [2]]})", "eos_token_id must be an integer, got [2]"},
      {R"({"eos_token_id": 4294967296})", "eos_token_id is out of range"},
  };
  for (const auto& [text, expected] : cases)
    EXPECT_NE(message(text).find(expected), std::string::npos) << message(text);
}

TEST(GenerationConfig, UserBeatsFileBeatsDefault) {
  const Ids config_eos = {7};
  // No file, no user: glassbox's defaults and config.json's eos.
  auto e = effective_generation({}, {}, config_eos);
  EXPECT_EQ(e.sampling.temperature, 1.0f);
  EXPECT_EQ(e.sampling.top_k, 0);
  EXPECT_EQ(e.sampling.top_p, 1.0f);
  EXPECT_EQ(e.sampling.repetition_penalty, 1.0f);
  EXPECT_EQ(e.eos_token_ids, config_eos);

  GenerationConfig file;
  file.temperature = 0.6f;
  file.top_k = 20;
  file.repetition_penalty = 1.3f;
  file.eos_token_ids = Ids{1, 2};
  e = effective_generation(file, {}, config_eos);
  EXPECT_EQ(e.sampling.temperature, 0.6f);
  EXPECT_EQ(e.sampling.top_k, 20);
  EXPECT_EQ(e.sampling.top_p, 1.0f);   // not in the file: glassbox's default
  EXPECT_EQ(e.sampling.repetition_penalty, 1.3f);
  EXPECT_EQ(e.eos_token_ids, Ids({1, 2}));

  GenerationOverrides user;
  user.temperature = 0.9f;
  user.top_p = 0.5f;
  user.repetition_penalty = 1.0f;
  user.eos_token_ids = Ids{};
  e = effective_generation(file, user, config_eos);
  EXPECT_EQ(e.sampling.temperature, 0.9f);
  EXPECT_EQ(e.sampling.top_k, 20);
  EXPECT_EQ(e.sampling.top_p, 0.5f);
  EXPECT_EQ(e.sampling.repetition_penalty, 1.0f);
  EXPECT_EQ(e.eos_token_ids, Ids{});
}

TEST(GenerationConfig, DoSampleFalseIsGreedyUnlessTheUserGivesATemperature) {
  GenerationConfig file;
  file.do_sample = false;
  file.temperature = 0.6f;
  EXPECT_EQ(effective_generation(file, {}).sampling.temperature, 0.0f);
  GenerationOverrides user;
  user.temperature = 0.8f;
  EXPECT_EQ(effective_generation(file, user).sampling.temperature, 0.8f);
  file.do_sample = true;
  EXPECT_EQ(effective_generation(file, {}).sampling.temperature, 0.6f);
}

TEST(GenerationConfig, BadUserSettingsAreInvalidArguments) {
  GenerationOverrides user;
  user.repetition_penalty = -1.0f;
  EXPECT_THROW(effective_generation({}, user), InvalidArgument);
  user.repetition_penalty.reset();
  user.top_p = 2.0f;
  EXPECT_THROW(effective_generation({}, user), InvalidArgument);
}

}   // namespace
}   // namespace glassbox
