// config.json on arbitrary bytes: either a ModelConfig whose numbers the model can rely on, or an
// error naming the problem.
#include <cstdlib>

#include "fuzz.h"
#include "glassbox/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace glassbox;
  try {
    const ModelConfig c = ModelConfig::parse(fuzz::as_text(data, size));
    // What the loader and the forward pass assume of a parsed config. Heads split n_embd unless
    // the config gives head_dim (the decoders'); key/value heads divide the query heads.
    if (c.n_layer < 0 || c.n_embd <= 0 || c.n_head <= 0 || (c.n_head_dim == 0 && c.n_embd % c.n_head != 0) ||
        c.head_dim() <= 0 || c.kv_heads() <= 0 || c.n_head % c.kv_heads() != 0 || c.vocab_size <= 0 ||
        c.n_positions <= 0 || c.n_inner <= 0)
      std::abort();
    if (c.position_encoding == PositionEncoding::Rotary &&
        (c.rotary_dim() < 2 || c.rotary_dim() % 2 != 0 || c.rotary_dim() > c.head_dim()))
      std::abort();
    if (!c.attention_windows.empty() && c.attention_windows.size() != std::size_t(c.n_layer)) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
