// The keys and values of every position a model has seen, per layer, so that generating one more
// token costs one position of work instead of the whole sequence again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace glassbox {

class KVCache {
 public:
  // A cache for up to n_ctx positions of a model with this shape (Model::new_cache() makes one).
  // Memory grows with the sequence (doubling, up to 2 * n_layer * n_ctx * n_embd floats: 75 MB
  // for GPT-2 small), so a short prompt on a long-context model costs little.
  KVCache(int n_layer, int n_ctx, int n_embd);

  // The most memory a cache of this shape holds at once, in bytes: a full context, and, while it
  // grows to that, the block it grows from (at most half a context): 1.5x a full cache.
  static std::uint64_t peak_bytes(int n_layer, int n_ctx, int n_embd);
  KVCache(KVCache&&) noexcept;
  KVCache& operator=(KVCache&&) noexcept;
  ~KVCache();

  int size() const { return size_; }        // positions filled
  int capacity() const { return n_ctx_; }   // the model's context length
  int n_layer() const { return n_layer_; }
  int n_embd() const { return n_embd_; }

  // (size, n_embd) matrices of one layer; row p holds position p, heads side by side.
  float* keys(int layer) { return matrix(2 * layer); }
  float* values(int layer) { return matrix(2 * layer + 1); }

  void clear() { size_ = 0; }   // forget every position (keeps the memory)

  // This cache holds the first `positions` positions of `other`, a cache of the same shape, and
  // nothing after them (what a pass that reruns the later positions starts from: activation
  // patching). Throws InvalidArgument for another shape or more positions than `other` holds.
  void assign_prefix(KVCache& other, int positions);

  // Room for this many positions now (at most capacity()). A forward pass that needs more grows
  // the cache: a new block twice the size, every filled position copied into it. Natively that
  // block is fresh huge pages, which the kernel may first have to compact memory for: one growth
  // can cost more than several decoded tokens. A caller who knows how long the sequence will get
  // (generation: the prompt plus max_tokens) reserves it once, before the prompt.
  void reserve(int positions);

 private:
  friend class Model;   // only the forward pass adds positions
  void advance(int n) { size_ += n; }
  float* matrix(int i);   // i = 2 * layer (+1 for values): (allocated_, n_embd)

  int n_layer_, n_ctx_, n_embd_;
  int size_ = 0;
  int allocated_ = 0;   // positions with memory behind them
  struct Storage;       // one block for every layer's keys and values (huge pages: arena.h)
  std::unique_ptr<Storage> storage_;
};

}   // namespace glassbox
