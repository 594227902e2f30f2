// Non-finite results (NaN, infinity) are an error: a model whose weights hold NaN or overflow
// float32 would otherwise hand out NaN logits, a loss of NaN, or tokens sampled from garbage.
//
// The success path only scans what a call returns (the logits: R x V compares beside R x V x C
// multiply-adds). Where the first non-finite value came from is found on the failure path alone,
// by running the pass again with a hook (NonFiniteFinder) that looks at every named tensor.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "glassbox/error.h"
#include "glassbox/model.h"

namespace glassbox {

// Ids from `with_tokens` up to V (the padding of a vocabulary larger than its tokenizer's) get
// -inf in each of the R rows of `logits` (R,V); with_tokens <= 0 or >= V: none. Returns the first
// row with a value that is NaN or infinite among the other ids, if any.
std::optional<int> mask_and_check(float* logits, std::size_t R, int V, int with_tokens);

// The first non-finite value among the tensors a forward pass shows its hook, in the order it
// computes them. Rows are positions from pos0 (one sequence).
class NonFiniteFinder {
 public:
  NonFiniteFinder(int pos0, int V, int with_tokens) : pos0_(pos0), V_(V), with_tokens_(with_tokens) {}
  TensorHook hook();
  bool found() const { return found_; }
  // "layer 1's MLP output (mlp_out) at position 3", or `otherwise` when nothing was found.
  std::string where(const std::string& otherwise) const;

 private:
  void look(const NamedTensor& t);
  int pos0_, V_, with_tokens_;
  bool found_ = false;
  std::string name_;
  int layer_ = -1, position_ = 0;
};

// The error for a pass whose results are not finite, naming where they first appear.
ModelFormatError non_finite_error(const std::string& where);

}   // namespace glassbox
