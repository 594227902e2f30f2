// ModelLoader: the tensors of model.safetensors converted as their bytes arrive.
//
// The header gives every tensor's place in the file, so the whole load is planned before the data
// comes (plan_weights: the arrays allocated, one job per tensor in file order). Then each tensor's
// bytes go where they are needed with no copy beyond the caller's write into window():
//   - F32 tensors kept as F32 rows (embeddings, biases, norms) straight into those rows, and a
//     16-bit token embedding straight into its rows as they are (RowTable); the tied LM head is
//     then packed or quantized from the embedding's rows;
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
  LoadOptions options;
  // One file, or each shard of a sharded checkpoint, in the order its bytes come.
  std::vector<std::string> sources;    // its name in errors
  std::vector<std::string> headers;    // its first data_start bytes, as given to the constructor
  std::vector<std::uint64_t> starts;   // where it starts in the stream of all the files' bytes
  WeightPlan plan;
  LargeBlock staging;               // 64-aligned: F32 matrices are packed from it where they are
  std::vector<std::byte> scratch;   // the headers' bytes as they come again, and skipped tensors
  std::uint64_t size = 0, received = 0;
  std::size_t next = 0;   // plan.jobs[next]: the tensor being received
  std::optional<Sha256> sha;
  const char* closed = nullptr;   // why every call now throws: the load failed, or finished

  void check_open() const {
    if (closed) throw Error(closed);
  }

  // The file that byte `at` of the stream belongs to.
  std::size_t file_at(std::uint64_t at) const {
    return static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin() - 1);
  }
  std::uint64_t file_end(std::size_t f) const { return f + 1 < starts.size() ? starts[f + 1] : size; }
  // Where a tensor's bytes start in the stream.
  std::uint64_t start_of(const TensorJob& job) const {
    const auto f = static_cast<std::size_t>(job.tensor->shard);
    return starts[f] + headers[f].size() + job.tensor->offset;
  }
  // Whether the next byte is one of a header's (they come again, checked against the first copy).
  bool in_header() const { return next == plan.jobs.size() || received < start_of(plan.jobs[next]); }

  std::span<std::byte> window() {
    check_open();
    if (received == size) return {};
    if (in_header()) {
      const std::size_t f = file_at(received);
      return std::span(scratch).first(
          std::min<std::uint64_t>(scratch.size(), starts[f] + headers[f].size() - received));
    }
    const TensorJob& job = plan.jobs[next];
    const std::uint64_t done = received - start_of(job);
    const std::size_t left = static_cast<std::size_t>(tensor_bytes(*job.tensor) - done);
    if (streams_into_rows(job)) return {rows_bytes(job) + done, left};
    if (job.skipped()) return std::span(scratch).first(std::min(left, scratch.size()));
    return {staging.data() + done, left};
  }

  void commit(std::size_t n) {
    const bool header = in_header();
    const std::span<std::byte> w = window();
    if (n > w.size())
      throw InvalidArgument("commit of " + std::to_string(n) + " bytes into a window of " + std::to_string(w.size()));
    if (sha) sha->update(w.first(n));
    const std::size_t f = file_at(received);
    if (header && std::memcmp(w.data(), headers[f].data() + (received - starts[f]), n) != 0)
      throw ModelFormatError(sources[f], "its header changed while the file was being read (was it replaced?)");
    received += n;
    convert_whole_tensors();
  }

  // Converts the tensors whose bytes are all in (and any empty ones that follow).
  void convert_whole_tensors() {
    while (next < plan.jobs.size()) {
      const TensorJob& job = plan.jobs[next];
      if (received < start_of(job) + tensor_bytes(*job.tensor)) return;
      if (!job.skipped()) {
        const std::size_t n = static_cast<std::size_t>(tensor_bytes(*job.tensor));
        const std::byte* bytes = streams_into_rows(job) ? rows_bytes(job) : staging.data();
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

namespace {

// The tensors of one file's header, or of every shard's joined by the index (each shard named by
// names.shards, else by the index's own names).
SafeTensors layout_of(const std::string& index_json, std::span<const std::span<const std::byte>> headers,
                      const ModelFileNames& names) {
  if (index_json.empty()) return SafeTensors::parse_header(headers[0], names.weights);
  const ShardIndex index = ShardIndex::parse(index_json, names.index);
  if (headers.size() != index.files.size())
    throw InvalidArgument(names.index + ": names " + std::to_string(index.files.size()) + " shards, " +
                          std::to_string(headers.size()) + " were given");
  std::vector<SafeTensors> shards;
  for (std::size_t i = 0; i < headers.size(); ++i)
    shards.push_back(SafeTensors::parse_header(headers[i], i < names.shards.size() ? names.shards[i] : index.files[i]));
  return SafeTensors::join(index, std::move(shards), names.index);
}

}   // namespace

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

// (The one-file constructor does not go through layout_of: the WebAssembly module, which reads
// shards in JS, then links none of the index's code.)
ModelLoader::ModelLoader(const std::string& config_json, std::span<const std::byte> header, const LoadOptions& options,
                         bool sha256, const ModelFileNames& names)
    : ModelLoader(config_json, SafeTensors::parse_header(header, names.weights), std::span(&header, 1), options, sha256,
                  names) {}

ModelLoader::ModelLoader(const std::string& config_json, const std::string& index_json,
                         std::span<const std::span<const std::byte>> headers, const LoadOptions& options, bool sha256,
                         const ModelFileNames& names)
    : ModelLoader(config_json, layout_of(index_json, headers, names), headers, options, sha256, names) {}

ModelLoader::ModelLoader(const std::string& config_json, const SafeTensors& layout,
                         std::span<const std::span<const std::byte>> headers, const LoadOptions& options, bool sha256,
                         const ModelFileNames& names)
    : impl_(std::make_unique<Impl>()) {
#ifdef __EMSCRIPTEN__
  kernels::warm_up();   // V8 optimises the kernels while the weights are converted (kernels.h)
#endif
  Impl& m = *impl_;
  m.config_json = config_json;
  m.config = ModelConfig::parse(config_json, names.config);
  m.options = options;
  context_length(m.config, options.context);   // refused before anything is read
  m.plan = plan_weights(m.config, layout, options.quantize, WeightSource::Streamed);
  const std::vector<SafeTensors>& shards = layout.shards();
  for (std::size_t f = 0; f < headers.size(); ++f) {
    const SafeTensors& file = shards.empty() ? layout : shards[f];
    m.sources.push_back(file.source());
    m.headers.emplace_back(reinterpret_cast<const char*>(headers[f].data()), file.data_start());
    m.starts.push_back(m.size);
    m.size += file.data_start();
    for (const TensorInfo& t : file.tensors()) m.size += tensor_bytes(t);
  }
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
std::uint64_t ModelLoader::file_end() const { return impl_->file_end(impl_->file_at(impl_->received)); }

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
      throw ModelFormatError(impl_->sources.back(),
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
    const std::size_t f = m.file_at(m.received);
    const std::string where = m.in_header() ? "in its header" : "in tensor '" + m.plan.jobs[m.next].tensor->name + "'";
    const std::string source = m.sources[f];
    const std::uint64_t got = m.received - m.starts[f], size = m.file_end(f) - m.starts[f];
    m.fail();
    throw ModelFormatError(source, "the file ends after " + std::to_string(got) + " of its " + std::to_string(size) +
                                       " bytes, " + where + " (file truncated?)");
  }
  Model model = Model::from_weights(m.config_json, m.config, m.options, std::move(m.plan.weights));
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
  const int context = context_length(c, options.context);
  const std::uint64_t cache = kv_cache_bytes(c, context);
  check_memory(loading + cache, options.max_memory, "the model",
               megabytes(loading) + " MB for its weights as the engine holds them and for loading them, " +
                   megabytes(cache) + " MB for the keys and values of a full context (" + std::to_string(context) +
                   " positions)",
               "use a smaller model or int8 weights (--quantize int8)");
}

}   // namespace

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";

// A model directory's weights files: model.safetensors, or else the shards its index names (and
// the index's text). A shard that is not there is named as the index's, before anything is read.
struct WeightFiles {
  std::vector<std::filesystem::path> paths;
  std::string index_json;   // empty: one file
  std::string index_path;
};

WeightFiles weight_files(const std::filesystem::path& dir) {
  const auto single = dir / "model.safetensors", index_path = dir / kIndexName;
  std::error_code ec;
  if (std::filesystem::exists(single, ec) || !std::filesystem::exists(index_path, ec)) return {{single}, "", ""};
  WeightFiles files{{}, read_file(index_path, 16u << 20), index_path.string()};
  for (const std::string& name : ShardIndex::parse(files.index_json, files.index_path).files) {
    files.paths.push_back(dir / name);
    if (!std::filesystem::exists(files.paths.back(), ec))
      throw ModelFormatError(files.paths.back().string(),
                             std::string("no such file: ") + kIndexName + " names it as a shard of the checkpoint");
  }
  return files;
}

}   // namespace

Model Model::load(const std::filesystem::path& dir, const LoadOptions& options) {
  if (!std::filesystem::is_directory(dir))
    throw ModelFormatError(dir.string(),
                           "not a directory (a model is a directory with config.json and model.safetensors)");
  const auto config_path = dir / "config.json";
  const std::string text = read_file(config_path, 1u << 20);   // real configs are ~1 KB
  const WeightFiles files = weight_files(dir);
#ifdef __EMSCRIPTEN__
  return load_streaming(text, config_path.string(), files.paths, files.index_json, files.index_path, options);
#else
  std::vector<SafeTensors> shards;
  for (const auto& path : files.paths) shards.push_back(SafeTensors::open(path));
  const SafeTensors weights = files.index_json.empty()
                                  ? std::move(shards[0])
                                  : SafeTensors::join(ShardIndex::parse(files.index_json, files.index_path),
                                                      std::move(shards), files.index_path);
  const ModelConfig config = ModelConfig::parse(text, config_path.string());
  check_load_memory(text, load_footprint(config, weights, options.quantize, WeightSource::Kept).peak(), options);
  return from_parts(text, weights, config_path.string(), options);
#endif
}

// WebAssembly has no mapping (a "mapped" file is read whole into the heap): the files are read in
// pieces straight into a ModelLoader's windows, so that only the model's own arrays are held.
Model Model::load_streaming(const std::string& config_json, const std::string& config_source,
                            const std::vector<std::filesystem::path>& paths, const std::string& index_json,
                            const std::string& index_source, const LoadOptions& options) {
  std::vector<std::ifstream> streams;
  std::vector<std::vector<std::byte>> headers;
  ModelFileNames names{config_source, paths[0].string(), index_source, {}};
  for (const auto& path : paths) {
    std::ifstream& file = streams.emplace_back(path, std::ios::binary);
    if (!file) throw ModelFormatError(path.string(), "cannot open the file");
    names.shards.push_back(path.string());
    std::vector<std::byte>& header = headers.emplace_back(8);
    file.read(reinterpret_cast<char*>(header.data()), 8);
    header.resize(static_cast<std::size_t>(file.gcount()));
    header.resize(static_cast<std::size_t>(ModelLoader::header_size(header, path.string())));
    file.read(reinterpret_cast<char*>(header.data() + 8), static_cast<std::streamsize>(header.size() - 8));
    header.resize(8 + static_cast<std::size_t>(file.gcount()));
    file.seekg(0);
  }
  const std::vector<std::span<const std::byte>> prefixes(headers.begin(), headers.end());
  std::optional<std::uint64_t> loading;
  try {
    loading = load_memory(config_json, index_json, prefixes, options);
  } catch (const ModelFormatError&) {   // the loader says what is wrong, naming the files
  }
  if (loading) check_load_memory(config_json, *loading, options);
  ModelLoader loader(config_json, index_json, prefixes, options, false, names);
  // Each file up to where the loader says it ends: a file that ends early leaves the rest of its
  // bytes missing, which finish() reports, naming it.
  for (std::size_t f = 0; f < streams.size(); ++f) {
    const std::uint64_t end = loader.file_end();
    for (std::span<std::byte> window = loader.window(); loader.received() < end; window = loader.window()) {
      const auto want = std::min<std::uint64_t>({window.size(), end - loader.received(), 4u << 20});
      streams[f].read(reinterpret_cast<char*>(window.data()), static_cast<std::streamsize>(want));
      const auto n = static_cast<std::size_t>(streams[f].gcount());
      if (n == 0) return loader.finish();   // the file ended: finish() says where
      loader.commit(n);
    }
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
  return from_weights(config_json, std::move(config), options, std::move(w));
}

std::uint64_t Model::load_memory(const std::string& config_json, std::span<const std::byte> weights_prefix,
                                 const LoadOptions& options) {
  const ModelConfig config = ModelConfig::parse(config_json, "config.json");
  const SafeTensors layout = SafeTensors::parse_header(weights_prefix, "model.safetensors");
  return load_footprint(config, layout, options.quantize, WeightSource::Streamed).peak();
}

std::uint64_t Model::load_memory(const std::string& config_json, const std::string& index_json,
                                 std::span<const std::span<const std::byte>> shard_prefixes,
                                 const LoadOptions& options) {
  const ModelConfig config = ModelConfig::parse(config_json, "config.json");
  const SafeTensors layout = layout_of(index_json, shard_prefixes, {});
  return load_footprint(config, layout, options.quantize, WeightSource::Streamed).peak();
}

}   // namespace glassbox
