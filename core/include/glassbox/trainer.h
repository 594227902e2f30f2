// Training a GPT-2-family model from scratch: backward pass, AdamW, checkpoints.
//
//   Trainer trainer(config, options);            // GPT-2's initialisation, seeded
//   for (int s = trainer.step(); s < options.steps; ++s) {
//     sample_batch(train_tokens, B, T, options.seed, s, inputs, targets);   // training_batch.h
//     StepResult r = trainer.train_step(inputs, targets, B, T);   // loss, grad norm, lr
//   }
//   trainer.save_model("out/");                  // config.json + model.safetensors (HF layout)
//
// One step: forward and backward on B sequences of T tokens (the batch is split into
// options.threads shards computed in parallel, their gradients summed in a fixed order), clipping
// of the global gradient norm, the learning rate of the step from the schedule (linear warmup,
// then cosine decay to min_learning_rate), and an AdamW update with weight decay on the matrices.
// The loss is the mean cross-entropy of predicting each next token, in nats. The other tasks
// train with the same step: a masked LM (config.bidirectional) predicts only the masked
// positions (the others' targets are kIgnoreTarget, see mask_tokens), and a classifier
// (config.labels) adds the cross-entropy of each sequence's label to lm_weight times the LM loss,
// as GPT-1's fine-tuning did (L = L_label + lambda L_lm).
//
// Everything is deterministic for the same options (threads included) and the same build (with
// Eigen's products, GLASSBOX_TRAINING_KERNELS=OFF, also the same CPU): a run that is stopped, saved with
// save_checkpoint and continued with from_checkpoint computes exactly the same parameters as one
// that never stopped. By default the products run on the engine's kernels, and the native build
// and the WebAssembly module compute the same bits; a build with GLASSBOX_TRAINING_KERNELS=OFF
// (the native-fast preset) uses Eigen's, faster with -march=native but with bits of its own.
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/model.h"
#include "glassbox/safetensors.h"
#include "glassbox/training_batch.h"

namespace glassbox {

struct TrainingOptions {
  int batch_size = 16;               // sequences per step
  int seq_len = 128;                 // tokens per sequence, at most the model's n_positions
  int steps = 2000;                  // optimisation steps in all (the schedule's length)
  double learning_rate = 1e-3;       // peak, reached at the end of the warmup
  double min_learning_rate = 1e-4;   // where the cosine decay ends
  int warmup_steps = 100;
  double weight_decay = 0.1;   // decoupled (AdamW), on 2-D tensors only
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;   // max global L2 norm of the gradient; 0 turns clipping off
  double dropout = 0.0;     // on the embeddings and each residual branch (GPT-2's embd_pdrop,
                            // resid_pdrop) while training; never when evaluating
  std::uint64_t seed = 1;   // initialisation and batch sampling
  int threads = 2;          // the batch is computed as this many shards, in parallel (one
                            // after another in WebAssembly)
  double lm_weight = 0.5;   // classifiers: the LM loss's weight beside the label loss (GPT-1's lambda)

  // Throws InvalidArgument naming the first bad setting (NaN, negative, zero where not allowed,
  // seq_len above the context, ...).
  void validate(const ModelConfig& config) const;
  std::string to_json() const;
  // Reads what to_json wrote; throws InvalidArgument for a malformed text.
  static TrainingOptions from_json(const std::string& text);
};

// The learning rate of step s (0-based): peak * (s+1) / warmup during the warmup, then
// min + (peak - min) * (1 + cos(pi * progress)) / 2 with progress = (s - warmup) / (steps - warmup).
double learning_rate_at(const TrainingOptions& options, int step);

struct StepResult {
  double loss;            // the batch's loss before the update: mean cross-entropy per token (nats),
                          // a classifier's label loss + lm_weight * that
  double grad_norm;       // global L2 norm of the gradient before clipping
  double learning_rate;   // used for this step
};

struct EvalResult {
  double loss_sum = 0;               // nats, summed over the predicted tokens
  std::int64_t tokens = 0;           // tokens predicted
  double label_loss_sum = 0;         // classifiers: nats, summed over the sequences
  std::int64_t labels = 0;           // sequences classified
  std::int64_t labels_correct = 0;   // ... whose largest logit was their label
  double loss() const { return tokens ? loss_sum / double(tokens) : NAN; }   // NaN: nothing predicted
  double label_loss() const { return labels ? label_loss_sum / double(labels) : NAN; }
  double accuracy() const { return labels ? double(labels_correct) / double(labels) : NAN; }
  EvalResult& operator+=(const EvalResult& r);
};

// Not thread-safe: one Trainer is used from one thread at a time (it runs its own threads inside
// a step, and evaluate() reuses the same workspaces).
class Trainer {
 public:
  // A new model with GPT-2's initialisation drawn from options.seed. Throws InvalidArgument.
  Trainer(const ModelConfig& config, const TrainingOptions& options);
  // Continues a run saved by save_checkpoint. Throws ModelFormatError for a damaged file.
  static Trainer from_checkpoint(const std::filesystem::path& file);

  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;
  ~Trainer();

  const ModelConfig& config() const;
  const TrainingOptions& options() const;
  int step() const;   // updates done so far

  // One optimisation step on inputs and targets, each (B,T) row-major ids in [0, vocab_size).
  // Throws InvalidArgument for bad shapes or ids (nothing is changed then).
  StepResult train_step(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T);
  // The same for any batch: targets may be kIgnoreTarget; labels are required for a classifier
  // (and refused otherwise).
  StepResult train_step(const TrainingBatch& batch);

  // Cross-entropy of a batch under the current parameters, without any update.
  EvalResult evaluate(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T) const;
  EvalResult evaluate(const TrainingBatch& batch) const;
  // Every token of a stream after the first predicted once: windows of T+1 tokens, T apart,
  // B windows per forward pass; at most max_tokens predictions (0: all).
  EvalResult evaluate_stream(std::span<const std::int32_t> stream, int T, int B, std::int64_t max_tokens = 0) const;

  // The gradient of the mean loss of a batch at the current parameters, with the dropout masks
  // the next train_step would use, without clipping or update, by tensor name (tests and tools).
  std::map<std::string, std::vector<float>> gradients(std::span<const std::int32_t> inputs,
                                                      std::span<const std::int32_t> targets, int B, int T) const;
  std::map<std::string, std::vector<float>> gradients(const TrainingBatch& batch) const;

  // Parameters by Hugging Face name ("h.0.attn.c_attn.weight", Conv1D layout (in, out)).
  std::vector<std::string> parameter_names() const;
  std::span<const float> parameter(const std::string& name) const;   // throws InvalidArgument if unknown
  void set_parameter(const std::string& name, std::span<const float> values);
  std::size_t parameter_count() const;

  // The most memory a run of this shape and these options holds at once, in bytes, from the
  // shapes alone (nothing is allocated): the parameters with AdamW's two moments and each shard's
  // gradient, each shard's activations for the backward pass (attention's T x T probabilities
  // and the N x V logits the largest), the products' packed operands, and the inference model
  // to_model() makes of the parameters. For refusing a run that cannot fit before it starts.
  static std::uint64_t memory_bytes(const ModelConfig& config, const TrainingOptions& options);

  // config.json and model.safetensors (F32, F16 or BF16) into dir, each written atomically. A
  // classifier's tensors are named as Hugging Face's GPT2ForSequenceClassification saves them:
  // "transformer." before the transformer's, and score.weight.
  void save_model(const std::filesystem::path& dir, DType dtype = DType::F32) const;
  // The bytes save_model writes to model.safetensors (for a caller without files: the JS API).
  std::string model_file(DType dtype = DType::F32) const;
  // An inference model with the current parameters (F32), e.g. to sample from during training.
  Model to_model() const;

  // Everything needed to continue: parameters, AdamW moments, step, options, config, and
  // `extra` strings of the caller's (e.g. which data it trains on). Written atomically.
  void save_checkpoint(const std::filesystem::path& file, const std::map<std::string, std::string>& extra = {}) const;
  // The `extra` strings of the checkpoint this trainer was loaded from (empty for a new one).
  const std::map<std::string, std::string>& checkpoint_extra() const;

 private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}   // namespace glassbox
