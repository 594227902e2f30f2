// A Trainer's state (glassbox/trainer.h), shared by the files of the class: trainer.cpp (steps,
// evaluation, parameters) and checkpoint.cpp (the model's files, checkpoints).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "glassbox/trainer.h"
#include "training/backprop.h"
#include "training/parameters.h"
#include "training/products.h"

namespace glassbox {

struct Trainer::Impl {
  ModelConfig config;
  TrainingOptions options;
  training::ParameterLayout layout;
  std::vector<float> params, m, v;   // parameters and AdamW's moments, laid out as `layout`
  int step = 0;
  std::map<std::string, std::string> extra;
  // Per shard: activations, a gradient buffer and the products' buffers (training/products.h),
  // whichever thread runs the shard. mutable: evaluate() is logically const.
  mutable std::vector<training::Workspace<float>> workspaces;
  mutable std::vector<std::vector<float>> shard_grads;
  mutable std::vector<training::ProductBuffers> product_buffers;

  Impl(const ModelConfig& c, const TrainingOptions& o) : config(c), options(o), layout(c) {}

  // Throws InvalidArgument for a batch whose shape, ids, labels or label positions do not fit the model.
  void check_batch(const TrainingBatch& batch) const;
  // The weights of the batch's loss terms (per token, per sequence).
  training::LossWeights loss_weights(const TrainingBatch& batch) const;
  // The batch's summed losses, computed in shards; with_grads: its gradient into shard_grads[0].
  training::Losses run_shards(const TrainingBatch& batch, const training::LossWeights& weights, bool with_grads) const;
  // The parameter called `name`; throws InvalidArgument if there is none.
  const training::TensorSlot& slot(const std::string& name) const;
  // model.safetensors of the current parameters, in the given dtype (checkpoint.cpp).
  std::string weights_file(DType dtype) const;
};

}   // namespace glassbox
