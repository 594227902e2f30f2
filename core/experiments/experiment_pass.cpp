#include "experiments/experiment_pass.h"

#include <string>
#include <string_view>

#include "glassbox/error.h"
#include "model/model_internals.h"

namespace glassbox::experiments {

void check_prompt(const Model& model, std::span<const std::int32_t> tokens, const char* which) {
  const ModelConfig& c = model.config();
  if (tokens.empty()) throw InvalidArgument(std::string(which) + " has no tokens");
  if (tokens.size() > std::size_t(model.context()))
    throw InvalidArgument(std::string(which) + " has " + std::to_string(tokens.size()) +
                          " tokens, more than the context of " + std::to_string(model.context()));
  for (const std::int32_t id : tokens)
    if (id < 0 || id >= c.vocab_size)
      throw InvalidArgument(std::string(which) + ": token id " + std::to_string(id) +
                            " is out of range: the vocabulary has ids 0.." + std::to_string(c.vocab_size - 1));
}

void check_id(const Model& model, std::int32_t id, const char* what) {
  const int V = model.config().vocab_size;
  if (id < 0 || id >= V)
    throw InvalidArgument(std::string(what) + " is token id " + std::to_string(id) +
                          ", outside the vocabulary (ids 0.." + std::to_string(V - 1) + ")");
}

void check_next_token_model(const Model& model, const char* experiment) {
  const ModelConfig& c = model.config();
  if (!c.labels.empty())
    throw InvalidArgument(std::string(experiment) +
                          " needs next-token logits; this model is a classifier (its head scores labels)");
  if (c.bidirectional)
    throw InvalidArgument(std::string(experiment) +
                          " needs next-token logits; this model is a masked LM (bidirectional attention)");
}

Metric::Metric(const Model& model, std::int32_t answer, std::optional<std::int32_t> wrong)
    : model_(model), u_(std::size_t(model.config().n_embd)), a_(model.config(), 1, 1) {
  const ModelWeights& w = ModelInternals::weights(model);
  matrix_row(w.lm_head, answer, u_.data());
  if (wrong) {
    std::vector<float> other(u_.size());
    matrix_row(w.lm_head, *wrong, other.data());
    for (std::size_t i = 0; i < u_.size(); ++i) u_[i] -= other[i];
  }
}

double Metric::operator()(const float* x) const {
  const float* h = final_norm(model_.config(), ModelInternals::weights(model_), x, 1, a_);
  double sum = 0;
  for (std::size_t i = 0; i < u_.size(); ++i) sum += double(h[i]) * u_[i];
  return sum;
}

Captured capture(const Model& model, std::span<const std::int32_t> tokens, KVCache& cache, CaptureWhat what) {
  const ModelConfig& c = model.config();
  const int L = c.n_layer;
  const std::size_t T = tokens.size(), C = std::size_t(c.n_embd), Dq = std::size_t(Activations::q_width(c));
  Captured out;
  if (what.resid_pre) out.resid_pre.resize(L * T * C);
  if (what.attn_out) out.attn_out.resize(L * T * C);
  if (what.mlp_out) out.mlp_out.resize(L * T * C);
  if (what.z) out.z.resize(L * T * Dq);
  out.final_stream.resize(T * C);
  const TensorHook hook = [&](const NamedTensor& t) {
    const std::string_view name = t.name;
    auto keep = [&](std::vector<float>& into, int layer, std::size_t width) {
      if (!into.empty()) std::copy_n(t.data, T * width, into.begin() + std::ptrdiff_t(layer * T * width));
    };
    if (name == "inp_embd")
      keep(out.resid_pre, 0, C);
    else if (name == "block_out" && t.layer + 1 < L)
      keep(out.resid_pre, t.layer + 1, C);
    else if (name == "block_out")
      std::copy_n(t.data, T * C, out.final_stream.begin());
    else if (name == "attn_out")
      keep(out.attn_out, t.layer, C);
    else if (name == "mlp_out")
      keep(out.mlp_out, t.layer, C);
    else if (name == "attn_z")
      keep(out.z, t.layer, Dq);
  };
  cache.clear();
  ForwardOptions o;
  o.hook = &hook;
  model.forward(tokens, cache, o);
  return out;
}

}   // namespace glassbox::experiments
