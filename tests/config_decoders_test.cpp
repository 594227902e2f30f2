// config.json of llama, mistral, qwen2, qwen3, gpt_neox and gpt_neo: transformers' defaults, both
// config forms (classic hub keys and transformers v5's rope_parameters), the features each type
// maps to, the round trip through to_json, and clear errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "glassbox/config.h"
#include "glassbox/error.h"

namespace glassbox {
namespace {

using nlohmann::json;

std::string config_error(const json& j) {
  try {
    ModelConfig::parse(j.dump());
  } catch (const ModelFormatError& e) {
    return e.what();
  }
  return "(no error)";
}

ModelConfig parse(const json& j) { return ModelConfig::parse(j.dump()); }

// Hub configs of real models (their architecture keys), classic form.
json smollm2_135m() {   // HuggingFaceTB/SmolLM2-135M
  return json::parse(R"({"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 576,
    "intermediate_size": 1536, "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
    "max_position_embeddings": 8192, "rms_norm_eps": 1e-05, "rope_theta": 100000, "rope_scaling": null,
    "tie_word_embeddings": true, "vocab_size": 49152, "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu",
    "attention_bias": false, "mlp_bias": false, "head_dim": 64})");
}
json llama32_1b() {   // meta-llama/Llama-3.2-1B
  return json::parse(R"({"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "tie_word_embeddings": true, "vocab_size": 128256, "bos_token_id": 128000,
    "eos_token_id": [128001, 128008, 128009]})");
}
json qwen25_05b() {   // Qwen/Qwen2.5-0.5B
  return json::parse(R"({"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864,
    "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
    "max_window_layers": 24, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768,
    "use_sliding_window": false, "tie_word_embeddings": true, "vocab_size": 151936, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu"})");
}
json qwen3_06b() {   // Qwen/Qwen3-0.6B
  return json::parse(R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
    "max_position_embeddings": 40960, "max_window_layers": 28, "rms_norm_eps": 1e-06, "rope_theta": 1000000,
    "rope_scaling": null, "sliding_window": null, "use_sliding_window": false, "attention_bias": false,
    "tie_word_embeddings": true, "vocab_size": 151936, "bos_token_id": 151643, "eos_token_id": 151645})");
}
json pythia_70m() {   // EleutherAI/pythia-70m
  return json::parse(R"({"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "hidden_size": 512,
    "intermediate_size": 2048, "num_hidden_layers": 6, "num_attention_heads": 8, "max_position_embeddings": 2048,
    "layer_norm_eps": 1e-05, "rotary_emb_base": 10000, "rotary_pct": 0.25, "use_parallel_residual": true,
    "tie_word_embeddings": false, "vocab_size": 50304, "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu"})");
}
json tinystories_1m() {   // roneneldan/TinyStories-1M
  return json::parse(R"({"model_type": "gpt_neo", "architectures": ["GPTNeoForCausalLM"], "hidden_size": 64,
    "num_layers": 8, "num_heads": 16, "intermediate_size": null, "max_position_embeddings": 2048, "window_size": 256,
    "attention_types": [[["global", "local"], 4]], "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
    "vocab_size": 50257, "bos_token_id": 50256, "eos_token_id": 50256})");
}
json mistral_7b() {   // mistralai/Mistral-7B-v0.1
  return json::parse(R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false,
    "vocab_size": 32000, "bos_token_id": 1, "eos_token_id": 2})");
}

// transformers v5's form of a classic config: rope_theta and rope_scaling become rope_parameters,
// gpt_neox's rotary_emb_base and rotary_pct become its rope_theta and partial_rotary_factor.
json v5_form(json j) {
  json rope = j.contains("rope_scaling") && j["rope_scaling"].is_object() ? j["rope_scaling"] : json::object();
  if (rope.contains("type")) {
    rope["rope_type"] = rope["type"];
    rope.erase("type");
  }
  if (!rope.contains("rope_type")) rope["rope_type"] = "default";
  for (const char* key : {"rope_theta", "rotary_emb_base"})
    if (j.contains(key)) rope["rope_theta"] = j[key];
  if (j.contains("rotary_pct")) rope["partial_rotary_factor"] = j["rotary_pct"];
  for (const char* key : {"rope_scaling", "rope_theta", "rotary_emb_base", "rotary_pct"}) j.erase(key);
  j["rope_parameters"] = rope;
  return j;
}

TEST(ConfigDecoders, DefaultsAreTransformers) {
  const auto llama = parse({{"model_type", "llama"}});
  EXPECT_EQ(llama.architecture, Architecture::Llama);
  EXPECT_EQ(llama.architecture_name(), "llama");
  EXPECT_EQ(llama.vocab_size, 32000);
  EXPECT_EQ(llama.n_embd, 4096);
  EXPECT_EQ(llama.n_inner, 11008);
  EXPECT_EQ(llama.n_layer, 32);
  EXPECT_EQ(llama.n_head, 32);
  EXPECT_EQ(llama.kv_heads(), 32);
  EXPECT_EQ(llama.head_dim(), 128);
  EXPECT_EQ(llama.n_positions, 2048);
  EXPECT_DOUBLE_EQ(llama.layer_norm_epsilon, 1e-6);
  EXPECT_EQ(llama.norm, Norm::RMSNorm);
  EXPECT_EQ(llama.mlp, Mlp::Gated);
  EXPECT_EQ(llama.activation, Activation::Silu);
  EXPECT_EQ(llama.position_encoding, PositionEncoding::Rotary);
  EXPECT_DOUBLE_EQ(llama.rotary.theta, 10000.0);
  EXPECT_EQ(llama.rotary.scaling, RopeScaling::Default);
  EXPECT_EQ(llama.rotary_dim(), 128);
  EXPECT_FALSE(llama.qkv_bias || llama.attn_out_bias || llama.mlp_bias || llama.qk_norm || llama.parallel_residual);
  EXPECT_FALSE(llama.tie_word_embeddings);
  EXPECT_TRUE(llama.scale_attn_weights);
  EXPECT_TRUE(llama.attention_windows.empty());
  EXPECT_EQ(llama.bos_token_id, 1);
  EXPECT_EQ(llama.eos_token_ids, std::vector<std::int32_t>{2});

  const auto mistral = parse({{"model_type", "mistral"}});
  EXPECT_EQ(mistral.kv_heads(), 8);
  EXPECT_EQ(mistral.n_inner, 14336);
  EXPECT_EQ(mistral.n_positions, 4096 * 32);
  EXPECT_EQ(mistral.attention_windows, std::vector<int>(32, 4096));

  const auto qwen2 = parse({{"model_type", "qwen2"}});
  EXPECT_EQ(qwen2.vocab_size, 151936);
  EXPECT_TRUE(qwen2.qkv_bias);
  EXPECT_FALSE(qwen2.attn_out_bias);
  EXPECT_FALSE(qwen2.mlp_bias);
  EXPECT_TRUE(qwen2.attention_windows.empty());   // use_sliding_window is false by default
  EXPECT_EQ(qwen2.bos_token_id, -1);
  EXPECT_TRUE(qwen2.eos_token_ids.empty());

  const auto qwen3 =
      parse({{"model_type", "qwen3"}, {"hidden_size", 64}, {"num_attention_heads", 4}, {"num_key_value_heads", 2}});
  EXPECT_EQ(qwen3.head_dim(), 128);   // Qwen3Config's head_dim default, whatever hidden_size is
  EXPECT_TRUE(qwen3.qk_norm);
  EXPECT_FALSE(qwen3.qkv_bias);

  const auto neox = parse({{"model_type", "gpt_neox"}});
  EXPECT_EQ(neox.norm, Norm::LayerNorm);
  EXPECT_EQ(neox.mlp, Mlp::Plain);
  EXPECT_EQ(neox.activation, Activation::GeluErf);   // hidden_act "gelu" is the exact erf form
  EXPECT_DOUBLE_EQ(neox.rotary.fraction, 0.25);
  EXPECT_EQ(neox.rotary_dim(), 96 / 4);   // 6144 / 64 = 96 per head
  EXPECT_TRUE(neox.parallel_residual);
  EXPECT_TRUE(neox.qkv_bias && neox.attn_out_bias && neox.mlp_bias);
  EXPECT_EQ(neox.bos_token_id, 0);
  EXPECT_EQ(neox.eos_token_ids, std::vector<std::int32_t>{2});

  const auto neo = parse({{"model_type", "gpt_neo"}});
  EXPECT_EQ(neo.position_encoding, PositionEncoding::Learned);
  EXPECT_EQ(neo.n_layer, 24);
  EXPECT_EQ(neo.n_head, 16);
  EXPECT_EQ(neo.n_inner, 4 * 2048);
  EXPECT_EQ(neo.activation, Activation::GeluTanh);
  EXPECT_FALSE(neo.scale_attn_weights);
  EXPECT_FALSE(neo.qkv_bias);
  EXPECT_TRUE(neo.attn_out_bias && neo.mlp_bias && neo.tie_word_embeddings);
  ASSERT_EQ(neo.attention_windows.size(), 24u);
  EXPECT_EQ(neo.attention_window(0), 0);     // global
  EXPECT_EQ(neo.attention_window(1), 256);   // local, window_size
  EXPECT_EQ(neo.attention_window(23), 256);
}

TEST(ConfigDecoders, RealConfigs) {
  const auto smol = parse(smollm2_135m());
  EXPECT_EQ(smol.n_head, 9);
  EXPECT_EQ(smol.kv_heads(), 3);
  EXPECT_EQ(smol.head_dim(), 64);
  EXPECT_TRUE(smol.tie_word_embeddings);
  EXPECT_DOUBLE_EQ(smol.rotary.theta, 100000.0);

  const auto llama = parse(llama32_1b());
  EXPECT_EQ(llama.rotary.scaling, RopeScaling::Llama3);
  EXPECT_DOUBLE_EQ(llama.rotary.factor, 32.0);
  EXPECT_DOUBLE_EQ(llama.rotary.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(llama.rotary.high_freq_factor, 4.0);
  EXPECT_EQ(llama.rotary.original_max_position_embeddings, 8192);
  EXPECT_EQ(llama.n_positions, 131072);
  EXPECT_EQ(llama.eos_token_ids, (std::vector<std::int32_t>{128001, 128008, 128009}));
  EXPECT_EQ(llama.bos_token_id, 128000);

  const auto qwen = parse(qwen25_05b());
  EXPECT_EQ(qwen.kv_heads(), 2);
  EXPECT_EQ(qwen.head_dim(), 64);
  EXPECT_TRUE(qwen.attention_windows.empty());   // sliding_window given, but use_sliding_window false

  const auto qwen3 = parse(qwen3_06b());
  EXPECT_EQ(qwen3.head_dim() * qwen3.n_head, 2048);   // not hidden_size 1024: q_proj is 2048 wide
  EXPECT_EQ(qwen3.eos_token_ids, std::vector<std::int32_t>{151645});

  const auto pythia = parse(pythia_70m());
  EXPECT_EQ(pythia.rotary_dim(), 16);   // int(64 * 0.25)
  EXPECT_FALSE(pythia.tie_word_embeddings);

  const auto neo = parse(tinystories_1m());
  EXPECT_EQ(neo.n_inner, 256);   // intermediate_size null: 4 * hidden_size
  EXPECT_EQ(neo.attention_windows, (std::vector<int>{0, 256, 0, 256, 0, 256, 0, 256}));

  EXPECT_EQ(parse(mistral_7b()).attention_windows, std::vector<int>(32, 4096));
}

TEST(ConfigDecoders, BothConfigFormsMeanTheSame) {
  for (const json& classic : {smollm2_135m(), llama32_1b(), qwen25_05b(), qwen3_06b(), pythia_70m(), mistral_7b()}) {
    const json v5 = v5_form(classic);
    EXPECT_EQ(parse(classic), parse(v5)) << v5.dump();
  }
  // partial_rotary_factor at the top level (transformers v5 moves it into rope_parameters)
  json neox = pythia_70m();
  neox.erase("rotary_pct");
  neox["partial_rotary_factor"] = 0.25;
  EXPECT_EQ(parse(neox), parse(pythia_70m()));
  // v5's per-layer-type nesting, the same parameters for both
  json nested = v5_form(llama32_1b());
  nested["rope_parameters"] = {{"full_attention", nested["rope_parameters"]},
                               {"sliding_attention", nested["rope_parameters"]}};
  EXPECT_EQ(parse(nested), parse(llama32_1b()));
  // "type", the old name of "rope_type"
  json old = llama32_1b();
  old["rope_scaling"].erase("rope_type");
  old["rope_scaling"]["type"] = "llama3";
  EXPECT_EQ(parse(old), parse(llama32_1b()));
  // linear scaling
  json linear = smollm2_135m();
  linear["rope_scaling"] = {{"type", "linear"}, {"factor", 4.0}};
  const auto c = parse(linear);
  EXPECT_EQ(c.rotary.scaling, RopeScaling::Linear);
  EXPECT_DOUBLE_EQ(c.rotary.factor, 4.0);
  EXPECT_EQ(parse(v5_form(linear)), c);
}

TEST(ConfigDecoders, SlidingWindowsOnlyWhereTheConfigAsks) {
  json qwen = qwen25_05b();
  qwen["use_sliding_window"] = true;
  qwen["sliding_window"] = 16;
  qwen["max_window_layers"] = 20;
  const auto c = parse(qwen);
  ASSERT_EQ(c.attention_windows.size(), 24u);
  for (int l = 0; l < 24; ++l) EXPECT_EQ(c.attention_window(l), l >= 20 ? 16 : 0) << l;
  // v5's layer_types decide where given
  qwen["layer_types"] = json::array();
  for (int l = 0; l < 24; ++l) qwen["layer_types"].push_back(l == 3 ? "sliding_attention" : "full_attention");
  const auto d = parse(qwen);
  for (int l = 0; l < 24; ++l) EXPECT_EQ(d.attention_window(l), l == 3 ? 16 : 0) << l;
  // mistral's null window: none
  json mistral = mistral_7b();
  mistral["sliding_window"] = nullptr;
  EXPECT_TRUE(parse(mistral).attention_windows.empty());
  // gpt_neo's attention_types, several runs
  json neo = tinystories_1m();
  neo["attention_types"] = json::parse(R"([[["local"], 2], [["global", "global"], 3]])");
  EXPECT_EQ(parse(neo).attention_windows, (std::vector<int>{256, 256, 0, 0, 0, 0, 0, 0}));
}

TEST(ConfigDecoders, RoundTripThroughToJson) {
  json qwen_windows = qwen25_05b();
  qwen_windows["use_sliding_window"] = true;
  qwen_windows["max_window_layers"] = 10;
  json linear = smollm2_135m();
  linear["rope_scaling"] = {{"type", "linear"}, {"factor", 2.5}};
  for (const json& j : {smollm2_135m(), llama32_1b(), qwen25_05b(), qwen_windows, qwen3_06b(), pythia_70m(),
                        tinystories_1m(), mistral_7b(), linear, json{{"model_type", "gpt_neo"}}}) {
    const auto c = parse(j);
    EXPECT_EQ(ModelConfig::parse(c.to_json()), c) << c.to_json();
  }
  // What a type's config.json cannot say is refused, not silently lost.
  auto c = parse(qwen3_06b());
  c.parallel_residual = true;
  EXPECT_THROW(c.to_json(), InvalidArgument);
}

TEST(ConfigDecoders, Errors) {
  const std::string unknown = config_error({{"model_type", "mamba"}});
  EXPECT_NE(unknown.find("unknown architecture \"mamba\""), std::string::npos) << unknown;
  for (const char* type : {"\"gpt2\"", "\"openai-gpt\"", "\"llama\"", "\"mistral\"", "\"qwen2\"", "\"qwen3\"",
                           "\"gpt_neox\"", "\"gpt_neo\""})
    EXPECT_NE(unknown.find(type), std::string::npos) << unknown;

  for (const char* rope : {"yarn", "dynamic", "longrope"}) {
    json j = llama32_1b();
    j["rope_scaling"] = {{"rope_type", rope}, {"factor", 2.0}};
    EXPECT_NE(config_error(j).find("rope type \"" + std::string(rope) + "\" (\"rope_scaling\") is not supported"),
              std::string::npos)
        << config_error(j);
    EXPECT_NE(config_error(v5_form(j)).find("rope type \"" + std::string(rope) + "\" (\"rope_parameters\")"),
              std::string::npos);
  }
  json llama3 = llama32_1b();
  llama3["rope_scaling"].erase("low_freq_factor");
  EXPECT_NE(config_error(llama3).find("\"rope_scaling\" needs \"low_freq_factor\""), std::string::npos);
  llama3 = llama32_1b();
  llama3["rope_scaling"]["original_max_position_embeddings"] = 8192.5;
  EXPECT_NE(config_error(llama3).find("original_max_position_embeddings must be a whole number"), std::string::npos);
  llama3 = llama32_1b();
  llama3["rope_scaling"]["factor"] = 1e300;   // past float, in which the frequencies are computed
  EXPECT_NE(config_error(llama3).find("\"factor\" must be a number from 0"), std::string::npos) << config_error(llama3);
  json linear = llama32_1b();
  linear["rope_scaling"] = {{"rope_type", "linear"}};
  EXPECT_NE(config_error(linear).find("needs \"factor\""), std::string::npos);

  // head_dim, heads and widths that disagree
  EXPECT_NE(config_error({{"model_type", "llama"}, {"hidden_size", 30}, {"num_attention_heads", 4}})
                .find("hidden_size 30 is not divisible by num_attention_heads 4, and the config gives no head_dim"),
            std::string::npos);
  EXPECT_EQ(config_error({{"model_type", "llama"}, {"hidden_size", 30}, {"num_attention_heads", 4}, {"head_dim", 8}}),
            "(no error)");   // q_proj 32 wide, o_proj back to 30: transformers allows it
  json neox = pythia_70m();
  neox["head_dim"] = 32;
  EXPECT_NE(config_error(neox).find("head_dim 32 x num_attention_heads 8 is not hidden_size 512"), std::string::npos)
      << config_error(neox);
  json gqa = smollm2_135m();
  gqa["num_key_value_heads"] = 2;
  EXPECT_NE(config_error(gqa).find("num_attention_heads 9 is not a multiple of num_key_value_heads 2"),
            std::string::npos);
  gqa["num_key_value_heads"] = 18;
  EXPECT_NE(config_error(gqa).find("not a multiple of num_key_value_heads 18"), std::string::npos);
  json odd = smollm2_135m();
  odd["head_dim"] = 63;
  EXPECT_NE(config_error(odd).find("must be even"), std::string::npos);
  json partial = pythia_70m();
  partial["rotary_pct"] = 0.01;   // int(64 * 0.01) = 0
  EXPECT_NE(config_error(partial).find("= 0, must be even and at least 2"), std::string::npos) << config_error(partial);
  json neo = tinystories_1m();
  neo["num_layers"] = 6;
  EXPECT_NE(config_error(neo).find("\"attention_types\" describes 8 layers, but num_layers is 6"), std::string::npos);
  neo = tinystories_1m();
  neo["attention_types"] = json::parse(R"([[["sparse"], 8]])");
  EXPECT_NE(config_error(neo).find("\"attention_types\" must be"), std::string::npos);
  json qwen = qwen25_05b();
  qwen["layer_types"] = {"full_attention"};
  EXPECT_NE(config_error(qwen).find("\"layer_types\" must list 24 layers"), std::string::npos);
  json eos = llama32_1b();
  eos["eos_token_id"] = json::array({1, 128256});
  EXPECT_NE(config_error(eos).find("\"eos_token_id\" is 128256"), std::string::npos);
  json theta = smollm2_135m();
  theta["rope_theta"] = 0;
  EXPECT_NE(config_error(theta).find("\"rope_theta\" must be a number > 0"), std::string::npos);
}

// gpt2 and openai-gpt keep every feature at GPT-2's values.
TEST(ConfigDecoders, Gpt2KeepsItsFeatures) {
  const auto c = ModelConfig::parse(R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4})");
  EXPECT_EQ(c.kv_heads(), 4);
  EXPECT_EQ(c.head_dim(), 16);
  EXPECT_EQ(c.norm, Norm::LayerNorm);
  EXPECT_EQ(c.mlp, Mlp::Plain);
  EXPECT_EQ(c.position_encoding, PositionEncoding::Learned);
  EXPECT_TRUE(c.qkv_bias && c.attn_out_bias && c.mlp_bias && c.tie_word_embeddings);
  EXPECT_FALSE(c.qk_norm || c.parallel_residual);
  EXPECT_TRUE(c.attention_windows.empty());
  EXPECT_EQ(c.n_kv_head, 0);
  EXPECT_EQ(c.n_head_dim, 0);
  EXPECT_EQ(ModelConfig::parse(c.to_json()), c);
}

}   // namespace
}   // namespace glassbox
