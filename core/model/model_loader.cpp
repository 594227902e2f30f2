// ModelLoader: the tensors of model.safetensors converted as their bytes arrive.
//
// The header gives every tensor's place in the file, so the whole load is planned before the data
// comes (plan_weights: the arrays allocated, one job per tensor in file order). Then each tensor's
// bytes go where they are needed with no copy beyond the caller's write into window():
//   - F32 tensors kept as F32 rows (embeddings, biases, norms) straight into those rows; the tied
//     LM head is then packed or quantized from the embedding's rows;
//   - tensors that must be whole before they can be converted (Conv1D matrices are transposed;
//     F16/BF16 tensors) into one staging buffer, reused, as large as the largest of them;
//   - tensors whose values are not used (causal-mask buffers, the tied LM head's copy) through a
//     small scratch buffer.
// Hugging Face writes tensors in name order, so a GPT-2 file's embedding comes last: planning from
// the header is what lets every tensor go to its place whatever the order.
//
// Model's loading functions are here too (Model::load, from_parts, load_memory): a model directory
// memory-mapped natively, read in pieces into a ModelLoader in WebAssembly.
#include "glassbox/model_loader.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/memory.h"
#include "io/mapped_file.h"
#include "io/sha256.h"
#include "kernels/kernels.h"
#include "model/arena.h"
#include "model/weights.h"

namespace glassbox {
namespace {

constexpr std::size_t kScratchBytes = 64 << 10;   // for skipped tensors: any size works

}   // namespace

struct ModelLoader::Impl {
  std::string config_json;
  ModelConfig config;
  Quantization quantization;
  std::string source;   // the weights file's name in errors
  std::string header;   // the file's first data_start bytes, as given to the constructor
  WeightPlan plan;
  LargeBlock staging;               // 64-aligned: F32 matrices are packed from it where they are
  std::vector<std::byte> scratch;   // the header's bytes as they come again, and skipped tensors
  std::uint64_t size = 0, received = 0;
  std::size_t next = 0;   // plan.jobs[next]: the tensor being received
  std::optional<Sha256> sha;
  const char* closed = nullptr;   // why every call now throws: the load failed, or finished

  void check_open() const {
    if (closed) throw Error(closed);
  }

  std::uint64_t data_start() const { return header.size(); }

  std::span<std::byte> window() {
    check_open();
    if (received < data_start())
      return std::span(scratch).first(std::min<std::uint64_t>(scratch.size(), data_start() - received));
    if (next == plan.jobs.size()) return {};
    const TensorJob& job = plan.jobs[next];
    const std::uint64_t done = received - data_start() - job.tensor->offset;
    const std::size_t left = static_cast<std::size_t>(tensor_bytes(*job.tensor) - done);
    if (streams_into_rows(job)) return {reinterpret_cast<std::byte*>(job.rows) + done, left};
    if (job.skipped()) return std::span(scratch).first(std::min(left, scratch.size()));
    return {staging.data() + done, left};
  }

  void commit(std::size_t n) {
    const std::span<std::byte> w = window();
    if (n > w.size())
      throw InvalidArgument("commit of " + std::to_string(n) + " bytes into a window of " + std::to_string(w.size()));
    if (sha) sha->update(w.first(n));
    if (received < data_start() && std::memcmp(w.data(), header.data() + received, n) != 0)
      throw ModelFormatError(source, "its header changed while the file was being read (was it replaced?)");
    received += n;
    convert_whole_tensors();
  }

  // Converts the tensors whose bytes are all in (and any empty ones that follow).
  void convert_whole_tensors() {
    while (received >= data_start() && next < plan.jobs.size()) {
      const TensorJob& job = plan.jobs[next];
      const std::uint64_t end = data_start() + job.tensor->offset + tensor_bytes(*job.tensor);
      if (received < end) return;
      if (!job.skipped()) {
        const std::size_t n = static_cast<std::size_t>(tensor_bytes(*job.tensor));
        const std::byte* bytes = streams_into_rows(job) ? reinterpret_cast<const std::byte*>(job.rows) : staging.data();
        convert_tensor(job, {bytes, n});
      }
      ++next;
    }
  }

  // Drops everything the load holds (the model's arrays, the staging buffer): a failed load keeps
  // nothing, and says so from then on.
  void fail(const char* why = "this model load failed earlier (see its first error); start a new one") {
    closed = why;
    plan = WeightPlan{};
    staging = LargeBlock();
    scratch = {};
  }
};

std::uint64_t ModelLoader::header_size(std::span<const std::byte> first_bytes, const std::string& source) {
  if (first_bytes.size() < 8)
    throw ModelFormatError(
        source, "file is " + std::to_string(first_bytes.size()) + " bytes, too short for a safetensors header");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(first_bytes[i]);
  if (n > (16u << 20))
    throw ModelFormatError(source, "header length " + std::to_string(n) + " exceeds the 16 MB limit");
  return 8 + n;
}

ModelLoader::ModelLoader(const std::string& config_json, std::span<const std::byte> header, const LoadOptions& options,
                         bool sha256, const ModelFileNames& names)
    : impl_(std::make_unique<Impl>()) {
#ifdef __EMSCRIPTEN__
  kernels::warm_up();   // V8 optimises the kernels while the weights are converted (kernels.h)
#endif
  Impl& m = *impl_;
  m.config_json = config_json;
  m.config = ModelConfig::parse(config_json, names.config);
  m.quantization = options.quantize;
  m.source = names.weights;
  const SafeTensors layout = SafeTensors::parse_header(header, m.source);
  m.header.assign(reinterpret_cast<const char*>(header.data()), layout.data_start());
  m.plan = plan_weights(m.config, layout, options.quantize, WeightSource::Streamed);
  std::uint64_t data = 0;
  for (const TensorJob& job : m.plan.jobs) data += tensor_bytes(*job.tensor);
  m.size = layout.data_start() + data;
  const std::uint64_t staging = staging_bytes(m.plan.jobs);
  if (staging > 0) m.staging = LargeBlock(static_cast<std::size_t>(staging));
  m.scratch.resize(kScratchBytes);
  if (sha256) m.sha.emplace();
  m.convert_whole_tensors();   // empty tensors at the start
}

ModelLoader::ModelLoader(ModelLoader&&) noexcept = default;
ModelLoader& ModelLoader::operator=(ModelLoader&&) noexcept = default;
ModelLoader::~ModelLoader() = default;

std::uint64_t ModelLoader::size() const { return impl_->size; }
std::uint64_t ModelLoader::received() const { return impl_->received; }

std::span<std::byte> ModelLoader::window() {
  try {
    return impl_->window();
  } catch (...) {
    impl_->fail();
    throw;
  }
}

void ModelLoader::commit(std::size_t n) {
  try {
    impl_->commit(n);
  } catch (...) {
    impl_->fail();
    throw;
  }
}

void ModelLoader::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const std::span<std::byte> w = window();
    if (w.empty()) {
      impl_->fail();
      throw ModelFormatError(impl_->source,
                             std::to_string(bytes.size()) + " bytes after the last tensor belong to no tensor");
    }
    const std::size_t n = std::min(w.size(), bytes.size());
    std::memcpy(w.data(), bytes.data(), n);
    commit(n);
    bytes = bytes.subspan(n);
  }
}

std::string ModelLoader::sha256_hex() const {
  if (!impl_->sha) throw Error("this loader was not asked to compute a SHA-256");
  return impl_->sha->hex();
}

Model ModelLoader::finish() {
  Impl& m = *impl_;
  m.check_open();
  if (m.received < m.size) {
    const std::string where =
        m.received < m.data_start() ? "in its header" : "in tensor '" + m.plan.jobs[m.next].tensor->name + "'";
    m.fail();
    throw ModelFormatError(m.source, "the file ends after " + std::to_string(m.received) + " of its " +
                                         std::to_string(m.size) + " bytes, " + where + " (file truncated?)");
  }
  Model model = Model::from_weights(m.config_json, m.config, m.quantization, std::move(m.plan.weights));
  m.fail("this loader has already handed its model over (finish)");
  return model;
}

// ---------------------------------------------------------------------------------------------
// Model's loading

namespace {

// Refuses, before anything is allocated, a model whose arrays (`loading`: load_footprint's peak)
// and a full context's KV cache need more than options.max_memory or what the system has left.
void check_load_memory(const std::string& config_json, std::uint64_t loading, const LoadOptions& options) {
  const ModelConfig c = ModelConfig::parse(config_json, "config.json");
  const std::uint64_t cache = KVCache::peak_bytes(c.n_layer, c.n_positions, c.n_embd);
  check_memory(loading + cache, options.max_memory, "the model",
               megabytes(loading) + " MB for its weights as the engine holds them and for loading them, " +
                   megabytes(cache) + " MB for the keys and values of a full context",
               "use a smaller model or int8 weights (--quantize int8)");
}

}   // namespace

Model Model::load(const std::filesystem::path& dir, const LoadOptions& options) {
  if (!std::filesystem::is_directory(dir))
    throw ModelFormatError(dir.string(),
                           "not a directory (a model is a directory with config.json and model.safetensors)");
  const auto config_path = dir / "config.json";
  const std::string text = read_file(config_path, 1u << 20);   // real configs are ~1 KB
#ifdef __EMSCRIPTEN__
  return load_streaming(text, config_path.string(), dir / "model.safetensors", options);
#else
  const SafeTensors weights = SafeTensors::open(dir / "model.safetensors");
  const ModelConfig config = ModelConfig::parse(text, config_path.string());
  check_load_memory(text, load_footprint(config, weights, options.quantize, WeightSource::Kept).peak(), options);
  return from_parts(text, weights, config_path.string(), options);
#endif
}

// WebAssembly has no mapping (a "mapped" file is read whole into the heap): the file is read in
// pieces straight into a ModelLoader's windows, so that only the model's own arrays are held.
Model Model::load_streaming(const std::string& config_json, const std::string& config_source,
                            const std::filesystem::path& path, const LoadOptions& options) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelFormatError(path.string(), "cannot open the file");
  const auto read = [&](std::byte* into, std::size_t n) {
    file.read(reinterpret_cast<char*>(into), static_cast<std::streamsize>(n));
    return static_cast<std::size_t>(file.gcount());
  };
  std::vector<std::byte> header(8);
  header.resize(read(header.data(), 8));
  header.resize(static_cast<std::size_t>(ModelLoader::header_size(header, path.string())));
  header.resize(8 + read(header.data() + 8, header.size() - 8));
  std::optional<std::uint64_t> loading;
  try {
    loading = load_memory(config_json, header, options);
  } catch (const ModelFormatError&) {   // the loader says what is wrong, naming the files
  }
  if (loading) check_load_memory(config_json, *loading, options);
  ModelLoader loader(config_json, header, options, false, {config_source, path.string()});
  loader.write(header);
  for (std::span<std::byte> window = loader.window(); !window.empty(); window = loader.window()) {
    const std::size_t n = read(window.data(), std::min<std::size_t>(window.size(), 4u << 20));
    if (n == 0) break;   // the file ended: finish() says where
    loader.commit(n);
  }
  return loader.finish();
}

Model Model::from_parts(const std::string& config_json, const SafeTensors& weights, const std::string& config_source,
                        const LoadOptions& options) {
#ifdef __EMSCRIPTEN__
  kernels::warm_up();   // V8 optimises the kernels while the weights are converted (kernels.h)
#endif
  ModelConfig config = ModelConfig::parse(config_json, config_source);
  ModelWeights w = load_weights(config, weights, options.quantize);
  return from_weights(config_json, std::move(config), options.quantize, std::move(w));
}

std::uint64_t Model::load_memory(const std::string& config_json, std::span<const std::byte> weights_prefix,
                                 const LoadOptions& options) {
  const ModelConfig config = ModelConfig::parse(config_json, "config.json");
  const SafeTensors layout = SafeTensors::parse_header(weights_prefix, "model.safetensors");
  return load_footprint(config, layout, options.quantize, WeightSource::Streamed).peak();
}

}   // namespace glassbox
