// What loading a model allocates, known from config.json and the weights' header alone
// (Model::load_memory, load_footprint): the WebAssembly build checks it against its heap before
// it copies a model in. Checked against what the loader really allocates, on every fixture, with
// F32 and int8 weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/kv_cache.h"
#include "glassbox/model.h"
#include "glassbox/threads.h"
#include "io/dtype.h"
#include "model/weights.h"
#include "test_util.h"

namespace glassbox {
namespace {

using test::fixture_dir;

// The first 8 + N bytes of a safetensors file: its length field and header.
std::string safetensors_header(const std::string& file) {
  std::uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  return file.substr(0, 8 + n);
}

using test::bytes_of;

class LoadMemoryTest : public ::testing::TestWithParam<std::string> {};

// What the loader makes of a tensor: rows it keeps (embeddings, norms, biases, the classifier's
// score), a GPT Conv1D matrix (stored (in, out), transposed on load), an nn.Linear matrix (the
// decoders'; their untied output head), or a buffer it skips.
enum class Kind { Rows, Conv1D, Linear, Skipped };
bool is_token_embedding(const TensorInfo& t) {
  for (const char* name : {"wte.weight", "tokens_embed.weight", "embed_tokens.weight", "embed_in.weight"})
    if (t.name == name || t.name.ends_with(std::string(".") + name)) return true;
  return false;
}
Kind kind_of(const TensorInfo& t, const ModelConfig& c) {
  auto ends_with = [&](std::string_view s) {
    return t.name.size() >= s.size() && t.name.compare(t.name.size() - s.size(), s.size(), s) == 0;
  };
  if (t.dtype == DType::BOOL || ends_with("masked_bias") || ends_with("inv_freq")) return Kind::Skipped;
  if (ends_with("lm_head.weight") && c.tie_word_embeddings) return Kind::Skipped;   // the tied copy
  if (t.shape.size() != 2) return Kind::Rows;
  for (const char* rows : {"wte.weight", "wpe.weight", "tokens_embed.weight", "positions_embed.weight", "score.weight",
                           "embed_tokens.weight", "embed_in.weight"})
    if (ends_with(rows)) return Kind::Rows;
  const bool gpt = c.architecture == Architecture::GPT2 || c.architecture == Architecture::OpenAIGPT;
  return gpt ? Kind::Conv1D : Kind::Linear;
}

TEST_P(LoadMemoryTest, CountsWhatTheLoaderAllocates) {
  const auto dir = fixture_dir(GetParam());
  const std::string config_json = test::read_file(dir / "config.json");
  const ModelConfig config = ModelConfig::parse(config_json);
  const std::string file = test::read_file(dir / "model.safetensors");
  const std::string header = safetensors_header(file);
  ASSERT_LT(header.size(), file.size());
  const SafeTensors whole = SafeTensors::parse(bytes_of(file), "model.safetensors");
  const SafeTensors layout = SafeTensors::parse_header(bytes_of(header), "model.safetensors");
  ASSERT_EQ(layout.tensors().size(), whole.tensors().size());
  // A header alone has no weights to load.
  EXPECT_THROW(Model::from_parts(config_json, layout), ModelFormatError);
  // Staged whole when streamed: every Conv1D matrix (transposed on load), every nn.Linear one
  // (packed or quantized from the whole tensor) and every F16/BF16 tensor but the token embedding;
  // F32 rows, and a 16-bit token embedding's, are written where they stay. An F32 copy on the way
  // (per quantization): an F16/BF16 matrix, the tied LM head from 16-bit rows (a chunk of its
  // rows, 2^18 values at most), or to quantize a Conv1D matrix, 8 of its transposed rows per thread.
  const bool tied = config.tie_word_embeddings || config.architecture == Architecture::GPT2 ||
                    config.architecture == Architecture::OpenAIGPT;
  std::uint64_t staged = 0, copy_none = 0, copy_quantized = 0;
  for (const auto& t : whole.tensors()) {
    const Kind kind = kind_of(t, config);
    if (kind == Kind::Skipped) continue;
    const std::uint64_t bytes = t.bytes.size(), f32_bytes = 4 * std::uint64_t(t.numel);
    const bool embedding = is_token_embedding(t);
    if (kind != Kind::Rows || (t.dtype != DType::F32 && !embedding)) staged = std::max(staged, bytes);
    if (kind != Kind::Rows && t.dtype != DType::F32) copy_none = std::max(copy_none, f32_bytes);
    if (embedding && tied && t.dtype != DType::F32) {
      const std::int64_t K = t.shape[1], chunk = std::min(t.shape[0], std::max<std::int64_t>(8, (262144 / K) / 8 * 8));
      copy_none = std::max(copy_none, 4 * std::uint64_t(chunk * K));
      copy_quantized = std::max(copy_quantized, 4 * std::uint64_t(chunk * K));
    }
    if (kind == Kind::Conv1D)
      copy_quantized = std::max(copy_quantized, 4 * 8 * std::uint64_t(t.shape[0]) * std::uint64_t(num_threads()));
    if (kind == Kind::Linear && t.dtype != DType::F32) copy_quantized = std::max(copy_quantized, f32_bytes);
  }
  for (const Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    const char* what = quantization_name(q);
    // Every array counted with at most its 64-byte alignment on top; at most three arrays per
    // tensor (quantized blocks and scales, an F32 copy of the embedding beside the LM head's).
    const ModelWeights kept = load_weights(config, whole, q);
    const LoadFootprint counted_kept = load_footprint(config, layout, q, WeightSource::Kept);
    EXPECT_GE(counted_kept.owned, kept.owned.allocated()) << what;
    EXPECT_LE(counted_kept.owned, kept.owned.allocated() + 3 * 64 * whole.tensors().size()) << what;
    EXPECT_EQ(load_footprint(config, whole, q, WeightSource::Kept).owned, counted_kept.owned)
        << what;   // the header says it all
    EXPECT_EQ(counted_kept.staging, 0u) << what;

    const WeightPlan streamed = plan_weights(config, layout, q, WeightSource::Streamed);
    const LoadFootprint counted = load_footprint(config, layout, q, WeightSource::Streamed);
    EXPECT_GE(counted.owned, streamed.weights.owned.allocated()) << what;
    EXPECT_LE(counted.owned, streamed.weights.owned.allocated() + 3 * 64 * whole.tensors().size()) << what;
    EXPECT_GE(counted.owned, counted_kept.owned) << what;   // nothing is read in place
    EXPECT_EQ(counted.staging, staged) << what;
    EXPECT_EQ(counted.transient, q == Quantization::None ? copy_none : copy_quantized) << what;
    EXPECT_EQ(Model::load_memory(config_json, bytes_of(header), {q}), counted.peak()) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LoadMemoryTest, ::testing::ValuesIn(test::single_file_fixtures()),
                         test::fixture_test_name);

// A header promising far more than a WebAssembly heap holds is measured without its data; broken
// headers and tensors that do not fit the config are the loader's errors.
TEST(LoadMemory, FromTheHeaderAloneWithTheLoadersErrors) {
  const std::int64_t V = 4'000'000, C = 256, P = 16;
  const std::string config = R"({"model_type": "gpt2", "vocab_size": 4000000, "n_positions": 16, "n_embd": 256,
                                 "n_layer": 1, "n_head": 1})";
  const std::string header = test::f16_header(test::one_layer_gpt2_shapes(V, C, P));
  // The embedding once in F32 (the LM head's packed copy) and once as it is in the file (F16: its
  // rows, which the file's bytes go straight into); then the block's matrices, the small arrays
  // and a buffer of rows on their way to F32, a few MB.
  const std::uint64_t wte = 4ull * V * C;
  const std::uint64_t got = Model::load_memory(config, bytes_of(header));
  EXPECT_GE(got, wte + wte / 2);
  EXPECT_LT(got, wte + wte / 2 + (8u << 20));

  EXPECT_THROW(Model::load_memory(config, bytes_of(header.substr(0, 20))),
               ModelFormatError);   // stops inside the header
  EXPECT_THROW(Model::load_memory(config, bytes_of(std::string(8, '\0') + "x")), ModelFormatError);
  const std::string other = R"({"model_type": "gpt2", "vocab_size": 4000000, "n_positions": 16, "n_embd": 128,
                                "n_layer": 1, "n_head": 1})";
  try {
    Model::load_memory(other, bytes_of(header));
    ADD_FAILURE() << "a config that does not fit the tensors";
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("the config implies [4000000, 128]"), std::string::npos) << e.what();
  }
}

}   // namespace
}   // namespace glassbox

// A generation's KV cache at its largest, which the WebAssembly build counts before it loads a
// model: a full context, and the half context it grows from (past half the context the cache
// grows to the whole). GPT-2 small: 2 x 12 layers x 1,024 positions x 768 floats = 75,497,472
// bytes full.
TEST(LoadMemory, KVCachePeakIsAFullContextAndTheHalfItGrowsFrom) {
  EXPECT_EQ(glassbox::KVCache::peak_bytes(12, 1024, 768), 75497472u + 75497472u / 2);
  EXPECT_EQ(glassbox::KVCache::peak_bytes(1, 17, 4), (17u + 8u) * 2 * 4 * sizeof(float));
}

namespace glassbox {
namespace {

// An nn.Linear matrix in F16/BF16 is converted a block of rows at a time (weights.cpp,
// chunk_rows), never whole into F32: here an untied output head of 9,000 x 32, more rows than one
// block (8,192 at 32 columns). Its BF16 file loads, in F32 and int8, into the same bits as the
// same values in an F32 file (converted in place, in one piece), and the footprint counts one
// block's F32 copy, not the matrix's.
TEST(LoadMemory, LargeHalfPrecisionMatricesConvertInBlocksOfRows) {
  const test::TempDir bf16_dir, f32_dir;
  nlohmann::json config = test::read_json(fixture_dir("llama-gqa") / "config.json");
  const int V = 9000, C = config["hidden_size"].get<int>();
  config["vocab_size"] = V;
  std::vector<test::RawTensor> bf16, f32;
  std::uint64_t seed = 7;
  for (test::RawTensor t : test::read_tensors(fixture_dir("llama-gqa") / "model.safetensors")) {
    if (t.name == "model.embed_tokens.weight" || t.name == "lm_head.weight") t.shape = {V, C};
    const std::size_t n = std::size_t(t.shape.size() == 2 ? t.shape[0] * t.shape[1] : t.shape[0]);
    std::vector<float> values(n);
    for (float& v : values) {   // values a BF16 holds exactly, so both files mean the same numbers
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      v = bf16_to_f32(f32_to_bf16(static_cast<float>(static_cast<std::int64_t>(seed >> 40) % 2001 - 1000) / 1000.0f));
    }
    f32.push_back(test::f32_tensor(t.name, t.shape, values));
    std::string bytes(n * 2, '\0');
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t h = f32_to_bf16(values[i]);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
    bf16.push_back({t.name, "BF16", t.shape, bytes});
  }
  for (const auto* d : {&bf16_dir, &f32_dir}) test::write_file(d->path() / "config.json", config.dump());
  test::write_file(bf16_dir.path() / "model.safetensors", test::make_safetensors(bf16));
  test::write_file(f32_dir.path() / "model.safetensors", test::make_safetensors(f32));
  const std::vector<std::int32_t> ids = {1, 8999, 4500, 3};
  for (const Quantization q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    const Model from_bf16 = Model::load(bf16_dir.path(), {q}), from_f32 = Model::load(f32_dir.path(), {q});
    KVCache a = from_bf16.new_cache(), b = from_f32.new_cache();
    EXPECT_EQ(from_bf16.forward(ids, a, {.all_logits = true}), from_f32.forward(ids, b, {.all_logits = true}))
        << quantization_name(q);
    const std::string file = test::read_file(bf16_dir.path() / "model.safetensors");
    const SafeTensors layout = SafeTensors::parse_header(bytes_of(safetensors_header(file)), "model.safetensors");
    EXPECT_EQ(load_footprint(ModelConfig::parse(config.dump()), layout, q, WeightSource::Streamed).transient,
              4u * 8192 * C)
        << quantization_name(q);
  }
}

}   // namespace
}   // namespace glassbox
