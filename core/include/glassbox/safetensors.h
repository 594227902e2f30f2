// Reader for the safetensors format (https://github.com/huggingface/safetensors):
//
//   [8 bytes: little-endian u64 N] [N bytes: JSON header] [data section]
//   header: {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//            "__metadata__": {"key": "value"}}   (offsets relative to the data section)
//
// The file is untrusted input: everything is validated before a single tensor is handed out
// (header length within the file, JSON well-formed, dtype known, byte range = shape x dtype size,
// ranges inside the data section and not overlapping). Natively the file is memory-mapped, so
// opening a 500 MB checkpoint costs no copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace glassbox {

// Every dtype the safetensors format defines. The model loader accepts F32, F16 and BF16 weights;
// the others are parsed (a file may carry them, e.g. U8 mask buffers) but not converted.
enum class DType { BOOL, U8, I8, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64, F8_E4M3, F8_E5M2 };

std::size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::int64_t numel;                 // product of shape (1 for a scalar)
  std::span<const std::byte> bytes;   // numel * dtype_size bytes inside the file (empty: parse_header)
  std::uint64_t offset = 0;           // where its data starts, in bytes from the data section's start
  int shard = 0;                      // which file of a sharded checkpoint holds it (SafeTensors::join)
};

// A sharded checkpoint's model.safetensors.index.json: {"weight_map": {tensor name: shard file
// name}, "metadata": {...}}. Shard names are plain file names in the index's directory.
struct ShardIndex {
  std::map<std::string, std::string> weight_map;
  std::vector<std::string> files;   // every shard it names, once each, in byte order of their names
  // Throws ModelFormatError naming `source` for text that is not JSON, no "weight_map" object, a
  // value that is not a file name (empty, a path, "." or ".."), or a map naming no tensor.
  static ShardIndex parse(std::string_view json, const std::string& source);
};

class MappedFile;

class SafeTensors {
 public:
  // Memory-maps (natively) or reads (WASM) the file and validates it. Throws ModelFormatError.
  static SafeTensors open(const std::filesystem::path& path);

  // Validates a file already in memory. `owner` keeps `bytes` alive for as long as the result
  // (and any TensorInfo::bytes taken from it) is used; `source` names the file in errors.
  static SafeTensors parse(std::span<const std::byte> bytes, std::string source,
                           std::shared_ptr<const void> owner = nullptr);

  // Only the layout: the header at the start of a file (`prefix` holds at least the 8-byte length
  // and the header), validated as parse() does except that the data section is taken to be as
  // long as the tensors say; every TensorInfo::bytes is empty. For deciding what loading the file
  // takes before its data is at hand. Throws ModelFormatError.
  static SafeTensors parse_header(std::span<const std::byte> prefix, std::string source);

  // The tensors of a sharded checkpoint as one set: `shards` are the files index.files names, in
  // that order (opened, parsed, or headers alone); each TensorInfo::shard says which holds it.
  // Every tensor of a shard must be one the index places in that shard, and every tensor the index
  // names must be in the shard it names: else ModelFormatError naming `source` (the index).
  static SafeTensors join(const ShardIndex& index, std::vector<SafeTensors> shards, std::string source);

  // The tensor with this exact name, or nullptr.
  const TensorInfo* find(std::string_view name) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const std::string& source() const { return source_; }
  // Where the data section starts in the file: 8 + the header's length.
  std::uint64_t data_start() const { return data_start_; }
  // The same for the file that holds `tensor` (a shard, after join).
  std::uint64_t data_start(const TensorInfo& tensor) const;
  // The shards join() was given (empty: a single file).
  const std::vector<SafeTensors>& shards() const;
  // A hint that this tensor's bytes will not be read again soon: for a file from open() the OS
  // may drop their pages from memory (they are read from the file again if they are used), for
  // bytes given to parse() nothing happens. Loading a model calls it for each tensor it copies.
  void drop_pages(const TensorInfo& tensor) const;
  // The header's "__metadata__" entries whose values are strings (the format allows no others).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  static SafeTensors parse_layout(std::span<const std::byte> bytes, std::optional<std::uint64_t> file_size,
                                  std::string source);
  static void sort_by_name(std::vector<TensorInfo>& tensors);

  std::string source_;
  std::uint64_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::shared_ptr<const void> owner_;
  const MappedFile* mapped_ = nullptr;                       // owner_, when open() mapped the file
  std::shared_ptr<const std::vector<SafeTensors>> shards_;   // join()'s, which hold the bytes
  std::vector<TensorInfo> tensors_;                          // sorted by name
};

// One tensor for write_safetensors: `bytes` holds numel * dtype_size bytes, little-endian.
struct TensorData {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;
};

// The bytes of a safetensors file holding these tensors (data in the order given) and string
// metadata ("__metadata__"). The header is padded with spaces so that the data section starts
// 8-byte aligned, as the reference writer does. Throws InvalidArgument for a size mismatch or a
// repeated name.
std::string safetensors_bytes(const std::vector<TensorData>& tensors,
                              const std::map<std::string, std::string>& metadata = {});

}   // namespace glassbox
