// The MLP's neurons (glassbox/experiments.h): its hidden layer after the nonlinearity, read from
// one forward pass's "mlp_act" tensors.
#include <algorithm>
#include <numeric>
#include <string>
#include <string_view>

#include "experiments/experiment_pass.h"
#include "glassbox/error.h"
#include "glassbox/experiments.h"

namespace glassbox {

namespace {

// Runs the prompt and calls on_layer(layer, activations (T,F)) for every block.
template <class OnLayer>
void each_layer(const Model& model, std::span<const std::int32_t> tokens, const OnLayer& on_layer) {
  const TensorHook hook = [&](const NamedTensor& t) {
    if (std::string_view(t.name) == "mlp_act") on_layer(t.layer, t.data);
  };
  KVCache cache = model.new_cache();
  ForwardOptions o;
  o.hook = &hook;
  model.forward(tokens, cache, o);
}

}   // namespace

std::vector<NeuronValue> top_neurons(const Model& model, std::span<const std::int32_t> tokens, int k) {
  const ModelConfig& c = model.config();
  const int F = c.n_inner, T = static_cast<int>(tokens.size());
  if (k < 1 || k > F)
    throw InvalidArgument("the top neurons are 1 to " + std::to_string(F) + " per layer (the MLP's width), not " +
                          std::to_string(k));
  experiments::check_prompt(model, tokens, "the prompt");
  std::vector<NeuronValue> out(std::size_t(c.n_layer) * T * k);
  std::vector<int> order(F);
  each_layer(model, tokens, [&](int layer, const float* act) {
    for (int t = 0; t < T; ++t) {
      const float* row = act + std::size_t(t) * F;
      std::iota(order.begin(), order.end(), 0);
      // largest first, the lower index first among equals
      std::partial_sort(order.begin(), order.begin() + k, order.end(),
                        [&](int a, int b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
      for (int i = 0; i < k; ++i) out[(std::size_t(layer) * T + t) * k + i] = {order[i], row[order[i]]};
    }
  });
  return out;
}

std::vector<float> neuron_activations(const Model& model, std::span<const std::int32_t> tokens, int layer, int neuron) {
  const ModelConfig& c = model.config();
  if (layer < 0 || layer >= c.n_layer)
    throw InvalidArgument("there is no layer " + std::to_string(layer) + ": the model has layers 0.." +
                          std::to_string(c.n_layer - 1));
  if (neuron < 0 || neuron >= c.n_inner)
    throw InvalidArgument("there is no neuron " + std::to_string(neuron) + ": the MLP has neurons 0.." +
                          std::to_string(c.n_inner - 1));
  experiments::check_prompt(model, tokens, "the prompt");
  const int F = c.n_inner;
  std::vector<float> out(tokens.size());
  each_layer(model, tokens, [&](int l, const float* act) {
    if (l == layer)
      for (std::size_t t = 0; t < out.size(); ++t) out[t] = act[t * F + neuron];
  });
  return out;
}

}   // namespace glassbox
