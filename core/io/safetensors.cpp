#include "glassbox/safetensors.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "io/json_depth.h"
#include "io/mapped_file.h"

namespace glassbox {
namespace {

struct DTypeEntry {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeEntry, 15> kDTypes{{
    {DType::BOOL, "BOOL", 1},
    {DType::U8, "U8", 1},
    {DType::I8, "I8", 1},
    {DType::I16, "I16", 2},
    {DType::U16, "U16", 2},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::I32, "I32", 4},
    {DType::U32, "U32", 4},
    {DType::F32, "F32", 4},
    {DType::F64, "F64", 8},
    {DType::I64, "I64", 8},
    {DType::U64, "U64", 8},
    {DType::F8_E4M3, "F8_E4M3", 1},
    {DType::F8_E5M2, "F8_E5M2", 1},
}};

const DTypeEntry& entry_of(DType dtype) {
  for (const auto& e : kDTypes)
    if (e.dtype == dtype) return e;
  throw Error("invalid DType value");
}

// The reference implementation refuses headers above 100 MB. Real headers are a few KB (GPT-2:
// 15 KB; thousands of tensors: a few hundred KB); we stop at 16 MB, because a parsed JSON document
// takes ~10x its text in memory, and the browser's WASM heap is small.
constexpr std::uint64_t kMaxHeaderBytes = 16u << 20;

}   // namespace

bool json_nests_deeper(std::string_view text, int levels) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;   // skip the escaped character
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > levels) return true;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return false;
}

namespace {

// A non-negative integer that fits in int64, or an error naming `what`.
std::int64_t as_size(const nlohmann::json& v, const std::string& source, const std::string& what) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw ModelFormatError(source, what + " must be a non-negative integer");
  return static_cast<std::int64_t>(v.get<std::uint64_t>());
}

// One header entry. `data_size`: bytes of the data section; `data`: its first byte, or null when
// only the header is at hand (TensorInfo::bytes is then empty).
TensorInfo parse_entry(const std::string& name, const nlohmann::json& e, std::uint64_t data_size, const std::byte* data,
                       const std::string& source) {
  const std::string where = "tensor '" + name + "'";
  if (!e.is_object()) throw ModelFormatError(source, where + ": header entry is not an object");
  auto dtype_it = e.find("dtype");
  auto shape_it = e.find("shape");
  auto offsets_it = e.find("data_offsets");
  if (dtype_it == e.end() || !dtype_it->is_string()) throw ModelFormatError(source, where + ": missing \"dtype\"");
  if (shape_it == e.end() || !shape_it->is_array()) throw ModelFormatError(source, where + ": missing \"shape\"");
  if (offsets_it == e.end() || !offsets_it->is_array() || offsets_it->size() != 2)
    throw ModelFormatError(source, where + ": \"data_offsets\" must be [begin, end]");

  TensorInfo info;
  info.name = name;
  const auto dtype_str = dtype_it->get<std::string>();
  auto known = std::find_if(kDTypes.begin(), kDTypes.end(), [&](const DTypeEntry& d) { return d.name == dtype_str; });
  if (known == kDTypes.end()) throw ModelFormatError(source, where + ": unknown dtype \"" + dtype_str + "\"");
  info.dtype = known->dtype;

  std::uint64_t numel = 1;
  for (const auto& d : *shape_it) {
    auto dim = static_cast<std::uint64_t>(as_size(d, source, where + ": shape dimension"));
    if (__builtin_mul_overflow(numel, dim, &numel)) throw ModelFormatError(source, where + ": shape is too large");
    info.shape.push_back(static_cast<std::int64_t>(dim));
  }
  std::uint64_t nbytes = 0;
  if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(known->size), &nbytes))
    throw ModelFormatError(source, where + ": shape is too large");
  info.numel = static_cast<std::int64_t>(numel);

  auto begin = static_cast<std::uint64_t>(as_size((*offsets_it)[0], source, where + ": data offset"));
  auto end = static_cast<std::uint64_t>(as_size((*offsets_it)[1], source, where + ": data offset"));
  if (begin > end) throw ModelFormatError(source, where + ": data_offsets begin after they end");
  if (end > data_size)
    throw ModelFormatError(source, where + ": data ends at byte " + std::to_string(end) + " of a data section of " +
                                       std::to_string(data_size) + " bytes (file truncated?)");
  if (end - begin != nbytes)
    throw ModelFormatError(source, where + ": " + std::string(known->name) + " shape needs " + std::to_string(nbytes) +
                                       " bytes but data_offsets give " + std::to_string(end - begin));
  info.offset = begin;
  if (data) info.bytes = std::span<const std::byte>(data + begin, end - begin);
  return info;
}

}   // namespace

std::size_t dtype_size(DType dtype) { return entry_of(dtype).size; }
std::string_view dtype_name(DType dtype) { return entry_of(dtype).name; }

SafeTensors SafeTensors::open(const std::filesystem::path& path) {
  auto file = MappedFile::open(path);
  SafeTensors st = parse(file->bytes(), path.string(), file);
  st.mapped_ = file.get();
  return st;
}

void SafeTensors::drop_pages(const TensorInfo& tensor) const {
  if (shards_) (*shards_)[static_cast<std::size_t>(tensor.shard)].drop_pages(tensor);
  if (mapped_) mapped_->drop_pages(tensor.bytes);
}

SafeTensors SafeTensors::parse(std::span<const std::byte> bytes, std::string source,
                               std::shared_ptr<const void> owner) {
  SafeTensors st = parse_layout(bytes, bytes.size(), std::move(source));
  st.owner_ = std::move(owner);
  return st;
}

SafeTensors SafeTensors::parse_header(std::span<const std::byte> prefix, std::string source) {
  return parse_layout(prefix, std::nullopt, std::move(source));
}

// The header at the start of `bytes`. With file_size, `bytes` is the whole file and the tensors
// must lie in it; without, `bytes` holds the header at least, and the data section is as long as
// the tensors say.
SafeTensors SafeTensors::parse_layout(std::span<const std::byte> bytes, std::optional<std::uint64_t> file_size,
                                      std::string source) {
  const std::uint64_t known = file_size.value_or(bytes.size());
  if (known < 8)
    throw ModelFormatError(source, "file is " + std::to_string(known) + " bytes, too short for a safetensors header");
  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  // (Given a prefix, the limit first: a caller gives at most the limit's worth of header.)
  if (!file_size && header_len > kMaxHeaderBytes)
    throw ModelFormatError(source, "header length " + std::to_string(header_len) + " exceeds the 16 MB limit");
  if (header_len > known - 8)
    throw ModelFormatError(source, "header length " + std::to_string(header_len) + " runs past the end of the " +
                                       std::to_string(known) + (file_size ? "-byte file" : " bytes given") +
                                       " (truncated or not safetensors)");
  if (header_len > kMaxHeaderBytes)
    throw ModelFormatError(source, "header length " + std::to_string(header_len) + " exceeds the 16 MB limit");
  const auto* header_begin = reinterpret_cast<const char*>(bytes.data() + 8);
  if (header_len == 0 || header_begin[0] != '{') throw ModelFormatError(source, "header is not a JSON object");
  // A header is at most 3 levels deep: {"name": {"shape": [..]}}.
  if (json_nests_deeper(std::string_view(header_begin, header_len), 3))
    throw ModelFormatError(source, "header nests deeper than {\"name\": {\"shape\": [...]}}");
  nlohmann::json header;
  std::set<std::string> names;
  auto reject_duplicates = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (event == nlohmann::json::parse_event_t::key && depth == 1 && !names.insert(parsed.get<std::string>()).second)
      throw ModelFormatError(source, "tensor '" + parsed.get<std::string>() + "' is named twice in the header");
    return true;
  };
  try {
    header = nlohmann::json::parse(header_begin, header_begin + header_len, reject_duplicates);
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(source, std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw ModelFormatError(source, "header is not a JSON object");

  SafeTensors st;
  st.source_ = std::move(source);
  st.data_start_ = 8 + header_len;
  const std::uint64_t data_size = file_size ? *file_size - st.data_start_ : UINT64_MAX;
  const std::byte* data = file_size ? bytes.data() + st.data_start_ : nullptr;
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") {
      if (!e.is_object()) throw ModelFormatError(st.source_, "\"__metadata__\" is not an object");
      for (const auto& [key, value] : e.items())
        if (value.is_string()) st.metadata_[key] = value.get<std::string>();
      continue;
    }
    st.tensors_.push_back(parse_entry(name, e, data_size, data, st.source_));
  }

  // As the reference implementation requires, the tensors tile the data section exactly: each
  // starts where the previous one ends (no overlap, no gap) and the last ends at the file's end.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : st.tensors_) by_offset.push_back(&t);
  const auto size_of = [](const TensorInfo* t) { return std::uint64_t(t->numel) * dtype_size(t->dtype); };
  std::sort(by_offset.begin(), by_offset.end(), [&](const TensorInfo* a, const TensorInfo* b) {
    return a->offset != b->offset ? a->offset < b->offset : size_of(a) < size_of(b);
  });
  std::uint64_t expected = 0;
  const TensorInfo* prev = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->offset < expected)
      throw ModelFormatError(st.source_, "tensors '" + prev->name + "' and '" + t->name + "' overlap");
    if (t->offset > expected)
      throw ModelFormatError(st.source_, "bytes " + std::to_string(expected) + ".." + std::to_string(t->offset) +
                                             " of the data section belong to no tensor");
    expected = t->offset + size_of(t);
    prev = t;
  }
  if (file_size && expected != data_size)
    throw ModelFormatError(st.source_,
                           std::to_string(data_size - expected) + " bytes after the last tensor belong to no tensor");
  sort_by_name(st.tensors_);
  return st;
}

void SafeTensors::sort_by_name(std::vector<TensorInfo>& tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
}

const TensorInfo* SafeTensors::find(std::string_view name) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  return (it != tensors_.end() && it->name == name) ? &*it : nullptr;
}

}   // namespace glassbox
