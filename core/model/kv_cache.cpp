#include "glassbox/kv_cache.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "glassbox/error.h"
#include "model/arena.h"
#include "model/thread_pool.h"

namespace glassbox {

// The 2 * n_layer matrices (allocated_, n_embd) one after another: keys of layer 0, values of
// layer 0, keys of layer 1, ... One block rather than 24 vectors: at 128 positions GPT-2 small's
// cache is 9.4 MB, which on huge pages is first touched with 5 page faults instead of 2,300.
struct KVCache::Storage {
  LargeBlock block;
};

KVCache::KVCache(int n_layer, int n_ctx, int n_embd)
    : n_layer_(n_layer), n_ctx_(n_ctx), n_embd_(n_embd), storage_(std::make_unique<Storage>()) {}
KVCache::KVCache(KVCache&&) noexcept = default;
KVCache& KVCache::operator=(KVCache&&) noexcept = default;
KVCache::~KVCache() = default;

float* KVCache::matrix(int i) {
  return reinterpret_cast<float*>(storage_->block.data()) + std::size_t(i) * allocated_ * n_embd_;
}

std::uint64_t KVCache::peak_bytes(int n_layer, int n_ctx, int n_embd) {
  const std::uint64_t row = sizeof(float) * std::uint64_t(n_embd) * 2 * n_layer;   // one position's keys and values
  return row * (std::uint64_t(n_ctx) + std::uint64_t(n_ctx) / 2);
}

void KVCache::reserve(int positions) {
  if (positions > n_ctx_)
    throw InvalidArgument("cannot reserve " + std::to_string(positions) + " positions in a KV cache for a context of " +
                          std::to_string(n_ctx_));
  if (positions <= allocated_) return;
  // Doubling keeps generation at O(log n) reallocations of the cache. Past half the context the
  // block is the whole context: the old block beside the new one is then at most half a context
  // (peak_bytes), where growing from just under the context to it would have held two.
  int grown = std::min(n_ctx_, std::max({positions, 2 * allocated_, 16}));
  if (2 * std::int64_t(grown) > n_ctx_) grown = n_ctx_;
  const std::size_t row = sizeof(float) * std::size_t(n_embd_);
  LargeBlock block(std::size_t(2) * n_layer_ * grown * row);
  // Each thread zeroes its share of the new huge pages (by first touching them), where the
  // prompt's first layer would have had the calling thread zero them all.
  if (block.on_huge_pages()) {
    const int pages = int((block.size() + LargeBlock::kHugePageBytes - 1) / LargeBlock::kHugePageBytes);
    parallel_for(pages, 1, double(block.size()), [&](int p0, int p1) {
      for (int p = p0; p < p1; ++p) block.data()[std::size_t(p) * LargeBlock::kHugePageBytes] = std::byte{0};
    });
  }
  if (size_ > 0)   // the filled positions move; the rest stay unwritten
    for (int i = 0; i < 2 * n_layer_; ++i)
      std::memcpy(block.data() + std::size_t(i) * grown * row, matrix(i), size_ * row);
  storage_->block = std::move(block);
  allocated_ = grown;
}

void KVCache::assign_prefix(KVCache& other, int positions) {
  if (other.n_layer_ != n_layer_ || other.n_ctx_ != n_ctx_ || other.n_embd_ != n_embd_)
    throw InvalidArgument("assign_prefix: the KV caches have different shapes");
  if (positions < 0 || positions > other.size_)
    throw InvalidArgument("assign_prefix: the cache holds " + std::to_string(other.size_) + " positions, not " +
                          std::to_string(positions));
  reserve(positions);
  const std::size_t row = sizeof(float) * std::size_t(n_embd_);
  if (positions > 0)
    for (int i = 0; i < 2 * n_layer_; ++i) std::memcpy(matrix(i), other.matrix(i), positions * row);
  size_ = positions;
}

}   // namespace glassbox
