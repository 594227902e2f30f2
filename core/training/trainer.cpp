// Trainer (glassbox/trainer.h): a step (the batch in shards on threads, clipping, AdamW),
// evaluation, gradients and parameters by name. Its options are in training_options.cpp, its
// batches in batches.cpp, what it saves in checkpoint.cpp.
#include "glassbox/trainer.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <thread>

#include "glassbox/error.h"
#include "glassbox/random.h"
#include "model/thread_pool.h"
#include "training/optimizer.h"
#include "training/trainer_impl.h"

namespace glassbox {

EvalResult& EvalResult::operator+=(const EvalResult& r) {
  loss_sum += r.loss_sum;
  tokens += r.tokens;
  label_loss_sum += r.label_loss_sum;
  labels += r.labels;
  labels_correct += r.labels_correct;
  return *this;
}

void Trainer::Impl::check_batch(const TrainingBatch& batch) const {
  const auto [inputs, targets, B, T, labels, positions] = batch;
  if (B < 1 || T < 1) throw InvalidArgument("a batch needs B >= 1 sequences of T >= 1 tokens");
  if (T > config.n_positions)
    throw InvalidArgument("sequences of " + std::to_string(T) + " tokens do not fit in the context of " +
                          std::to_string(config.n_positions));
  const std::size_t n = std::size_t(B) * T;
  if (inputs.size() != n || targets.size() != n)
    throw InvalidArgument("a batch of " + std::to_string(B) + " x " + std::to_string(T) + " needs " +
                          std::to_string(n) + " inputs and targets");
  auto check_id = [&](std::int32_t id) {
    if (id < 0 || id >= config.vocab_size)
      throw InvalidArgument("token id " + std::to_string(id) + " is out of range: the vocabulary has ids 0.." +
                            std::to_string(config.vocab_size - 1));
  };
  for (std::int32_t id : inputs) check_id(id);
  for (std::int32_t id : targets)
    if (id != kIgnoreTarget) check_id(id);
  const int K = static_cast<int>(config.labels.size());
  if (K == 0 && !labels.empty()) throw InvalidArgument("labels given for a model without a classification head");
  if (K > 0 && (labels.size() != std::size_t(B) || positions.size() != std::size_t(B)))
    throw InvalidArgument("a classifier's batch needs a label and a label position for each of its " +
                          std::to_string(B) + " sequences");
  for (std::size_t b = 0; b < labels.size(); ++b) {
    if (labels[b] < 0 || labels[b] >= K)
      throw InvalidArgument("label " + std::to_string(labels[b]) + " is out of range: the model has labels 0.." +
                            std::to_string(K - 1));
    if (positions[b] < 0 || positions[b] >= T)
      throw InvalidArgument("label position " + std::to_string(positions[b]) + " is outside the sequence of " +
                            std::to_string(T) + " tokens");
  }
}

// What a batch's loss is made of: the per-token mean of the LM (or masked-LM) loss, plus for a
// classifier the per-sequence mean of the label loss, the LM part weighed by lm_weight.
training::LossWeights Trainer::Impl::loss_weights(const TrainingBatch& batch) const {
  std::int64_t predicted = 0;
  for (std::int32_t t : batch.targets) predicted += t != kIgnoreTarget;
  const bool classifier = !config.labels.empty();
  training::LossWeights w;
  w.lm = predicted ? (classifier ? options.lm_weight : 1.0) / double(predicted) : 0.0;
  w.label = classifier ? 1.0 / batch.B : 0.0;
  return w;
}

// Runs the batch as min(threads, B) shards of consecutive sequences, in parallel (in turn in
// WebAssembly: the same arithmetic, the same bits); shard s
// adds the gradient of the loss `weights` defines into shard_grads[0] (summed in shard order)
// when `with_grads`. Returns the summed losses.
training::Losses Trainer::Impl::run_shards(const TrainingBatch& batch, const training::LossWeights& weights,
                                           bool with_grads) const {
  const int B = batch.B, T = batch.T;
  // training (with_grads) drops out with masks of this step's own; evaluation never does
  training::Dropout dropout;
  if (with_grads) {
    dropout.p = options.dropout;
    dropout.seed = Rng(options.seed ^ (0xA0761D6478BD642Full * std::uint64_t(step + 1))).next();
  }
  const int S = std::min(options.threads, B);
  if (int(workspaces.size()) < S) workspaces.resize(S);
  if (int(product_buffers.size()) < S) product_buffers.resize(S);
  if (with_grads && int(shard_grads.size()) < S) shard_grads.resize(S);
  std::vector<training::Losses> losses(S);
  std::vector<std::exception_ptr> errors(S);
  auto run = [&](int s) {
    try {
      const training::UseProductBuffers use(product_buffers[s]);
      const int b0 = B * s / S, b1 = B * (s + 1) / S;
      float* g = nullptr;
      if (with_grads) {
        shard_grads[s].assign(layout.size(), 0.0f);
        g = shard_grads[s].data();
      }
      const std::size_t off = std::size_t(b0) * T;
      training::Dropout shard_dropout = dropout;
      shard_dropout.first_sequence = b0;
      const bool labelled = !batch.labels.empty();
      const training::Batch shard{batch.inputs.data() + off,
                                  batch.targets.data() + off,
                                  b1 - b0,
                                  T,
                                  labelled ? batch.labels.data() + b0 : nullptr,
                                  labelled ? batch.label_positions.data() + b0 : nullptr};
      losses[s] =
          training::loss_and_gradients(config, layout, params.data(), g, shard, weights, workspaces[s], shard_dropout);
    } catch (...) {
      errors[s] = std::current_exception();
    }
  };
#ifdef __EMSCRIPTEN__
  // On the engine's pool: a new thread would need a Web Worker, which a browser starts only once
  // the calling thread returns to its event loop, while the threaded module's pool has its
  // workers from the start. The shards are the pool's chunks (one each with as many threads as
  // shards); the single-threaded module's pool is this thread, which runs them in turn. However
  // they are shared out, each shard's arithmetic and the order of the sums below stay the same.
  forward_pool()->run(S, 1, [&](int begin, int end) {
    for (int s = begin; s < end; ++s) run(s);
  });
#else
  std::vector<std::thread> threads;
  for (int s = 1; s < S; ++s) threads.emplace_back(run, s);
  run(0);
  for (auto& t : threads) t.join();
#endif
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  training::Losses loss;
  for (const auto& l : losses) {   // in shard order: the same sums on every run
    loss.lm_sum += l.lm_sum;
    loss.lm_count += l.lm_count;
    loss.label_sum += l.label_sum;
    loss.label_correct += l.label_correct;
  }
  if (with_grads)
    for (int s = 1; s < S; ++s)
      for (std::size_t i = 0; i < layout.size(); ++i) shard_grads[0][i] += shard_grads[s][i];
  return loss;
}

const training::TensorSlot& Trainer::Impl::slot(const std::string& name) const {
  const auto* s = layout.find(name);
  if (!s) throw InvalidArgument("the model has no parameter '" + name + "'");
  return *s;
}

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;
Trainer::~Trainer() = default;

Trainer::Trainer(const ModelConfig& config, const TrainingOptions& options) {
  options.validate(config);
  if (config.bidirectional && !config.labels.empty())   // its batches' padding would be seen
    throw InvalidArgument("a classifier is trained causal: a bidirectional one would see the padding of its batches");
  impl_ = std::make_unique<Impl>(config, options);
  impl_->params = training::initial_parameters(impl_->layout, config.n_layer, options.seed);
  impl_->m.assign(impl_->params.size(), 0.0f);
  impl_->v.assign(impl_->params.size(), 0.0f);
}

const ModelConfig& Trainer::config() const { return impl_->config; }
const TrainingOptions& Trainer::options() const { return impl_->options; }
int Trainer::step() const { return impl_->step; }
std::size_t Trainer::parameter_count() const { return impl_->layout.size(); }

std::uint64_t Trainer::memory_bytes(const ModelConfig& c, const TrainingOptions& o) {
  using u64 = std::uint64_t;
  const u64 P = training::ParameterLayout(c).size();
  const u64 S = u64(std::max(1, std::min(o.threads, o.batch_size)));
  const u64 b = (u64(o.batch_size) + S - 1) / S, T = u64(o.seq_len), N = b * T;   // the largest shard's rows
  const u64 C = u64(c.n_embd), F = u64(c.n_inner), H = u64(c.n_head), L = u64(c.n_layer), V = u64(c.vocab_size);
  const u64 drop = o.dropout > 0 ? 1 : 0;
  // training/backprop.h's Workspace, buffer by buffer
  const u64 per_block = N * C * (6 + 3 + 2 * drop) + 4 * N + b * H * T * T + 2 * N * F;
  const u64 workspace = L * per_block + N * C * (5 + 2 * drop + 3) + 2 * N + N * V + N * F + T * T;
  // each shard's ProductBuffers (training/products.h): the largest packed operand (the tied
  // head's V x C, or a layer's F x C, or x^T's N x max), a block of 64 rows and its output
  const u64 packed = std::max({V * C, F * C, N * std::max({V, F, 3 * C})});
  const u64 products = packed + 64 * std::max({V, F, 3 * C, N}) * 2;
  const u64 floats = P * 3 + S * P + S * (workspace + products) + 2 * P;   // 2 P: to_model()'s file and packed copy
  return sizeof(float) * floats;
}
const std::map<std::string, std::string>& Trainer::checkpoint_extra() const { return impl_->extra; }

StepResult Trainer::train_step(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B,
                               int T) {
  return train_step(TrainingBatch{inputs, targets, B, T, {}, {}});
}

StepResult Trainer::train_step(const TrainingBatch& batch) {
  Impl& t = *impl_;
  t.check_batch(batch);
  StepResult r;
  const training::LossWeights w = t.loss_weights(batch);
  if (w.lm == 0 && w.label == 0) throw InvalidArgument("the batch predicts nothing: every target is kIgnoreTarget");
  const training::Losses l = t.run_shards(batch, w, true);
  r.loss = w.lm * l.lm_sum + w.label * l.label_sum;   // the loss whose gradient the step follows
  float* grads = t.shard_grads[0].data();
  for (const auto& slot : t.layout.slots())   // fixed tensors take no part in the gradient's norm
    if (!slot.trainable) std::fill(grads + slot.offset, grads + slot.offset + slot.size, 0.0f);
  r.grad_norm = training::clip_gradients(grads, t.layout.size(), t.options.grad_clip);
  r.learning_rate = learning_rate_at(t.options, t.step);
  const TrainingOptions& o = t.options;
  training::adamw_update(t.layout, t.params.data(), grads, t.m.data(), t.v.data(), t.step + 1,
                         {r.learning_rate, o.beta1, o.beta2, o.eps, o.weight_decay});
  ++t.step;
  return r;
}

EvalResult Trainer::evaluate(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B,
                             int T) const {
  return evaluate(TrainingBatch{inputs, targets, B, T, {}, {}});
}

EvalResult Trainer::evaluate(const TrainingBatch& batch) const {
  impl_->check_batch(batch);
  const training::Losses l = impl_->run_shards(batch, impl_->loss_weights(batch), false);
  return {l.lm_sum, l.lm_count, l.label_sum, std::int64_t(batch.labels.size()), l.label_correct};
}

EvalResult Trainer::evaluate_stream(std::span<const std::int32_t> stream, int T, int B, std::int64_t max_tokens) const {
  if (T < 1 || T > impl_->config.n_positions || B < 1)
    throw InvalidArgument("evaluate_stream: bad window or batch size");
  EvalResult total;
  std::int64_t predictable = stream.empty() ? 0 : std::int64_t(stream.size()) - 1;
  if (max_tokens > 0) predictable = std::min(predictable, max_tokens);
  std::vector<std::int32_t> inputs, targets;
  std::int64_t start = 0;
  while (start < predictable) {
    // B full windows if there is room, else one window of what is left
    const std::int64_t left = predictable - start;
    const int len = int(std::min<std::int64_t>(T, left));
    const int b = len == T ? int(std::min<std::int64_t>(B, left / T)) : 1;
    inputs.clear();
    targets.clear();
    for (int i = 0; i < b; ++i) {
      const auto first = stream.begin() + start + std::int64_t(i) * len;
      inputs.insert(inputs.end(), first, first + len);
      targets.insert(targets.end(), first + 1, first + 1 + len);
    }
    total += evaluate(inputs, targets, b, len);
    start += std::int64_t(b) * len;
  }
  return total;
}

std::map<std::string, std::vector<float>> Trainer::gradients(std::span<const std::int32_t> inputs,
                                                             std::span<const std::int32_t> targets, int B,
                                                             int T) const {
  return gradients(TrainingBatch{inputs, targets, B, T, {}, {}});
}

std::map<std::string, std::vector<float>> Trainer::gradients(const TrainingBatch& batch) const {
  impl_->check_batch(batch);
  impl_->run_shards(batch, impl_->loss_weights(batch), true);
  std::map<std::string, std::vector<float>> out;
  for (const auto& s : impl_->layout.slots()) {
    const float* g = impl_->shard_grads[0].data() + s.offset;
    out[s.name].assign(g, g + s.size);
  }
  return out;
}

std::vector<std::string> Trainer::parameter_names() const {
  std::vector<std::string> names;
  for (const auto& s : impl_->layout.slots()) names.push_back(s.name);
  return names;
}

std::span<const float> Trainer::parameter(const std::string& name) const {
  const auto& s = impl_->slot(name);
  return {impl_->params.data() + s.offset, s.size};
}

void Trainer::set_parameter(const std::string& name, std::span<const float> values) {
  const auto& s = impl_->slot(name);
  if (values.size() != s.size)
    throw InvalidArgument("parameter '" + name + "' has " + std::to_string(s.size) + " values, got " +
                          std::to_string(values.size()));
  std::copy(values.begin(), values.end(), impl_->params.begin() + s.offset);
}

}   // namespace glassbox
