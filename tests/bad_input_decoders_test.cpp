// The bad-input table (docs/bad-input.md), the rows of the decoder types (llama, mistral, qwen2,
// qwen3, gpt_neox, gpt_neo), C++ API and CLI columns: a config.json or weights that a person could
// plausibly get wrong, in a copy of a decoder fixture, must fail with the table's fragment on the
// CLI, Model::load, and the streaming loader and its memory estimate (the WebAssembly build's
// path), given only the config and the headers, before any weight is read. The JS API column:
// tests/js/bad-input-decoders.test.mjs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/model_loader.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::BrokenModel;
using test::edit_config;

using test::bytes_of;

// Row `id` on every C++ surface, for the model in `dir`.
void expect_row(const std::string& id, const fs::path& dir) {
  SCOPED_TRACE(id + " " + test::read_json(dir / "config.json").value("model_type", "?"));
  test::expect_cli(id, {"forward", "-m", dir.string(), "--tokens", "1,2"});
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load(dir); });
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load(dir, {Quantization::Int8}); });
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load(dir, {Quantization::Int4}); });
  const std::string config = test::read_file(dir / "config.json");
  if (fs::exists(dir / "model.safetensors")) {
    const std::string weights = test::read_file(dir / "model.safetensors");
    test::expect_cpp<ModelFormatError>(id, [&] { ModelLoader(config, bytes_of(weights)); });
    test::expect_cpp<ModelFormatError>(id, [&] { Model::load_memory(config, bytes_of(weights)); });
    return;
  }
  const std::string index = test::read_file(dir / "model.safetensors.index.json");
  std::set<std::string> names;   // the shards in the order of their names, as ShardIndex::files
  const nlohmann::json map = nlohmann::json::parse(index)["weight_map"];
  for (const auto& [tensor, shard] : map.items()) names.insert(shard);
  std::vector<std::string> shards;
  std::vector<std::span<const std::byte>> headers;
  for (const std::string& name : names) shards.push_back(test::read_file(dir / name));
  for (const std::string& s : shards) headers.push_back(bytes_of(s));
  test::expect_cpp<ModelFormatError>(id, [&] { ModelLoader(config, index, headers); });
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load_memory(config, index, headers); });
}

// A copy of `fixture` changed by `change(dir)`, as row `id`.
template <typename F>
void expect_row(const std::string& id, const std::string& fixture, F change) {
  const BrokenModel m(change, fixture);
  expect_row(id, m.path());
}

void remove_config_key(const fs::path& dir, const std::string& key) {
  auto config = test::read_json(dir / "config.json");
  ASSERT_EQ(config.erase(key), 1u) << key;
  test::write_file(dir / "config.json", config.dump());
}

// Rewrites model.safetensors with `edit` applied to each of its tensors; `edit` returns false to drop one.
template <typename F>
void edit_tensors(const fs::path& dir, F edit) {
  std::vector<test::RawTensor> tensors;
  for (test::RawTensor& t : test::read_tensors(dir / "model.safetensors"))
    if (edit(t)) tensors.push_back(std::move(t));
  test::write_file(dir / "model.safetensors", test::make_safetensors(tensors));
}

TEST(BadInputDecoders, B4_UnknownModelTypeListsTheSupportedOnes) {
  for (const char* fixture : {"gpt2-f32", "llama-gqa", "llama-linear-sharded"})
    expect_row("B4", fixture, [](const fs::path& dir) { edit_config(dir, "model_type", "mamba"); });
}

TEST(BadInputDecoders, B86_RopeScalingTypeNotSupported) {
  expect_row("B86", "llama-gqa", [](const fs::path& dir) {
    edit_config(dir, "rope_scaling", {{"rope_type", "yarn"}, {"factor", 4.0}});
  });
  expect_row("B86", "llama-linear-sharded", [](const fs::path& dir) {   // the older key, "type"
    edit_config(dir, "rope_scaling", {{"type", "yarn"}, {"factor", 4.0}});
  });
}

TEST(BadInputDecoders, B87_RopeParametersTypeNotSupported) {
  for (const char* fixture : {"llama-llama3-v5", "gpt-neox-sequential-f16-v5"})
    expect_row("B87", fixture, [](const fs::path& dir) {
      auto params = test::read_json(dir / "config.json")["rope_parameters"];
      params["rope_type"] = "longrope";
      edit_config(dir, "rope_parameters", params);
    });
}

TEST(BadInputDecoders, B88_AWeightShapedOtherwiseThanTheConfigSays) {
  expect_row("B88", "llama-gqa", [](const fs::path& dir) {
    edit_tensors(dir, [](test::RawTensor& t) {
      if (t.name == "model.layers.0.mlp.gate_proj.weight") std::reverse(t.shape.begin(), t.shape.end());
      return true;
    });
  });
}

TEST(BadInputDecoders, B89_KeyValueHeadsThatKProjDoesNotFit) {
  expect_row("B89", "llama-llama3-v5", [](const fs::path& dir) { edit_config(dir, "num_key_value_heads", 1); });
}

TEST(BadInputDecoders, B90_HeadDimTimesHeadsThatQProjDoesNotFit) {
  expect_row("B90", "qwen3-qk-norm", [](const fs::path& dir) { edit_config(dir, "head_dim", 8); });
}

TEST(BadInputDecoders, B91_HeadsNotAMultipleOfKeyValueHeads) {
  expect_row("B91", "mistral-sliding", [](const fs::path& dir) { edit_config(dir, "num_key_value_heads", 3); });
}

TEST(BadInputDecoders, B92_WidthNotDivisibleByHeadsWithoutHeadDim) {
  expect_row("B92", "mistral-sliding", [](const fs::path& dir) { edit_config(dir, "num_attention_heads", 6); });
}

TEST(BadInputDecoders, B93_OddRotaryPart) {
  expect_row("B93", "gpt-neox-parallel", [](const fs::path& dir) { edit_config(dir, "rotary_pct", 0.2); });
}

TEST(BadInputDecoders, B94_SlidingWindowOfNoTokens) {
  for (const char* fixture : {"mistral-sliding", "qwen2-sliding-v5"})
    expect_row("B94", fixture, [](const fs::path& dir) { edit_config(dir, "sliding_window", 0); });
}

TEST(BadInputDecoders, B95_IntegerOrBooleanWeights) {
  // The same shapes, with bytes of the dtype's size: only the dtype is wrong.
  for (const auto& dtype : {std::pair{"I64", 8}, std::pair{"BOOL", 1}})
    expect_row("B95", "llama-gqa", [&](const fs::path& dir) {
      edit_tensors(dir, [&](test::RawTensor& t) {
        if (t.name == "model.layers.0.self_attn.q_proj.weight") {
          t.dtype = dtype.first;
          t.bytes.assign(t.bytes.size() / 4 * dtype.second, '\0');
        }
        return true;
      });
    });
}

TEST(BadInputDecoders, B96_TiedModelWithoutItsEmbedding) {
  expect_row("B96", "qwen3-qk-norm", [](const fs::path& dir) {
    edit_tensors(dir, [](const test::RawTensor& t) { return t.name != "model.embed_tokens.weight"; });
  });
}

TEST(BadInputDecoders, B97_TiedCheckpointUnderAnUntiedConfig) {
  expect_row("B97", "llama-llama3-bf16", [](const fs::path& dir) { remove_config_key(dir, "tie_word_embeddings"); });
  expect_row("B97", "qwen3-qk-norm", [](const fs::path& dir) { edit_config(dir, "tie_word_embeddings", false); });
}

// Not every change is an error: the fixtures as they are load, so each row above fails for its
// change alone.
TEST(BadInputDecoders, TheFixturesUnchangedLoad) {
  for (const char* fixture :
       {"llama-gqa", "llama-linear-sharded", "llama-llama3-v5", "llama-llama3-bf16", "gpt-neox-sequential-f16-v5",
        "gpt-neox-parallel", "qwen3-qk-norm", "mistral-sliding", "qwen2-sliding-v5"}) {
    const BrokenModel m([](const fs::path&) {}, fixture);
    EXPECT_NO_THROW(Model::load(m.path())) << fixture;
  }
}

}   // namespace
}   // namespace glassbox
