// What the library's own code beyond the forward pass (the interpretability experiments) reads of
// a Model: its weights in the kernels' layouts and its rotary frequencies.
#pragma once

#include <span>

#include "glassbox/model.h"
#include "model/weights.h"

namespace glassbox {

struct ModelInternals {
  static const ModelWeights& weights(const Model& m);
  static std::span<const float> inv_freq(const Model& m);   // (rotary_dim / 2), empty without rotary positions
};

}   // namespace glassbox
