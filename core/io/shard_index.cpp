// Sharded checkpoints: model.safetensors.index.json, and the shards it names joined into one set
// of tensors, so that the model's loader reads them as it reads a single model.safetensors.
//
// The index and the shards are checked against each other both ways before any tensor is used:
// a tensor the index names must be in the shard it names, and a shard must hold only the tensors
// the index places in it. Either disagreement means the directory mixes files of different
// checkpoints (or one was replaced), which would give a model of mismatched weights.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/safetensors.h"
#include "io/json_depth.h"

namespace glassbox {
namespace {

// Whether a shard's name is a file of the index's own directory: the index is untrusted input,
// and "../x" or "/etc/passwd" must not be read as a shard.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find_first_of("/\\") == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}   // namespace

ShardIndex ShardIndex::parse(std::string_view text, const std::string& source) {
  // {"metadata": {...}, "weight_map": {"name": "file"}}: nothing nests deeper than 2 levels (3
  // allowed), so a hostile "[[[[...]]]]" is refused before the parser builds it.
  if (json_nests_deeper(text, 3))
    throw ModelFormatError(source, "nests deeper than {\"weight_map\": {\"name\": \"file\"}}");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(source, std::string("not valid JSON: ") + e.what());
  }
  const auto map = j.is_object() ? j.find("weight_map") : j.end();
  if (map == j.end() || !map->is_object())
    throw ModelFormatError(source,
                           "no \"weight_map\" object (a sharded checkpoint's index maps each tensor to its file)");
  if (map->empty()) throw ModelFormatError(source, "\"weight_map\" names no tensor");
  ShardIndex index;
  for (const auto& [name, file] : map->get_ref<const nlohmann::json::object_t&>()) {
    if (!file.is_string() || !plain_file_name(file.get<std::string>()))
      throw ModelFormatError(source, "tensor " + quote_text(name) + " is mapped to " + file.dump() +
                                         ", not the name of a file beside the index");
    index.weight_map.emplace(name, file.get<std::string>());
    index.files.push_back(file.get<std::string>());
  }
  std::sort(index.files.begin(), index.files.end());
  index.files.erase(std::unique(index.files.begin(), index.files.end()), index.files.end());
  return index;
}

SafeTensors SafeTensors::join(const ShardIndex& index, std::vector<SafeTensors> shards, std::string source) {
  if (shards.size() != index.files.size())
    throw InvalidArgument("SafeTensors::join: " + std::to_string(shards.size()) + " shards for an index naming " +
                          std::to_string(index.files.size()));
  SafeTensors all;
  all.source_ = std::move(source);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    for (TensorInfo t : shards[i].tensors()) {
      const auto placed = index.weight_map.find(t.name);
      if (placed == index.weight_map.end())
        throw ModelFormatError(shards[i].source(), "tensor " + quote_text(t.name) + " is not in the index " +
                                                       all.source_ + " (are the files from one checkpoint?)");
      if (placed->second != index.files[i])
        throw ModelFormatError(shards[i].source(), "tensor " + quote_text(t.name) + " is here, but the index " +
                                                       all.source_ + " places it in " + placed->second);
      t.shard = static_cast<int>(i);
      all.tensors_.push_back(std::move(t));
    }
  }
  if (all.tensors_.size() != index.weight_map.size()) {   // every tensor found is in the map, once
    for (const auto& [name, file] : index.weight_map) {
      const std::size_t i = static_cast<std::size_t>(std::lower_bound(index.files.begin(), index.files.end(), file) -
                                                     index.files.begin());
      if (!shards[i].find(name))
        throw ModelFormatError(all.source_, "names tensor " + quote_text(name) + " in " + file +
                                                ", which has no such tensor (is a shard from another checkpoint?)");
    }
  }
  sort_by_name(all.tensors_);
  all.shards_ = std::make_shared<const std::vector<SafeTensors>>(std::move(shards));
  return all;
}

std::uint64_t SafeTensors::data_start(const TensorInfo& tensor) const {
  return shards_ ? (*shards_)[static_cast<std::size_t>(tensor.shard)].data_start() : data_start_;
}

const std::vector<SafeTensors>& SafeTensors::shards() const {
  static const std::vector<SafeTensors> none;
  return shards_ ? *shards_ : none;
}

}   // namespace glassbox
