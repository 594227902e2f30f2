// A whole model from arbitrary bytes: config.json, a NUL byte, then model.safetensors. If it loads
// (F32, then int8), a forward pass over the first and last token ids with attention captured, and
// one more token through the cache.
#include <algorithm>
#include <vector>

#include "fuzz.h"
#include "glassbox/model.h"
#include "glassbox/safetensors.h"

namespace {
void run(const glassbox::Model& model) {
  using namespace glassbox;
  const ModelConfig& c = model.config();
  KVCache cache = model.new_cache();
  const std::int32_t last = c.vocab_size - 1;
  const std::vector<std::int32_t> prompt = {0, last};
  int captured = 0;
  const TensorHook hook = [&](const NamedTensor&) { ++captured; };
  model.forward(std::span(prompt).first(std::min<std::size_t>(prompt.size(), c.n_positions)), cache,
                {.all_logits = true, .hook = &hook});
  if (cache.size() < c.n_positions) model.forward(std::span(prompt).first(1), cache);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  const auto [config, weights] = fuzz::split_at_nul(fuzz::as_text(data, size));
  try {
    const SafeTensors st = SafeTensors::parse({reinterpret_cast<const std::byte*>(weights.data()), weights.size()},
                                              "model.safetensors");
    for (const auto q : {Quantization::None, Quantization::Int8}) run(Model::from_parts(std::string(config), st, "config.json", {q}));
  } catch (const Error&) {
  }
  return 0;
}
