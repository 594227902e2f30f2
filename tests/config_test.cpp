// config.json parsing: Hugging Face names, defaults and meanings, and clear errors.
#include <gtest/gtest.h>

#include "glassbox/config.h"
#include "glassbox/error.h"

namespace glassbox {
namespace {

std::string config_error(const std::string& json) {
  try {
    ModelConfig::parse(json);
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Config, Gpt2DefaultsAreHuggingFaces) {
  const auto c = ModelConfig::parse(R"({"model_type": "gpt2"})");
  EXPECT_EQ(c.architecture, Architecture::GPT2);
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.n_positions, 1024);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.n_inner, 4 * 768);
  EXPECT_EQ(c.activation, Activation::GeluTanh);   // gelu_new
  EXPECT_FLOAT_EQ(c.layer_norm_epsilon, 1e-5f);
  EXPECT_EQ(c.eos_token_ids, std::vector<std::int32_t>{50256});   // GPT2Config's default
}

TEST(Config, EndOfTextIds) {
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","vocab_size":100})").eos_token_ids.size(), 0u);   // 50256 absent
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","vocab_size":100,"eos_token_id":7})").eos_token_ids,
            std::vector<std::int32_t>{7});
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","vocab_size":100,"eos_token_id":[7,9]})").eos_token_ids,
            (std::vector<std::int32_t>{7, 9}));
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"openai-gpt"})").eos_token_ids.size(), 0u);
}

TEST(Config, OpenAIGptDefaults) {
  const auto c = ModelConfig::parse(R"({"model_type": "openai-gpt"})");
  EXPECT_EQ(c.architecture, Architecture::OpenAIGPT);
  EXPECT_EQ(c.vocab_size, 40478);
  EXPECT_EQ(c.n_positions, 512);
  EXPECT_EQ(c.activation, Activation::GeluTanh);   // afn "gelu" is the tanh form in openai-gpt
  // OpenAIGPTConfig has no n_inner: the MLP is always 4 * n_embd.
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"openai-gpt","n_embd":64,"n_head":4,"n_inner":7})").n_inner, 256);
}

TEST(Config, ActivationNamesMeanWhatHuggingFaceMeans) {
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","activation_function":"gelu"})").activation,
            Activation::GeluErf);
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","activation_function":"gelu_new"})").activation,
            Activation::GeluTanh);
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"gpt2","activation_function":"relu"})").activation, Activation::Relu);
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"openai-gpt","afn":"gelu"})").activation, Activation::GeluTanh);
  EXPECT_EQ(ModelConfig::parse(R"({"model_type":"openai-gpt","afn":"swish"})").activation, Activation::Silu);
  EXPECT_NE(
      config_error(R"({"model_type":"gpt2","activation_function":"mish"})").find("unsupported activation \"mish\""),
      std::string::npos);
}

TEST(Config, ArchitectureFromClassNameWhenModelTypeIsMissing) {
  EXPECT_EQ(ModelConfig::parse(R"({"architectures":["GPT2LMHeadModel"]})").architecture, Architecture::GPT2);
  EXPECT_EQ(ModelConfig::parse(R"({"architectures":["OpenAIGPTLMHeadModel"]})").architecture, Architecture::OpenAIGPT);
}

TEST(Config, Errors) {
  EXPECT_NE(config_error("{").find("config.json: not valid JSON"), std::string::npos);
  EXPECT_NE(config_error("[]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(config_error("{}").find("no \"model_type\""), std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"mamba"})").find("unknown architecture \"mamba\""), std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","n_embd":30,"n_head":4})").find("not divisible by n_head"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","n_layer":0})").find("\"n_layer\" is 0, outside [1, 4096]"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","n_head":"4"})").find("\"n_head\" must be an integer"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","n_embd":32.5})").find("\"n_embd\" must be an integer"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","layer_norm_epsilon":-1})").find("layer_norm_epsilon"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","position_encoding":"rotary"})")
                .find(R"("position_encoding" must be "learned" or "sinusoidal", got "rotary")"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","layer_norm_epsilon":1e39})").find("layer_norm_epsilon"),
            std::string::npos);
  EXPECT_NE(
      config_error(R"({"model_type":"gpt2","n_head":18446744073709551615})").find("\"n_head\" is 18446744073709551615"),
      std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","vocab_size":10,"eos_token_id":[1,"x"]})").find("eos_token_id"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","vocab_size":10,"eos_token_id":10})").find("\"eos_token_id\" is 10"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","tie_word_embeddings":false})").find("not supported"),
            std::string::npos);
  EXPECT_NE(config_error(R"({"model_type":"gpt2","add_cross_attention":1})").find("\"add_cross_attention\" must be"),
            std::string::npos);
}

}   // namespace
}   // namespace glassbox
