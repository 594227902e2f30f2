// Loading a model as the bytes of its model.safetensors arrive (a download, a file read in
// pieces), each tensor converted into its final place (F32 rows, packed or int8 matrices) as soon
// as it is whole: the file is never held in memory. This is how the WebAssembly build loads, so
// that a model needs its own arrays and little more; natively Model::load maps the file instead.
//
//   ModelLoader loader(config_json, first_bytes_through_the_header, {Quantization::Int8});
//   while (more) { auto w = loader.window(); n = read(w.data(), w.size()); loader.commit(n); }
//   Model model = loader.finish();
//
// Costs: the constructor allocates every array the model keeps (Model::load_memory counts them),
// plus one staging buffer as large as the largest tensor that cannot be written straight into its
// place (a Conv1D matrix is transposed, so it is gathered whole first); window()/commit() copy
// nothing beyond the caller's one write into the window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "glassbox/model.h"

namespace glassbox {

// The files' names in error messages (a path, say).
struct ModelFileNames {
  std::string config = "config.json";
  std::string weights = "model.safetensors";
  std::string index = "model.safetensors.index.json";   // a sharded checkpoint's
  std::vector<std::string> shards;                      // its shards (empty: as the index names them)
};

class ModelLoader {
 public:
  // How many of a safetensors file's first bytes hold its 8-byte length and header, given at least
  // its first 8. Throws ModelFormatError (naming `source`) for fewer, or a header past the 16 MB limit.
  static std::uint64_t header_size(std::span<const std::byte> first_bytes,
                                   const std::string& source = "model.safetensors");

  // config.json's text and the file's first bytes, at least through the end of its header (more
  // are ignored: they are given again through window()). Parses and checks the header against the
  // config, and allocates the model's arrays: every error of the file's layout is thrown here,
  // before any data is read (ModelFormatError; std::bad_alloc when memory runs out).
  // sha256: also hash the bytes as they pass (sha256_hex()).
  ModelLoader(const std::string& config_json, std::span<const std::byte> header, const LoadOptions& options = {},
              bool sha256 = false, const ModelFileNames& names = {});
  // A sharded checkpoint: model.safetensors.index.json's text and each shard's first bytes through
  // its header, in the order of ShardIndex::files. The bytes then come as one stream, the shards'
  // whole files one after the other in that order, each tensor converted as soon as it is whole.
  // The index is checked against the headers here (SafeTensors::join), before any data is read.
  ModelLoader(const std::string& config_json, const std::string& index_json,
              std::span<const std::span<const std::byte>> headers, const LoadOptions& options = {}, bool sha256 = false,
              const ModelFileNames& names = {});
  ModelLoader(ModelLoader&&) noexcept;
  ModelLoader& operator=(ModelLoader&&) noexcept;
  // Frees everything not yet handed to a Model: destroying a loader cancels its load.
  ~ModelLoader();

  std::uint64_t size() const;       // bytes of the whole file (all shards), as the headers say
  std::uint64_t received() const;   // bytes committed so far, from the (first) file's first
  // Where the file now being received ends, counted as received() is: a reader of several shards
  // knows from it when to go on to the next file (size() once the last one is being received).
  std::uint64_t file_end() const;

  // Where the file's next bytes go, from byte received(): at least one byte until all are in,
  // then empty. Valid until the next call.
  std::span<std::byte> window();
  // The first n bytes of window() now hold the file's next n bytes. Converts each tensor they
  // complete. An error (bytes that disagree with the header, n past the window) is thrown, and the
  // loader is then failed: everything is freed and every later call throws.
  void commit(std::size_t n);
  // Copies `bytes`, the file's next bytes, through window() and commit(). Throws ModelFormatError
  // for bytes past the end of the file.
  void write(std::span<const std::byte> bytes);

  // The SHA-256 of the bytes committed, as 64 lower-case hex digits (constructed with sha256).
  std::string sha256_hex() const;

  // The model, once every byte is in; throws ModelFormatError naming how far the data got when the
  // file ended early. The loader is empty afterwards.
  Model finish();

 private:
  // Both public constructors: `layout` is the file's header, or the shards' joined.
  ModelLoader(const std::string& config_json, const SafeTensors& layout,
              std::span<const std::span<const std::byte>> headers, const LoadOptions& options, bool sha256,
              const ModelFileNames& names);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}   // namespace glassbox
