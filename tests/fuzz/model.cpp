// A whole model from arbitrary bytes: config.json, a NUL byte, then model.safetensors. If it loads
// (F32, then int8, then int4), a forward pass over the first and last token ids with attention captured, and
// one more token through the cache. The same file fed to a ModelLoader in pieces (their sizes
// taken from the input) must load exactly when the whole file does, into the same logits.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "fuzz.h"
#include "glassbox/model.h"
#include "glassbox/model_loader.h"
#include "glassbox/safetensors.h"

namespace {
// The logits of run()'s first forward pass.
std::vector<float> run(const glassbox::Model& model) {
  using namespace glassbox;
  const ModelConfig& c = model.config();
  KVCache cache = model.new_cache();
  const std::int32_t last = c.vocab_size - 1;
  const std::vector<std::int32_t> prompt = {0, last};
  int captured = 0;
  const TensorHook hook = [&](const NamedTensor&) { ++captured; };
  std::vector<float> logits =
      model.forward(std::span(prompt).first(std::min<std::size_t>(prompt.size(), model.context())), cache,
                    {.all_logits = true, .hook = &hook});
  if (cache.size() < model.context()) model.forward(std::span(prompt).first(1), cache);
  return logits;
}

// The file through a ModelLoader, in pieces of 1 to 64 bytes cycling with the file's own bytes;
// nothing when it fails.
std::optional<std::vector<float>> streamed(const std::string& config, std::string_view file, glassbox::Quantization q) {
  using namespace glassbox;
  try {
    const auto bytes = std::as_bytes(std::span(file.data(), file.size()));
    ModelLoader loader(config, bytes.first(std::min<std::size_t>(bytes.size(), 64 << 10)), {q});
    for (std::size_t at = 0; at < bytes.size();) {
      const std::size_t n = std::min<std::size_t>(bytes.size() - at, 1 + std::to_integer<std::size_t>(bytes[at]) % 64);
      loader.write(bytes.subspan(at, n));
      at += n;
    }
    return run(loader.finish());
  } catch (const Error&) {
    return std::nullopt;
  }
}
}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const auto [config, weights] = fuzz::split_at_nul(fuzz::as_text(data, size));
  for (const auto q : {Quantization::None, Quantization::Int8, Quantization::Int4}) {
    std::optional<std::vector<float>> whole;
    try {
      const SafeTensors st =
          SafeTensors::parse({reinterpret_cast<const std::byte*>(weights.data()), weights.size()}, "model.safetensors");
      whole = run(Model::from_parts(std::string(config), st, "config.json", {q}));
    } catch (const Error&) {
    }
    const std::optional<std::vector<float>> pieces = streamed(std::string(config), weights, q);
    if (whole.has_value() != pieces.has_value()) __builtin_trap();   // one loads what the other refuses
    if (whole &&
        (whole->size() != pieces->size() || std::memcmp(whole->data(), pieces->data(), whole->size() * 4) != 0))
      __builtin_trap();
  }
  return 0;
}
