#include "glassbox/kv_cache.h"

#include <algorithm>

namespace glassbox {

KVCache::KVCache(int n_layer, int n_ctx, int n_embd) : n_ctx_(n_ctx), n_embd_(n_embd), k_(n_layer), v_(n_layer) {}

void KVCache::reserve(int positions) {
  if (positions <= allocated_) return;
  // Doubling keeps generation at O(log n) reallocations of the cache.
  allocated_ = std::min(n_ctx_, std::max({positions, 2 * allocated_, 16}));
  for (auto* layers : {&k_, &v_})
    for (auto& m : *layers) m.resize(static_cast<std::size_t>(allocated_) * n_embd_);
}

}  // namespace glassbox
