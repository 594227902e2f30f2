// The keys and values of every position a model has seen, per layer, so that generating one more
// token costs one position of work instead of the whole sequence again.
#pragma once

#include <cstddef>
#include <vector>

namespace glassbox {

class KVCache {
 public:
  // Allocates 2 * n_layer * n_ctx * n_embd floats up front (GPT-2 small: 75 MB), so that
  // generation never allocates. Model::new_cache() sizes it for a model.
  KVCache(int n_layer, int n_ctx, int n_embd);

  int size() const { return size_; }       // positions filled
  int capacity() const { return n_ctx_; }  // the model's context length
  int n_embd() const { return n_embd_; }

  // (n_ctx, n_embd) matrices of one layer; row p holds position p, heads side by side.
  float* keys(int layer) { return k_.data() + offset(layer); }
  float* values(int layer) { return v_.data() + offset(layer); }

  // Marks n more positions as filled (the model writes them first) / forgets everything.
  void advance(int n) { size_ += n; }
  void clear() { size_ = 0; }

 private:
  std::size_t offset(int layer) const { return static_cast<std::size_t>(layer) * n_ctx_ * n_embd_; }
  int n_ctx_, n_embd_;
  int size_ = 0;
  std::vector<float> k_, v_;
};

}  // namespace glassbox
