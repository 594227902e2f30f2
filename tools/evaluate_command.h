// `glassbox evaluate`: how well a model predicts some text, in nats per token and bits per byte.
#pragma once

#include <string>
#include <vector>

#include "glassbox/model.h"

namespace glassbox {

// Every token of the text after the first is predicted once, in windows of the model's context
// (load.context: --context) that start afresh; prints one JSON object on stdout.
int run_evaluate(const std::string& model_dir, const LoadOptions& load, const std::vector<std::string>& files);

}   // namespace glassbox
