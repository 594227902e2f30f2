// Sharded checkpoints (model.safetensors.index.json and the shards it names): a fixture split
// into shards by the test loads as the single file does, bit for bit: mapped (Model::load),
// streamed shard after shard (ModelLoader, as the WebAssembly build loads), with F32 and int8
// matrices, from F32, F16 and BF16 files, and with the memory estimate of the single file. The
// index and the shards disagreeing is a clear error that loads nothing: docs/bad-input.md B74-B83
// (C++ API and CLI columns; the JS API's: tests/js/shards.test.mjs).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "glassbox/error.h"
#include "glassbox/model.h"
#include "glassbox/model_loader.h"
#include "bad_input_table.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;

using test::bytes_of;

// Every position's logits for ids that visit the vocabulary.
std::vector<float> all_logits(const Model& m) {
  const ModelConfig& c = m.config();
  std::vector<std::int32_t> ids;
  for (int i = 0; i < std::min(c.n_positions, 64); ++i)
    ids.push_back(static_cast<std::int32_t>((i * 7919) % c.vocab_size));
  KVCache cache = m.new_cache();
  return m.forward(ids, cache, {.all_logits = true});
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << what;
}

// The shards' files, read whole, and each one's header.
struct ShardFiles {
  std::string config, index;
  std::vector<std::string> files, headers;
  std::vector<std::span<const std::byte>> header_spans() const {
    std::vector<std::span<const std::byte>> spans;
    for (const std::string& h : headers) spans.push_back(bytes_of(h));
    return spans;
  }
};

ShardFiles read_shards(const fs::path& dir, const std::vector<std::string>& names) {
  ShardFiles s{test::read_file(dir / "config.json"), test::read_file(dir / "model.safetensors.index.json"), {}, {}};
  for (const std::string& name : names) {
    s.files.push_back(test::read_file(dir / name));
    s.headers.push_back(s.files.back().substr(0, ModelLoader::header_size(bytes_of(s.files.back()))));
  }
  return s;
}

// The shards' bytes through one ModelLoader, one file after the other, in pieces of `piece` bytes.
Model stream_shards(const ShardFiles& s, Quantization q, std::size_t piece) {
  ModelLoader loader(s.config, s.index, s.header_spans(), {q});
  std::uint64_t total = 0;
  for (const std::string& f : s.files) total += f.size();
  EXPECT_EQ(loader.size(), total);
  std::uint64_t start = 0;
  for (const std::string& f : s.files) {
    EXPECT_EQ(loader.file_end(), start + f.size());
    for (std::size_t at = 0; at < f.size();) {
      const std::span<std::byte> w = loader.window();
      const std::size_t n = std::min({w.size(), f.size() - at, piece});
      std::memcpy(w.data(), f.data() + at, n);
      loader.commit(n);
      at += n;
    }
    start += f.size();
    EXPECT_EQ(loader.received(), start);
  }
  EXPECT_TRUE(loader.window().empty());
  return loader.finish();
}

struct Case {
  std::string fixture;
  int shards;
};

class ShardsTest : public ::testing::TestWithParam<Case> {};

TEST_P(ShardsTest, ShardedLoadsAsTheSingleFileBitForBit) {
  const auto [fixture, n] = GetParam();
  test::TempDir dir;
  const std::vector<std::string> names = test::write_sharded_fixture(fixture, dir.path(), n);
  ASSERT_EQ(names.size(), static_cast<std::size_t>(n));
  ASSERT_FALSE(fs::exists(dir.path() / "model.safetensors"));
  const ShardFiles files = read_shards(dir.path(), names);
  const std::string single = test::read_file(test::fixture_dir(fixture) / "model.safetensors");
  for (const Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    SCOPED_TRACE(quantization_name(q));
    const std::vector<float> want = all_logits(Model::load(test::fixture_dir(fixture), {q}));
    expect_same_bits(all_logits(Model::load(dir.path(), {q})), want, "mapped");
    for (const std::size_t piece : {std::size_t(1) << 30, std::size_t(4093)})
      expect_same_bits(all_logits(stream_shards(files, q, piece)), want, "streamed " + std::to_string(piece));
    EXPECT_EQ(Model::load_memory(files.config, files.index, files.header_spans(), {q}),
              Model::load_memory(files.config, bytes_of(single), {q}));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ShardsTest,
                         ::testing::Values(Case{"gpt2-f32", 2}, Case{"gpt2-f32", 3}, Case{"gpt2-bf16", 3},
                                           Case{"gpt2-f16", 2}, Case{"gpt2-prefixed", 3}),
                         [](const auto& info) {
                           std::string name = info.param.fixture + "_" + std::to_string(info.param.shards);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

#ifndef __EMSCRIPTEN__   // (the WebAssembly build has no CLI)
TEST(Shards, CliForwardOnShardsIsTheSingleFilesOutput) {
  test::TempDir dir;
  test::write_sharded_fixture("gpt2-f32", dir.path(), 3);
  const auto sharded = test::run_cli({"forward", "-m", dir.path().string(), "--tokens", "1,2,3"});
  const auto single = test::run_cli({"forward", "-m", test::fixture_dir("gpt2-f32").string(), "--tokens", "1,2,3"});
  ASSERT_EQ(sharded.exit_code, 0) << sharded.err;
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(sharded.out, single.out);
}
#endif

TEST(Shards, ASingleFileBesideAnIndexIsTheOneLoaded) {
  test::TempDir dir;
  test::write_sharded_fixture("gpt2-f32", dir.path(), 2);
  test::write_file(dir.path() / "model.safetensors.index.json", "not json");   // not read
  fs::copy_file(test::fixture_dir("gpt2-f32") / "model.safetensors", dir.path() / "model.safetensors");
  expect_same_bits(all_logits(Model::load(dir.path())), all_logits(Model::load(test::fixture_dir("gpt2-f32"))),
                   "single file");
}

// ---------------------------------------------------------------------------------------------
// Bad input: rows B74-B83, on the CLI and the C++ API (mapped, and the streaming loader given the
// same files, which must refuse them before any data is read); B74 and B75 on a sharded llama too.

// gpt2-f32 in three shards, or with `llama` the sharded llama fixture, changed by
// `change(dir, shard names)`.
template <typename F>
void expect_row(const std::string& id, F change, bool streamed = true, bool llama = false) {
  SCOPED_TRACE(id + (llama ? " llama-linear-sharded" : " gpt2-f32"));
  test::TempDir dir;
  std::vector<std::string> names;
  if (llama) {
    test::copy_model("llama-linear-sharded", dir.path());
    names = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  } else {
    names = test::write_sharded_fixture("gpt2-f32", dir.path(), 3);
  }
  change(dir.path(), names);
  test::expect_cli(id, {"forward", "-m", dir.path().string(), "--tokens", "1"});
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load(dir.path()); });
  if (!streamed) return;
  const ShardFiles files = read_shards(dir.path(), names);
  test::expect_cpp<ModelFormatError>(id, [&] { ModelLoader(files.config, files.index, files.header_spans()); });
  test::expect_cpp<ModelFormatError>(id, [&] { Model::load_memory(files.config, files.index, files.header_spans()); });
}

// The index with `edit` applied to its weight map.
template <typename F>
void edit_index(const fs::path& dir, F edit) {
  auto index = test::read_json(dir / "model.safetensors.index.json");
  edit(index["weight_map"]);
  test::write_file(dir / "model.safetensors.index.json", index.dump());
}

// Rewrites shard `file` without its tensor `name`.
void drop_tensor(const fs::path& dir, const std::string& file, const std::string& name) {
  std::vector<test::RawTensor> tensors = test::read_tensors(dir / file);
  std::erase_if(tensors, [&](const test::RawTensor& t) { return t.name == name; });
  test::write_file(dir / file, test::make_safetensors(tensors));
}

TEST(BadInputShards, B74_ShardMissing) {
  for (const bool llama : {false, true})
    expect_row(
        "B74", [](const fs::path& dir, const auto& names) { fs::remove(dir / names[1]); }, false, llama);
}

TEST(BadInputShards, B75_IndexNamesATensorNoShardHas) {
  for (const bool llama : {false, true}) {
    expect_row(
        "B75",
        [](const fs::path& dir, const auto& names) {
          edit_index(dir, [&](auto& map) { map["h.0.extra.weight"] = names[0]; });
        },
        true, llama);
    expect_row(
        "B75",
        [](const fs::path& dir, const auto& names) {   // or one the shard lost
          drop_tensor(dir, names.back(), test::read_tensors(dir / names.back()).front().name);
        },
        true, llama);
  }
}

TEST(BadInputShards, B76_ShardHoldsATensorTheIndexDoesNotName) {
  expect_row("B76", [](const fs::path& dir, const auto& names) {
    const std::string name = test::read_tensors(dir / names[1]).front().name;
    edit_index(dir, [&](auto& map) { map.erase(name); });
  });
}

TEST(BadInputShards, B77_IndexPlacesATensorInAnotherShard) {
  expect_row("B77", [](const fs::path& dir, const auto& names) {
    const std::string name = test::read_tensors(dir / names[1]).front().name;
    edit_index(dir, [&](auto& map) { map[name] = names[2]; });
  });
  expect_row("B77", [](const fs::path& dir, const auto& names) {   // a tensor in two shards
    std::vector<test::RawTensor> tensors = test::read_tensors(dir / names[0]);
    tensors.push_back(test::read_tensors(dir / names[1]).front());
    test::write_file(dir / names[0], test::make_safetensors(tensors));
  });
}

TEST(BadInputShards, B78_IndexNotJson) {
  expect_row("B78", [](const fs::path& dir, const auto&) {
    test::write_file(dir / "model.safetensors.index.json", "{\"weight_map\": {");
  });
}

TEST(BadInputShards, B79_IndexWithoutWeightMap) {
  for (const char* text : {"{\"metadata\": {}}", "[1, 2]", "{\"weight_map\": [\"model.safetensors\"]}"})
    expect_row("B79",
               [&](const fs::path& dir, const auto&) { test::write_file(dir / "model.safetensors.index.json", text); });
}

#ifndef __EMSCRIPTEN__   // (no FIFOs or devices in the WebAssembly build's file system; JS: a path in Node)
TEST(BadInputShards, B80_ShardNotARegularFile) {
  expect_row(
      "B80",
      [](const fs::path& dir, const auto& names) {
        fs::remove(dir / names[1]);
        ASSERT_EQ(::mkfifo((dir / names[1]).c_str(), 0600), 0);
      },
      false);
  expect_row(
      "B80",
      [](const fs::path& dir, const auto& names) {
        fs::remove(dir / names[2]);
        fs::create_directory(dir / names[2]);
      },
      false);
  expect_row(
      "B80",
      [](const fs::path& dir, const auto& names) {
        fs::remove(dir / names[0]);
        fs::create_symlink("/dev/zero", dir / names[0]);
      },
      false);
}
#endif

TEST(BadInputShards, B81_ShardNameIsAPath) {
  for (const char* file : {"../model.safetensors", "/etc/passwd", "..", "", "sub\\model.safetensors"})
    expect_row("B81", [&](const fs::path& dir, const auto&) {
      edit_index(dir, [&](auto& map) { map["wte.weight"] = file; });
    });
}

TEST(BadInputShards, B82_ShardTruncated) {
  expect_row(
      "B82",
      [](const fs::path& dir, const auto& names) {
        const std::string bytes = test::read_file(dir / names[1]);
        test::write_file(dir / names[1], bytes.substr(0, bytes.size() - 5));
      },
      false);
}

TEST(BadInputShards, B83_IndexNamesNoTensor) {
  expect_row("B83", [](const fs::path& dir, const auto&) {
    test::write_file(dir / "model.safetensors.index.json", "{\"weight_map\": {}}");
  });
}

}   // namespace
}   // namespace glassbox
