#include "glassbox/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "glassbox/atomic_file.h"
#include "glassbox/random.h"
#include "training/backprop.h"
#include "io/dtype.h"
#include "glassbox/error.h"
#include "model/thread_pool.h"
#include "training/optimizer.h"
#include "training/parameters.h"
#include "training/portable_math.h"
#include "training/products.h"

namespace glassbox {

using training::ParameterLayout;
using training::Workspace;

// ---------------------------------------------------------------------------------------------
// Options

void TrainingOptions::validate(const ModelConfig& c) const {
  auto fail = [](const std::string& what) { throw InvalidArgument("training option " + what); };
  auto finite = [](double x) { return std::isfinite(x); };
  if (batch_size < 1) fail("batch size must be at least 1, got " + std::to_string(batch_size));
  if (seq_len < 1 || seq_len > c.n_positions)
    fail("sequence length must be 1.." + std::to_string(c.n_positions) + " (the context), got " + std::to_string(seq_len));
  if (steps < 1) fail("steps must be at least 1, got " + std::to_string(steps));
  if (!finite(learning_rate) || learning_rate <= 0) fail("learning rate must be a positive number");
  if (!finite(min_learning_rate) || min_learning_rate < 0 || min_learning_rate > learning_rate)
    fail("minimum learning rate must be from 0 to the learning rate");
  if (warmup_steps < 0) fail("warmup steps must not be negative");
  if (!finite(weight_decay) || weight_decay < 0) fail("weight decay must be a number >= 0");
  if (!finite(beta1) || beta1 < 0 || beta1 >= 1) fail("beta1 must be in [0, 1)");
  if (!finite(beta2) || beta2 < 0 || beta2 >= 1) fail("beta2 must be in [0, 1)");
  if (!finite(eps) || eps <= 0) fail("eps must be a positive number");
  if (!finite(grad_clip) || grad_clip < 0) fail("gradient clip must be a number >= 0 (0: off)");
  if (!finite(dropout) || dropout < 0 || dropout >= 1) fail("dropout must be in [0, 1)");
  if (threads < 1 || threads > 256) fail("threads must be 1..256, got " + std::to_string(threads));
  if (!finite(lm_weight) || lm_weight < 0) fail("LM loss weight must be a number >= 0");
  if (double(batch_size) * seq_len > (1 << 24)) fail("batch size x sequence length must be at most 16M tokens");
}

std::string TrainingOptions::to_json() const {
  nlohmann::json j = {{"batch_size", batch_size}, {"seq_len", seq_len}, {"steps", steps},
                      {"learning_rate", learning_rate}, {"min_learning_rate", min_learning_rate},
                      {"warmup_steps", warmup_steps}, {"weight_decay", weight_decay}, {"beta1", beta1},
                      {"beta2", beta2}, {"eps", eps}, {"grad_clip", grad_clip}, {"dropout", dropout}, {"seed", seed}, {"threads", threads},
                      {"lm_weight", lm_weight}};
  return j.dump();
}

TrainingOptions TrainingOptions::from_json(const std::string& text) {
  TrainingOptions o;
  try {
    const auto j = nlohmann::json::parse(text);
    o.batch_size = j.at("batch_size");
    o.seq_len = j.at("seq_len");
    o.steps = j.at("steps");
    o.learning_rate = j.at("learning_rate");
    o.min_learning_rate = j.at("min_learning_rate");
    o.warmup_steps = j.at("warmup_steps");
    o.weight_decay = j.at("weight_decay");
    o.beta1 = j.at("beta1");
    o.beta2 = j.at("beta2");
    o.eps = j.at("eps");
    o.grad_clip = j.at("grad_clip");
    o.dropout = j.value("dropout", 0.0);
    o.seed = j.at("seed");
    o.threads = j.at("threads");
    o.lm_weight = j.value("lm_weight", 0.5);
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("training options: ") + e.what());
  }
  return o;
}

double learning_rate_at(const TrainingOptions& o, int step) {
  if (step < o.warmup_steps) return o.learning_rate * (step + 1) / o.warmup_steps;
  const double progress = double(step - o.warmup_steps) / std::max(1, o.steps - o.warmup_steps);
  if (progress >= 1.0) return o.min_learning_rate;
  return o.min_learning_rate + 0.5 * (1.0 + training::cos_pi(progress)) * (o.learning_rate - o.min_learning_rate);
}

void sample_batch(std::span<const std::int32_t> stream, int B, int T, std::uint64_t seed, int step,
                  std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) {
  if (B < 1 || T < 1) throw InvalidArgument("sample_batch: B and T must be positive");
  if (stream.size() < static_cast<std::size_t>(T) + 1)
    throw InvalidArgument("the training text has " + std::to_string(stream.size()) + " tokens; windows of " +
                          std::to_string(T + 1) + " need at least that many (use a shorter sequence length)");
  // Both hashed: seeds s and s+1 must not give shifted copies of one stream (SplitMix64 steps its
  // state by a constant, so a state built as seed * constant + step would).
  Rng rng(Rng(seed).next() ^ Rng(~static_cast<std::uint64_t>(step)).next());
  const std::uint64_t starts = stream.size() - static_cast<std::size_t>(T);   // offsets 0 .. size-T-1
  inputs.resize(std::size_t(B) * T);
  targets.resize(std::size_t(B) * T);
  for (int b = 0; b < B; ++b) {
    const std::size_t start = rng.below(starts);
    std::copy_n(stream.begin() + start, T, inputs.begin() + std::size_t(b) * T);
    std::copy_n(stream.begin() + start + 1, T, targets.begin() + std::size_t(b) * T);
  }
}

void mask_tokens(std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets, int B, int T, std::int32_t mask_id,
                 int vocab_size, std::uint64_t seed, int step, double rate) {
  if (B < 1 || T < 1 || inputs.size() != std::size_t(B) * T) throw InvalidArgument("mask_tokens: inputs must be (B,T)");
  if (mask_id < 0 || mask_id >= vocab_size) throw InvalidArgument("mask_tokens: the mask id is not in the vocabulary");
  if (!(rate > 0 && rate <= 1)) throw InvalidArgument("the mask rate must be more than 0 and at most 1");
  // Its own stream: the same (seed, step) also draws the batch's windows (sample_batch).
  Rng rng(Rng(seed ^ 0x6D61736B6D61736Bull).next() ^ Rng(~std::uint64_t(step)).next());
  targets.assign(inputs.size(), kIgnoreTarget);
  for (int b = 0; b < B; ++b) {
    std::int32_t* in = inputs.data() + std::size_t(b) * T;
    std::int32_t* out = targets.data() + std::size_t(b) * T;
    for (int t = 0; t < T; ++t)
      if (rng.uniform() < rate) out[t] = in[t];
    int chosen = 0;
    for (int t = 0; t < T; ++t) chosen += out[t] != kIgnoreTarget;
    if (chosen == 0) {   // every sequence teaches something
      const int t = static_cast<int>(rng.below(std::uint64_t(T)));
      out[t] = in[t];
    }
    for (int t = 0; t < T; ++t) {
      if (out[t] == kIgnoreTarget) continue;
      const double u = rng.uniform();
      if (u < 0.8) in[t] = mask_id;
      else if (u < 0.9) in[t] = static_cast<std::int32_t>(rng.below(std::uint64_t(vocab_size)));
    }
  }
}

LabelledBatch::LabelledBatch(std::span<const LabelledIds* const> examples, std::int32_t pad_id) {
  B = static_cast<int>(examples.size());
  T = 0;
  for (const LabelledIds* e : examples) {
    if (e->ids.empty()) throw InvalidArgument("a labelled example has no tokens");
    T = std::max(T, static_cast<int>(e->ids.size()));
  }
  inputs.assign(std::size_t(B) * T, pad_id);
  targets.assign(inputs.size(), kIgnoreTarget);
  for (int b = 0; b < B; ++b) {
    const auto& ids = examples[b]->ids;
    const int n = static_cast<int>(ids.size());
    std::copy(ids.begin(), ids.end(), inputs.begin() + std::size_t(b) * T);
    std::copy(ids.begin() + 1, ids.end(), targets.begin() + std::size_t(b) * T);   // next tokens; the last has none
    labels.push_back(examples[b]->label);
    label_positions.push_back(n - 1);
  }
}

LabelledBatch sample_labelled_batch(std::span<const LabelledIds> examples, int B, std::uint64_t seed, int step,
                                    std::int32_t pad_id) {
  if (B < 1 || examples.empty()) throw InvalidArgument("sample_labelled_batch: no examples, or B < 1");
  Rng rng(Rng(seed).next() ^ Rng(~static_cast<std::uint64_t>(step)).next());
  std::vector<const LabelledIds*> picked;
  for (int b = 0; b < B; ++b) picked.push_back(&examples[rng.below(examples.size())]);
  return LabelledBatch(picked, pad_id);
}

EvalResult& EvalResult::operator+=(const EvalResult& r) {
  loss_sum += r.loss_sum;
  tokens += r.tokens;
  label_loss_sum += r.label_loss_sum;
  labels += r.labels;
  labels_correct += r.labels_correct;
  return *this;
}

// ---------------------------------------------------------------------------------------------
// Trainer

struct Trainer::Impl {
  ModelConfig config;
  TrainingOptions options;
  ParameterLayout layout;
  std::vector<float> params, m, v;   // parameters and AdamW's moments, laid out as `layout`
  int step = 0;
  std::map<std::string, std::string> extra;
  // Per shard: activations, a gradient buffer and the products' buffers (training/products.h),
  // whichever thread runs the shard. mutable: evaluate() is logically const.
  mutable std::vector<Workspace<float>> workspaces;
  mutable std::vector<std::vector<float>> shard_grads;
  mutable std::vector<training::ProductBuffers> product_buffers;

  Impl(const ModelConfig& c, const TrainingOptions& o) : config(c), options(o), layout(c) {}

  void check_batch(const TrainingBatch& batch) const {
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
  training::LossWeights loss_weights(const TrainingBatch& batch) const {
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
  training::Losses run_shards(const TrainingBatch& batch, const training::LossWeights& weights, bool with_grads) const {
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
        const training::Batch shard{batch.inputs.data() + off, batch.targets.data() + off, b1 - b0, T,
                                    labelled ? batch.labels.data() + b0 : nullptr,
                                    labelled ? batch.label_positions.data() + b0 : nullptr};
        losses[s] = training::loss_and_gradients(config, layout, params.data(), g, shard, weights, workspaces[s],
                                                 shard_dropout);
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

  const training::TensorSlot& slot(const std::string& name) const {
    const auto* s = layout.find(name);
    if (!s) throw InvalidArgument("the model has no parameter '" + name + "'");
    return *s;
  }

  // model.safetensors of the current parameters, in the given dtype.
  std::string weights_file(DType dtype) const {
    const std::size_t width = dtype_size(dtype);
    if (dtype != DType::F32 && dtype != DType::F16 && dtype != DType::BF16)
      throw InvalidArgument("models are saved as F32, F16 or BF16");
    std::vector<std::byte> converted(dtype == DType::F32 ? 0 : params.size() * width);
    for (std::size_t i = 0; i < converted.size() / width; ++i) {
      const std::uint16_t h = dtype == DType::F16 ? f32_to_f16(params[i]) : f32_to_bf16(params[i]);
      std::memcpy(converted.data() + 2 * i, &h, 2);
    }
    const std::byte* base = dtype == DType::F32 ? reinterpret_cast<const std::byte*>(params.data()) : converted.data();
    std::vector<TensorData> tensors;
    const bool classifier = !config.labels.empty();   // named as GPT2ForSequenceClassification's state
    for (const auto& s : layout.slots())
      tensors.push_back({(classifier && s.name != "score.weight" ? "transformer." : "") + s.name, dtype, s.shape,
                         {base + s.offset * width, s.size * width}});
    return safetensors_bytes(tensors, {{"format", "pt"}});
  }
};

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

StepResult Trainer::train_step(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T) {
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

EvalResult Trainer::evaluate(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T) const {
  return evaluate(TrainingBatch{inputs, targets, B, T, {}, {}});
}

EvalResult Trainer::evaluate(const TrainingBatch& batch) const {
  impl_->check_batch(batch);
  const training::Losses l = impl_->run_shards(batch, impl_->loss_weights(batch), false);
  return {l.lm_sum, l.lm_count, l.label_sum, std::int64_t(batch.labels.size()), l.label_correct};
}

EvalResult Trainer::evaluate_stream(std::span<const std::int32_t> stream, int T, int B, std::int64_t max_tokens) const {
  if (T < 1 || T > impl_->config.n_positions || B < 1) throw InvalidArgument("evaluate_stream: bad window or batch size");
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
                                                             std::span<const std::int32_t> targets, int B, int T) const {
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

void Trainer::save_model(const std::filesystem::path& dir, DType dtype) const {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "model.safetensors", impl_->weights_file(dtype));
  write_file_atomically(dir / "config.json", impl_->config.to_json());
}

std::string Trainer::model_file(DType dtype) const { return impl_->weights_file(dtype); }

Model Trainer::to_model() const {
  auto bytes = std::make_shared<std::string>(impl_->weights_file(DType::F32));
  const std::span<const std::byte> view(reinterpret_cast<const std::byte*>(bytes->data()), bytes->size());
  return Model::from_parts(impl_->config.to_json(), SafeTensors::parse(view, "(model in training)", bytes));
}

// A checkpoint is one safetensors file, so that writing it (to a temporary name, then renamed)
// is atomic: "param.NAME", "adam_m.NAME", "adam_v.NAME" for every tensor, F32, and metadata.
constexpr const char* kCheckpointFormat = "glassbox-training-checkpoint-1";

void Trainer::save_checkpoint(const std::filesystem::path& file, const std::map<std::string, std::string>& extra) const {
  const Impl& t = *impl_;
  std::vector<TensorData> tensors;
  for (const auto& [prefix, values] : {std::pair{"param.", &t.params}, std::pair{"adam_m.", &t.m}, std::pair{"adam_v.", &t.v}})
    for (const auto& s : t.layout.slots())
      tensors.push_back({std::string(prefix) + s.name, DType::F32, s.shape,
                         {reinterpret_cast<const std::byte*>(values->data() + s.offset), s.size * 4}});
  std::map<std::string, std::string> meta = {{"format", kCheckpointFormat},
                                             {"step", std::to_string(t.step)},
                                             {"config", t.config.to_json()},
                                             {"options", t.options.to_json()}};
  for (const auto& [k, v] : extra) meta["extra." + k] = v;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  write_file_atomically(file, safetensors_bytes(tensors, meta));
}

Trainer Trainer::from_checkpoint(const std::filesystem::path& file) {
  const SafeTensors st = SafeTensors::open(file);
  const auto& meta = st.metadata();
  auto get = [&](const std::string& key) -> const std::string& {
    auto it = meta.find(key);
    if (it == meta.end()) throw ModelFormatError(st.source(), "not a glassbox training checkpoint (no \"" + key + "\")");
    return it->second;
  };
  if (get("format") != kCheckpointFormat)
    throw ModelFormatError(st.source(), "not a glassbox training checkpoint (format \"" + get("format") + "\", expected " +
                                            kCheckpointFormat + ")");
  const ModelConfig config = ModelConfig::parse(get("config"), st.source() + " (config)");
  TrainingOptions options;
  try {
    options = TrainingOptions::from_json(get("options"));
    options.validate(config);
  } catch (const InvalidArgument& e) {
    throw ModelFormatError(st.source(), e.what());
  }
  auto impl = std::make_unique<Impl>(config, options);
  try {
    impl->step = std::stoi(get("step"));
  } catch (const std::logic_error&) {
    impl->step = -1;
  }
  if (impl->step < 0 || impl->step > options.steps) throw ModelFormatError(st.source(), "bad step \"" + get("step") + "\"");
  for (const auto& [k, v] : meta)
    if (k.rfind("extra.", 0) == 0) impl->extra[k.substr(6)] = v;
  const std::size_t n = impl->layout.size();
  for (auto* values : {&impl->params, &impl->m, &impl->v}) values->resize(n);
  for (const auto& [prefix, values] : {std::pair{"param.", &impl->params}, std::pair{"adam_m.", &impl->m}, std::pair{"adam_v.", &impl->v}}) {
    for (const auto& s : impl->layout.slots()) {
      const TensorInfo* t = st.find(std::string(prefix) + s.name);
      if (!t) throw ModelFormatError(st.source(), "missing tensor '" + std::string(prefix) + s.name + "'");
      if (t->dtype != DType::F32 || t->shape != s.shape)
        throw ModelFormatError(st.source(), "tensor '" + t->name + "' does not have the dtype F32 and the shape the config implies");
      std::memcpy(values->data() + s.offset, t->bytes.data(), s.size * 4);
    }
  }
  if (st.tensors().size() != 3 * impl->layout.slots().size())
    throw ModelFormatError(st.source(), "unexpected tensors in the checkpoint (does its config match?)");
  return Trainer(std::move(impl));
}

}  // namespace glassbox
