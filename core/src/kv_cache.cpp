#include "glassbox/kv_cache.h"

namespace glassbox {

KVCache::KVCache(int n_layer, int n_ctx, int n_embd)
    : n_ctx_(n_ctx),
      n_embd_(n_embd),
      k_(static_cast<std::size_t>(n_layer) * n_ctx * n_embd),
      v_(k_.size()) {}

}  // namespace glassbox
