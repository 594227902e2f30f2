// Writing safetensors files (trained models and training checkpoints); the reader is safetensors.cpp.
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "glassbox/error.h"
#include "glassbox/safetensors.h"

namespace glassbox {

std::string safetensors_bytes(const std::vector<TensorData>& tensors,
                              const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> names;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    std::int64_t numel = 1;
    for (std::int64_t d : t.shape) numel *= d;
    if (t.bytes.size() != static_cast<std::uint64_t>(numel) * dtype_size(t.dtype))
      throw InvalidArgument("tensor '" + t.name + "': " + std::to_string(t.bytes.size()) +
                            " bytes do not match its shape and dtype");
    if (!names.insert(t.name).second || t.name == "__metadata__")
      throw InvalidArgument("tensor name '" + t.name + "' is used twice or reserved");
    header[t.name] = {{"dtype", std::string(dtype_name(t.dtype))},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - (8 + text.size()) % 8) % 8, ' ');   // data section 8-byte aligned
  std::string out(8, '\0');
  const std::uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);   // little-endian u64
  out.reserve(8 + text.size() + offset);
  out += text;
  for (const auto& t : tensors) out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

}   // namespace glassbox
