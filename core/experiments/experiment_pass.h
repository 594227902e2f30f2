// What the experiments share: checking their arguments, the metric (a logit difference read off
// the final residual stream) and a forward pass that keeps the tensors an experiment reads.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "glassbox/model.h"
#include "model/blocks.h"

namespace glassbox::experiments {

// Throws InvalidArgument unless the prompt can run from position 0: tokens, within the context,
// ids in the vocabulary. `which` names it in the message ("the clean prompt").
void check_prompt(const Model& model, std::span<const std::int32_t> tokens, const char* which);
// Throws InvalidArgument unless `id` is in the vocabulary; `what` names it ("the answer").
void check_id(const Model& model, std::int32_t id, const char* what);
// Throws InvalidArgument for a model without next-token logits to take a metric from: a
// classifier or a masked LM. `experiment` names what was asked ("patching").
void check_next_token_model(const Model& model, const char* experiment);

// The metric of a final residual stream row: the final norm, then the dot product with u, the
// unembedding of answer minus that of wrong (the LM head's rows; or of answer alone).
class Metric {
 public:
  Metric(const Model& model, std::int32_t answer, std::optional<std::int32_t> wrong);
  const std::vector<float>& direction() const { return u_; }   // u (C)
  double operator()(const float* x) const;                     // x (C), before the final norm

 private:
  const Model& model_;
  std::vector<float> u_;
  mutable Activations a_;   // one row: the final norm's output
};

// One pass of a prompt from position 0, into `cache` (a new cache of the model's, kept for the
// caller), with the tensors of every layer kept, each (L, T, width): resid_pre (the stream
// entering each block; then `final_stream` (T,C) the stream leaving the last), attn_out, mlp_out,
// z (attn_z, (L,T,Dq)). Which ones: those whose flag is set.
struct Captured {
  std::vector<float> resid_pre, attn_out, mlp_out, z, final_stream;
};
struct CaptureWhat {
  bool resid_pre = false, attn_out = false, mlp_out = false, z = false;
};
Captured capture(const Model& model, std::span<const std::int32_t> tokens, KVCache& cache, CaptureWhat what);

}   // namespace glassbox::experiments
