// Steering by activation addition (glassbox/experiments.h): the difference of two prompts'
// residual streams entering one block, which generation then adds at every position
// (ForwardOptions::steer).
#include <cmath>
#include <string>

#include "experiments/experiment_pass.h"
#include "glassbox/error.h"
#include "glassbox/experiments.h"

namespace glassbox {

std::vector<float> steering_vector(const Model& model, int layer, float coefficient, std::span<const std::int32_t> plus,
                                   std::span<const std::int32_t> minus) {
  const ModelConfig& c = model.config();
  if (layer < 0 || layer >= c.n_layer)
    throw InvalidArgument("steering: there is no layer " + std::to_string(layer) + ": the model has layers 0.." +
                          std::to_string(c.n_layer - 1));
  if (!std::isfinite(coefficient)) throw InvalidArgument("steering: the coefficient is not a finite number");
  experiments::check_prompt(model, plus, "steering's first prompt");
  experiments::check_prompt(model, minus, "steering's second prompt");
  const std::size_t C = std::size_t(c.n_embd);
  // resid_pre_l (T,C) of each prompt; its last row
  auto last_row = [&](std::span<const std::int32_t> tokens) {
    KVCache cache = model.new_cache();
    const auto run = experiments::capture(model, tokens, cache, {.resid_pre = true});
    const auto row =
        run.resid_pre.begin() + std::ptrdiff_t((std::size_t(layer) * tokens.size() + tokens.size() - 1) * C);
    return std::vector<float>(row, row + std::ptrdiff_t(C));
  };
  std::vector<float> v = last_row(plus);
  const std::vector<float> b = last_row(minus);
  for (std::size_t i = 0; i < C; ++i) v[i] = coefficient * (v[i] - b[i]);
  return v;
}

}   // namespace glassbox
