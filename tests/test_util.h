// Helpers shared by the tests: fixture paths, building safetensors files, temporary directories,
// running the CLI.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace glassbox::test {

// tests/fixtures/<name>, written by scripts/make_fixtures.py (PyTorch reference).
std::filesystem::path fixture_dir(const std::string& name);
// The fixtures every model test runs on: GPT-2's and openai-gpt's (scripts/make_fixtures.py),
// then the decoders' (llama, mistral, qwen2, qwen3, gpt_neox, gpt_neo: make_decoder_fixtures.py).
const std::vector<std::string>& model_fixtures();
// The GPT-2-shaped ones alone (their expected.json also has the bidirectional pass).
const std::vector<std::string>& gpt2_fixtures();
// Those whose weights are one model.safetensors (not a sharded checkpoint).
const std::vector<std::string>& single_file_fixtures();
// A fixture's name as a GoogleTest parameter name ("gpt2-f32" -> "gpt2_f32").
std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& info);

// n floats from a normal distribution of this standard deviation (kernel tests' inputs).
inline std::vector<float> random_vector(std::size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}
// The largest |a[i] - b[i]| of two arrays of one length.
inline float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// Bytes the allocator has handed out and not taken back (under AddressSanitizer, its allocator's
// count): what a leak makes grow.
std::size_t heap_in_use();

nlohmann::json read_json(const std::filesystem::path& path);
std::string read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::string& bytes);

// One tensor as raw bytes, for writing test files.
struct RawTensor {
  std::string name;
  std::string dtype;   // "F32", "F16", ...
  std::vector<std::int64_t> shape;
  std::string bytes;
};
std::vector<RawTensor> read_tensors(const std::filesystem::path& safetensors_file);
// A well-formed safetensors file holding `tensors` back to back.
std::string make_safetensors(const std::vector<RawTensor>& tensors);
// A file with this exact header JSON text followed by `data` (for malformed headers).
std::string make_safetensors_raw(const std::string& header, const std::string& data);
RawTensor f32_tensor(const std::string& name, std::vector<std::int64_t> shape, const std::vector<float>& values);

// Tensors by name and shape, for headers written without their data.
using TensorShapes = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;
// A one-layer GPT-2's tensors: V tokens, C wide, P positions.
TensorShapes one_layer_gpt2_shapes(std::int64_t V, std::int64_t C, std::int64_t P);
// The 8-byte length and the header (padded to 8 bytes) of an F16 safetensors file holding these
// tensors back to back, without their data; *data_bytes: how many bytes of data it promises.
std::string f16_header(const TensorShapes& tensors, std::uint64_t* data_bytes = nullptr);

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Copies a fixture's config.json and model.safetensors into `dir`.
void copy_fixture(const std::string& name, const std::filesystem::path& dir);

// A fixture's config.json, and its model.safetensors as a sharded checkpoint in `dir`: the tensors
// in name order dealt into `shards` runs of about equal count, written as
// model-0000i-of-0000n.safetensors with model.safetensors.index.json, as transformers'
// save_pretrained writes a checkpoint larger than max_shard_size. Returns the shards' names.
std::vector<std::string> write_sharded_fixture(const std::string& name, const std::filesystem::path& dir, int shards);
// The index text for this weight map (tensor name -> shard file name).
std::string shard_index_json(const std::vector<std::pair<std::string, std::string>>& weight_map);

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};
// Runs the glassbox CLI with these arguments (each shell-quoted) and optional stdin text.
CommandResult run_cli(const std::vector<std::string>& args, const std::string& stdin_text = "");
// Whether this build has the CLI to run (natively; the WebAssembly build has none).
inline bool has_cli() { return !std::string(GLASSBOX_CLI_PATH).empty(); }

// A string's bytes, as the loaders take a file's.
inline std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}
// A JSON array of token ids (the fixtures' expected.json).
inline std::vector<std::int32_t> ids_of(const nlohmann::json& j) { return j.get<std::vector<std::int32_t>>(); }

}   // namespace glassbox::test
