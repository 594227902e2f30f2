#include "model/non_finite.h"

#include <cmath>
#include <string_view>

#include "glassbox/error.h"

namespace glassbox {

std::optional<int> mask_and_check(float* logits, std::size_t R, int V, int with_tokens) {
  const int real = with_tokens > 0 && with_tokens < V ? with_tokens : V;
  std::optional<int> bad;
  for (std::size_t r = 0; r < R; ++r) {
    float* row = logits + r * std::size_t(V);
    bool finite = true;
    for (int v = 0; v < real; ++v) finite &= std::isfinite(row[v]);   // no branch in the loop
    if (!finite && !bad) bad = static_cast<int>(r);
    for (int v = real; v < V; ++v) row[v] = -INFINITY;
  }
  return bad;
}

TensorHook NonFiniteFinder::hook() {
  return [this](const NamedTensor& t) { look(t); };
}

void NonFiniteFinder::look(const NamedTensor& t) {
  if (found_) return;
  const std::string_view name = t.name;
  // (rows, width) for every tensor but the attention probabilities (H, T, S), whose rows are
  // queries; the logits' padding ids are not results.
  const bool probs = name == "attn_probs";
  const std::size_t rows = std::size_t(t.shape[0]) * (probs ? t.shape[1] : 1);
  const std::size_t width = std::size_t(probs ? t.shape[2] : t.shape[1]);
  const std::size_t checked = name == "logits" && with_tokens_ > 0 && with_tokens_ < V_ ? with_tokens_ : width;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t i = 0; i < checked; ++i)
      if (!std::isfinite(t.data[r * width + i])) {
        found_ = true;
        name_ = t.name;
        layer_ = t.layer;
        position_ = pos0_ + static_cast<int>(probs ? r % std::size_t(t.shape[1]) : r);
        return;
      }
}

std::string NonFiniteFinder::where(const std::string& otherwise) const {
  if (!found_) return otherwise;
  std::string what;
  const std::string layer = "layer " + std::to_string(layer_) + "'s ";
  if (name_ == "inp_embd")
    what = "the embeddings (wte + wpe)";
  else if (name_ == "attn_probs")
    what = layer + "attention probabilities";
  else if (name_ == "attn_z")
    what = layer + "attention-weighted values";
  else if (name_ == "attn_out")
    what = layer + "attention output";
  else if (name_ == "mlp_act")
    what = layer + "MLP neurons";
  else if (name_ == "mlp_out")
    what = layer + "MLP output";
  else if (name_ == "block_out")
    what = layer + "output (the residual stream)";
  else if (name_ == "logits")
    what = "the logits (the final norm and the LM head)";
  else
    what = layer + name_;
  return what + " (" + name_ + ") at position " + std::to_string(position_);
}

ModelFormatError non_finite_error(const std::string& where) {
  return ModelFormatError("the model's weights",
                          "the results are not finite: non-finite values (NaN or infinity) first appear in " + where +
                              " (weights that hold NaN or infinity, or values too large for float32)");
}

}   // namespace glassbox
