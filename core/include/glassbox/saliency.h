// Saliency (gradient x input), an interpretability experiment that needs a backward pass: part of
// the training library (glassbox::train), whose backward pass it runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "glassbox/model.h"

namespace glassbox {

// Saliency (gradient x input): for each position i, sum over d of
//   d log p(target | tokens) / d x_{i,d}  *  x_{i,d}
// with x the input of the first block (the embeddings as the model sums them) and p the next-token
// distribution at the last position. Needs a backward pass: gpt2 and openai-gpt models, F32 or
// int8 (the gradient runs on the weights as loaded, dequantized). Throws InvalidArgument naming
// the model type otherwise, for a target outside the vocabulary, and for what forward() refuses.
std::vector<float> saliency(const Model& model, std::span<const std::int32_t> tokens, std::int32_t target);

}   // namespace glassbox
