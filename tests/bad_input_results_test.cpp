// The bad-input table (docs/bad-input.md), rows about the engine's results and its memory, in the
// C++ API and CLI columns: results that are not finite (B28, B29), a vocabulary padded past its
// tokenizer (B30), models and training runs larger than the memory there is (B31-B33), and
// batches too large for one call (B34).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bad_input_table.h"
#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/memory.h"
#include "glassbox/model.h"
#include "glassbox/tokenizer.h"
#include "test_util.h"

namespace glassbox {
namespace {

namespace fs = std::filesystem;
using test::cell;
using test::expect_cli;
using test::expect_cpp;
using test::kCli;
using test::kCpp;

const bool kHaveCli = !std::string(GLASSBOX_CLI_PATH).empty();

// A copy of fixture `name` (its tokenizer files too, where it has them) with element `index` of
// tensor `tensor` set to `value`.
class ChangedModel {
 public:
  ChangedModel(const std::string& name, const std::string& tensor, std::size_t index, float value) {
    for (const auto& entry : fs::directory_iterator(test::fixture_dir(name)))
      if (entry.path().filename() != "expected.json")
        fs::copy_file(entry.path(), dir_.path() / entry.path().filename());
    auto tensors = test::read_tensors(dir_.path() / "model.safetensors");
    bool found = false;
    for (auto& t : tensors)
      if (t.name == tensor) {
        std::memcpy(t.bytes.data() + 4 * index, &value, 4);
        found = true;
      }
    EXPECT_TRUE(found) << tensor;
    test::write_file(dir_.path() / "model.safetensors", test::make_safetensors(tensors));
  }
  std::string path() const { return dir_.path().string(); }

 private:
  test::TempDir dir_;
};

// A text file in a temporary directory.
struct TextFile {
  explicit TextFile(const std::string& text) { test::write_file(path, text); }
  test::TempDir dir;
  fs::path path = dir.path() / "text.txt";
};

// B28: NaN in layer 1's MLP: every way of running the model says where.
TEST(BadInputResults, B28NaNWeightsAreAnErrorEverywhere) {
  const ChangedModel nan("gpt2-bytes", "h.1.mlp.c_fc.bias", 3, NAN);
  const Model model = Model::load(nan.path());
  const std::vector<std::int32_t> ids = {72, 105, 33};
  expect_cpp<ModelFormatError>("B28", [&] {
    KVCache cache = model.new_cache();
    model.forward(ids, cache);
  });
  expect_cpp<ModelFormatError>("B28", [&] {
    KVCache cache = model.new_cache();
    std::vector<TokenProbability> lens;
    model.forward(ids, cache, {.all_logits = true, .lens_k = 3, .lens = &lens});
  });
  {   // the cache is as it was
    KVCache cache = model.new_cache();
    EXPECT_THROW(model.forward(ids, cache, {.all_logits = true}), ModelFormatError);
    EXPECT_EQ(cache.size(), 0);
  }
  const std::vector<std::vector<std::int32_t>> batch = {{1, 2}, {72, 105, 33}};
  expect_cpp<ModelFormatError>("B28", [&] { model.forward_batch(batch); });
  try {
    model.forward_batch(batch);
  } catch (const ModelFormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("sequence 0: ", 0), 0u) << e.what();
  }
  expect_cpp<ModelFormatError>("B28", [&] { generate(model, ids, {}, [](const GeneratedToken&) { return true; }); });

  const ChangedModel classifier("gpt2-classifier", "transformer.h.1.mlp.c_fc.bias", 3, NAN);
  const Model cls = Model::load(classifier.path());
  expect_cpp<ModelFormatError>("B28", [&] { cls.classify(std::vector<std::int32_t>{72, 5, 33}); });

  const TextFile text("Hi! Hi! Hello there.\n");
  test::write_file(fs::path(nan.path()) / "batch.json", "[[1, 2], [72, 105, 33]]");
  expect_cli("B28", {"forward", "-m", nan.path(), "--tokens", "72,105,33"});
  expect_cli("B28", {"forward", "-m", nan.path(), "--tokens", "72,105,33", "--lens", "3"});
  expect_cli("B28", {"forward", "-m", nan.path(), "--batch", nan.path() + "/batch.json"});
  expect_cli("B28", {"generate", "-m", nan.path(), "-p", "Hi"});
  expect_cli("B28", {"evaluate", "-m", nan.path(), text.path.string()});
  expect_cli("B28", {"classify", "-m", classifier.path(), "--tokens", "72,5,33"});
  const ChangedModel mlm("gpt2-bytes", "h.1.mlp.c_fc.bias", 3, NAN);   // a masked LM, as B27's
  test::edit_config(mlm.path(), "bidirectional", true);
  test::edit_config(mlm.path(), "mask_token_id", 95);
  expect_cli("B28", {"fill-mask", "-m", mlm.path(), "--tokens", "72,95,33"});
  if (kHaveCli) {   // a batch names the sequence by its place in the file
    const auto r = test::run_cli({"forward", "-m", nan.path(), "--batch", nan.path() + "/batch.json"});
    EXPECT_NE(r.err.find("sequence 0: "), std::string::npos) << r.err;
  }
}

// B29: where the first non-finite value appears is named down to its position.
TEST(BadInputResults, B29TheFirstNonFiniteValueIsNamedWithItsPosition) {
  const ChangedModel inf("gpt2-f32", "wpe.weight", 1 * 32 + 7, INFINITY);   // position 1's row of (32, 32)
  const Model model = Model::load(inf.path());
  const std::vector<std::int32_t> ids = {1, 5};
  expect_cpp<ModelFormatError>("B29", [&] {
    KVCache cache = model.new_cache();
    model.forward(ids, cache);
  });
  // After a first call, positions count on from the cache.
  expect_cpp<ModelFormatError>("B29", [&] {
    KVCache cache = model.new_cache();
    model.forward(std::vector<std::int32_t>{1}, cache);
    model.forward(std::vector<std::int32_t>{5}, cache);
  });
  expect_cli("B29", {"forward", "-m", inf.path(), "--tokens", "1,5"});
  expect_cli("B29", {"generate", "-m", inf.path(), "--tokens", "1,5"});
  // In a batch, only the sequence that reaches position 1 fails, and is named.
  const std::vector<std::vector<std::int32_t>> batch = {{3}, {4}, {1, 5}, {6}};
  expect_cpp<ModelFormatError>("B29", [&] { model.forward_batch(batch); });
  try {
    model.forward_batch(batch);
  } catch (const ModelFormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("sequence 2: ", 0), 0u) << e.what();
  }
  if (kHaveCli) {   // the CLI's batch runs in parts of 64: sequence 66 is in the second
    std::string ids = "[";
    for (int b = 0; b < 70; ++b) ids += std::string(b ? "," : "") + (b == 66 ? "[1,5]" : "[3]");
    test::write_file(fs::path(inf.path()) / "batch.json", ids + "]");
    expect_cli("B29", {"forward", "-m", inf.path(), "--batch", inf.path() + "/batch.json"});
    const auto r = test::run_cli({"forward", "-m", inf.path(), "--batch", inf.path() + "/batch.json"});
    EXPECT_NE(r.err.find("error: sequence 66: "), std::string::npos) << r.err;
  }
  // Position 0 is untouched: a token there runs, bit for bit as the fixture's.
  const Model original = Model::load(test::fixture_dir("gpt2-f32"));
  KVCache a = model.new_cache(), b = original.new_cache();
  EXPECT_EQ(model.forward(std::vector<std::int32_t>{5}, a), original.forward(std::vector<std::int32_t>{5}, b));
}

// B30: gpt2-bytes-padded is gpt2-bytes with 63 ids past its 257 tokens (tests/fixtures/README.md),
// whose logits would be the largest: they are -inf, never sampled, never in the lens.
TEST(BadInputResults, B30IdsWithoutATokenAreNeverSampled) {
  EXPECT_EQ(cell("B30", kCpp), "-inf");
  EXPECT_EQ(cell("B30", kCli), "null");
  const fs::path padded_dir = test::fixture_dir("gpt2-bytes-padded");
  const Model padded = Model::load(padded_dir), bytes = Model::load(test::fixture_dir("gpt2-bytes"));
  const int tokens = Tokenizer::load(padded_dir).vocab_size();
  ASSERT_EQ(tokens, 257);
  ASSERT_EQ(padded.config().vocab_size, 320);
  const std::vector<std::int32_t> ids = {72, 105, 33, 32};

  // Unmasked, a padding id wins (so the masking below is what keeps it out).
  KVCache c0 = padded.new_cache();
  const auto raw = padded.forward(ids, c0);
  EXPECT_GE(std::max_element(raw.begin(), raw.end()) - raw.begin(), 257);

  KVCache c1 = padded.new_cache(), c2 = bytes.new_cache();
  std::vector<TokenProbability> lens;
  const auto masked =
      padded.forward(ids, c1, {.all_logits = true, .lens_k = 5, .lens = &lens, .tokenizer_size = tokens});
  const auto reference = bytes.forward(ids, c2, {.all_logits = true});
  for (std::size_t t = 0; t < ids.size(); ++t)
    for (int v = 0; v < 320; ++v) {
      const float got = masked[t * 320 + std::size_t(v)];
      if (v < 257)
        ASSERT_EQ(got, reference[t * 257 + std::size_t(v)]) << t << " " << v;   // bit for bit
      else
        ASSERT_EQ(got, -INFINITY) << t << " " << v;
    }
  for (const auto& p : lens) EXPECT_LT(p.id, 257);
  const auto batch = padded.forward_batch(std::vector<std::vector<std::int32_t>>{ids}, tokens);
  EXPECT_EQ(batch[0], masked);

  // Sampling: at any temperature, top-k and top-p only real tokens, the same ones as gpt2-bytes'.
  for (const float temperature : {0.0f, 1.0f, 3.0f}) {
    GenerateOptions o;
    o.max_tokens = 30;
    o.sampling = {.temperature = temperature, .top_k = temperature == 3.0f ? 5 : 0, .top_p = 0.9f, .seed = 7};
    o.tokenizer_size = tokens;
    o.when_context_full = WhenContextFull::Stop;
    std::vector<std::int32_t> got, want;
    generate(padded, ids, o, [&](const GeneratedToken& t) { return got.push_back(t.id), true; });
    o.tokenizer_size = 0;
    generate(bytes, ids, o, [&](const GeneratedToken& t) { return want.push_back(t.id), true; });
    EXPECT_EQ(got, want) << temperature;
  }

  if (!kHaveCli) return;
  // The CLI: forward's padding logits are null, generate and fill-mask never show a padding id.
  auto r = test::run_cli({"forward", "-m", padded_dir.string(), "--tokens", "72,105", "--lens", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  for (const auto& row : json["logits"]) {
    ASSERT_EQ(row.size(), 320u);
    for (int v = 0; v < 320; ++v) EXPECT_EQ(row[v].is_null(), v >= 257) << v;
  }
  EXPECT_NE(r.out.find(cell("B30", kCli)), std::string::npos);
  for (const auto& layer : json["lens"])
    for (const auto& row : layer)
      for (const auto& p : row) EXPECT_LT(p["id"].get<int>(), 257);
  r = test::run_cli({"generate", "-m", padded_dir.string(), "--tokens", "72,105,33,32", "-n", "30", "--seed", "7",
                     "--context-full", "stop"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto w = test::run_cli({"generate", "-m", test::fixture_dir("gpt2-bytes").string(), "--tokens", "72,105,33,32",
                                "-n", "30", "--seed", "7", "--context-full", "stop"});
  EXPECT_EQ(r.out, w.out);
  const TextFile text("Hi! Hi! Hello there.\n");
  r = test::run_cli({"evaluate", "-m", padded_dir.string(), text.path.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, test::run_cli({"evaluate", "-m", test::fixture_dir("gpt2-bytes").string(), text.path.string()}).out);
}

// A model directory of gpt2 tensors, V tokens C wide in F16, whose model.safetensors is a sparse
// file of the size its header says: nothing of its data is written.
class SparseModel {
 public:
  SparseModel(std::int64_t V, std::int64_t C) {
    const std::int64_t P = 16;
    std::uint64_t data_bytes = 0;
    const std::string file = test::f16_header(test::one_layer_gpt2_shapes(V, C, P), &data_bytes);
    test::write_file(dir_.path() / "model.safetensors", file);
    EXPECT_EQ(truncate((dir_.path() / "model.safetensors").c_str(), off_t(file.size() + data_bytes)), 0);
    test::write_file(
        dir_.path() / "config.json",
        nlohmann::json{
            {"model_type", "gpt2"}, {"vocab_size", V}, {"n_positions", P}, {"n_embd", C}, {"n_layer", 1}, {"n_head", 1}}
            .dump());
  }
  std::string path() const { return dir_.path().string(); }

 private:
  test::TempDir dir_;
};

// How long `call` takes, in seconds.
template <typename F>
double seconds(F call) {
  const auto start = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// B31: 4,000,000 x 16,384 in F16 (125,000 MB of file, twice that in F32 twice over): refused from
// the header, before anything is allocated (were it allocated and written, this would take minutes
// and more memory than the machine has); the message says the sizes.
TEST(BadInputResults, B31AModelLargerThanTheMemoryAvailableIsRefusedFirst) {
  const SparseModel huge(4'000'000, 16'384);
  ASSERT_LT(available_memory(), std::uint64_t(400) << 30) << "a machine with more memory than this model needs";
  const std::size_t heap = test::heap_in_use();
  EXPECT_LT(seconds([&] { expect_cpp<InvalidArgument>("B31", [&] { Model::load(huge.path()); }); }), 10.0);
  EXPECT_LT(test::heap_in_use(), heap + (64u << 20));
  try {
    Model::load(huge.path());
  } catch (const InvalidArgument& e) {   // 2 x 250,000 MB of F32 arrays
    EXPECT_NE(std::string(e.what()).find("MB for its weights as the engine holds them"), std::string::npos) << e.what();
  }
  EXPECT_LT(seconds([&] { expect_cli("B31", {"forward", "-m", huge.path(), "--tokens", "1"}); }), 10.0);
  EXPECT_LT(seconds([&] { expect_cli("B31", {"generate", "-m", huge.path(), "--tokens", "1"}); }), 10.0);
}

// B32: a model of about 790 MB with at most 100 MB allowed; and the limit is the estimate's.
TEST(BadInputResults, B32AModelLargerThanMaxMemoryIsRefusedFirst) {
  const SparseModel big(400'000, 256);
  const std::uint64_t mb = 1 << 20;
  expect_cpp<InvalidArgument>("B32", [&] { Model::load(big.path(), {.max_memory = 100 * mb}); });
  expect_cli("B32", {"forward", "-m", big.path(), "--tokens", "1", "--max-memory", "100"});
  expect_cli("B32", {"generate", "-m", big.path(), "--tokens", "1", "--max-memory", "100"});
  // The estimate is the loader's own: allowed a little more than it, the model loads.
  const SparseModel small(4'000, 64);
  const std::string config = test::read_file(fs::path(small.path()) / "config.json");
  const std::string file = test::read_file(fs::path(small.path()) / "model.safetensors");
  std::uint64_t header = 0;
  std::memcpy(&header, file.data(), 8);
  const std::uint64_t needed =
      Model::load_memory(config, std::as_bytes(std::span(file.data(), 8 + header))) + KVCache::peak_bytes(1, 16, 64);
  (void)needed;
  std::uint64_t said = 0;   // the MB the refusal names (rounded up)
  try {
    Model::load(small.path(), {.max_memory = 1});
    ADD_FAILURE() << "1 byte is enough";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what(), after = "needs about ";
    said = std::stoull(m.substr(m.find(after) + after.size()));
  }
  EXPECT_NO_THROW(Model::load(small.path(), {.max_memory = said * mb}));
  EXPECT_THROW(Model::load(small.path(), {.max_memory = (said - 1) * mb}), InvalidArgument);
  // The native load holds no staging buffer (the file is mapped): at most the loader's estimate.
  EXPECT_LE(said, (needed + mb - 1) / mb);
  EXPECT_EQ(megabytes(std::uint64_t(132'689) << 20), "132,689");
  EXPECT_EQ(megabytes((std::uint64_t(132'688) << 20) + 1), "132,689");   // rounded up
  EXPECT_EQ(megabytes(mb), "1");
  EXPECT_EQ(megabytes(~std::uint64_t(0)), "17,592,186,044,416");
}

// B33: a training run whose batch needs more memory than there is, or than --max-memory allows,
// is refused before the vocabulary is learned or anything allocated.
TEST(BadInputResults, B33ATrainingRunLargerThanTheMemoryIsRefusedFirst) {
  const TextFile text(std::string(4000, 'a') + " the end\n");
  test::TempDir out;
  EXPECT_LT(seconds([&] {
              expect_cli("B33", {"train", "-o", (out.path() / "m").string(), "--batch-size", "16384", "--seq-len",
                                 "256", "--n-positions", "256", "--vocab-size", "50000", text.path.string()});
            }),
            10.0);
  expect_cli("B33", {"train", "-o", (out.path() / "m").string(), "--max-memory", "64", "--n-embd", "512", "--n-layer",
                     "8", text.path.string()});
  if (kHaveCli) {
    const auto r = test::run_cli({"train", "-o", (out.path() / "m").string(), "--max-memory", "64", "--n-embd", "512",
                                  "--n-layer", "8", text.path.string()});
    EXPECT_NE(r.err.find("more than the 64 MB allowed (--max-memory)"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out.path() / "m")) << "nothing written";
  }
}

// B34: a batch whose logits would be more than one call returns; the CLI streams its output in
// parts, the same bytes as one pass, and takes at most 65,536 sequences.
TEST(BadInputResults, B34BatchesAreCappedAndTheCliStreamsThem) {
  const Model model = Model::load(test::fixture_dir("gpt2-f32"));
  const std::vector<std::vector<std::int32_t>> too_many(43'691, std::vector<std::int32_t>(32, 1));
  expect_cpp<InvalidArgument>("B34", [&] { model.forward_batch(too_many); });
  if (!kHaveCli) return;
  test::TempDir dir;
  std::string many = "[";
  for (int i = 0; i < 65'537; ++i) many += i ? ",[1]" : "[1]";
  test::write_file(dir.path() / "many.json", many + "]");
  expect_cli("B34",
             {"forward", "-m", test::fixture_dir("gpt2-f32").string(), "--batch", (dir.path() / "many.json").string()});

#ifndef __EMSCRIPTEN__   // a CLI to run, and std::to_chars for floats (as the CLI writes them)
  // 200 sequences of 1 to 9 tokens: 4 parts; the output is one pass's, byte for byte.
  std::vector<std::vector<std::int32_t>> batch;
  nlohmann::json ids = nlohmann::json::array();
  for (int b = 0; b < 200; ++b) {
    batch.emplace_back();
    for (int t = 0; t <= b % 9; ++t) batch.back().push_back((b * 7 + t * 13) % 96);
    ids.push_back(batch.back());
  }
  test::write_file(dir.path() / "batch.json", ids.dump());
  const auto r = test::run_cli(
      {"forward", "-m", test::fixture_dir("gpt2-f32").string(), "--batch", (dir.path() / "batch.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto logits = model.forward_batch(batch);
  std::string want = "{\"logits\":[";
  for (std::size_t b = 0; b < logits.size(); ++b) {
    want += b ? ",\n[" : "[";
    for (std::size_t t = 0; t < logits[b].size() / 96; ++t) {
      if (t) want += ",\n";
      want += "[";
      for (std::size_t v = 0; v < 96; ++v) {
        char buf[32];
        const auto end = std::to_chars(buf, buf + sizeof buf, logits[b][t * 96 + v]).ptr;
        want += (v ? "," : "") + std::string(buf, end);
      }
      want += "]";
    }
    want += "]";
  }
  want += "]}\n";
  EXPECT_EQ(r.out, want);
#endif
}

}   // namespace
}   // namespace glassbox
