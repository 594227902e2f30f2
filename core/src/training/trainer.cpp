#include "glassbox/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "atomic_file.h"
#include "backprop.h"
#include "dtype.h"
#include "glassbox/error.h"
#include "optimizer.h"
#include "parameters.h"
#include "random.h"

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
  if (double(batch_size) * seq_len > (1 << 24)) fail("batch size x sequence length must be at most 16M tokens");
}

std::string TrainingOptions::to_json() const {
  nlohmann::json j = {{"batch_size", batch_size}, {"seq_len", seq_len}, {"steps", steps},
                      {"learning_rate", learning_rate}, {"min_learning_rate", min_learning_rate},
                      {"warmup_steps", warmup_steps}, {"weight_decay", weight_decay}, {"beta1", beta1},
                      {"beta2", beta2}, {"eps", eps}, {"grad_clip", grad_clip}, {"dropout", dropout}, {"seed", seed}, {"threads", threads}};
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
  } catch (const nlohmann::json::exception& e) {
    throw InvalidArgument(std::string("training options: ") + e.what());
  }
  return o;
}

double learning_rate_at(const TrainingOptions& o, int step) {
  if (step < o.warmup_steps) return o.learning_rate * (step + 1) / o.warmup_steps;
  const double progress = double(step - o.warmup_steps) / std::max(1, o.steps - o.warmup_steps);
  if (progress >= 1.0) return o.min_learning_rate;
  return o.min_learning_rate + 0.5 * (1.0 + std::cos(M_PI * progress)) * (o.learning_rate - o.min_learning_rate);
}

void sample_batch(std::span<const std::int32_t> stream, int B, int T, std::uint64_t seed, int step,
                  std::vector<std::int32_t>& inputs, std::vector<std::int32_t>& targets) {
  if (B < 1 || T < 1) throw InvalidArgument("sample_batch: B and T must be positive");
  if (stream.size() < static_cast<std::size_t>(T) + 1)
    throw InvalidArgument("the training text has " + std::to_string(stream.size()) + " tokens; windows of " +
                          std::to_string(T + 1) + " need at least that many (use a shorter sequence length)");
  // Both hashed: seeds s and s+1 must not give shifted copies of one stream (SplitMix64 steps its
  // state by a constant, so a state built as seed * constant + step would).
  training::Random rng(training::Random(seed).next() ^ training::Random(~static_cast<std::uint64_t>(step)).next());
  const std::uint64_t starts = stream.size() - static_cast<std::size_t>(T);   // offsets 0 .. size-T-1
  inputs.resize(std::size_t(B) * T);
  targets.resize(std::size_t(B) * T);
  for (int b = 0; b < B; ++b) {
    const std::size_t start = rng.below(starts);
    std::copy_n(stream.begin() + start, T, inputs.begin() + std::size_t(b) * T);
    std::copy_n(stream.begin() + start + 1, T, targets.begin() + std::size_t(b) * T);
  }
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
  // Per shard: activations and a gradient buffer. mutable: evaluate() is logically const.
  mutable std::vector<Workspace<float>> workspaces;
  mutable std::vector<std::vector<float>> shard_grads;

  Impl(const ModelConfig& c, const TrainingOptions& o) : config(c), options(o), layout(c) {}

  void check_batch(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T) const {
    if (B < 1 || T < 1) throw InvalidArgument("a batch needs B >= 1 sequences of T >= 1 tokens");
    if (T > config.n_positions)
      throw InvalidArgument("sequences of " + std::to_string(T) + " tokens do not fit in the context of " +
                            std::to_string(config.n_positions));
    const std::size_t n = std::size_t(B) * T;
    if (inputs.size() != n || targets.size() != n)
      throw InvalidArgument("a batch of " + std::to_string(B) + " x " + std::to_string(T) + " needs " +
                            std::to_string(n) + " inputs and targets");
    for (auto span : {inputs, targets})
      for (std::int32_t id : span)
        if (id < 0 || id >= config.vocab_size)
          throw InvalidArgument("token id " + std::to_string(id) + " is out of range: the vocabulary has ids 0.." +
                                std::to_string(config.vocab_size - 1));
  }

  // Runs the batch as min(threads, B) shards of consecutive sequences, in parallel; shard s
  // adds its gradients into shard_grads[s] when `with_grads`. Returns the summed loss.
  double run_shards(const std::int32_t* inputs, const std::int32_t* targets, int B, int T, bool with_grads) const {
    // training (with_grads) drops out with masks of this step's own; evaluation never does
    training::Dropout dropout;
    if (with_grads) {
      dropout.p = options.dropout;
      dropout.seed = training::Random(options.seed ^ (0xA0761D6478BD642Full * std::uint64_t(step + 1))).next();
    }
    const int S = std::min(options.threads, B);
    if (int(workspaces.size()) < S) workspaces.resize(S);
    if (with_grads && int(shard_grads.size()) < S) shard_grads.resize(S);
    std::vector<double> losses(S);
    std::vector<std::exception_ptr> errors(S);
    auto run = [&](int s) {
      try {
        const int b0 = B * s / S, b1 = B * (s + 1) / S;
        float* g = nullptr;
        if (with_grads) {
          shard_grads[s].assign(layout.size(), 0.0f);
          g = shard_grads[s].data();
        }
        const std::size_t off = std::size_t(b0) * T;
        training::Dropout shard_dropout = dropout;
        shard_dropout.first_sequence = b0;
        losses[s] = training::loss_and_gradients(config, layout, params.data(), g, inputs + off, targets + off, b1 - b0, T,
                                                 double(B) * T, workspaces[s], shard_dropout);
      } catch (...) {
        errors[s] = std::current_exception();
      }
    };
    std::vector<std::thread> threads;
    for (int s = 1; s < S; ++s) threads.emplace_back(run, s);
    run(0);
    for (auto& t : threads) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
    double loss = 0;
    for (double l : losses) loss += l;   // in shard order: the same sum on every run
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
    for (const auto& s : layout.slots())
      tensors.push_back({s.name, dtype, s.shape, {base + s.offset * width, s.size * width}});
    return safetensors_bytes(tensors, {{"format", "pt"}});
  }
};

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;
Trainer::~Trainer() = default;

Trainer::Trainer(const ModelConfig& config, const TrainingOptions& options) {
  options.validate(config);
  impl_ = std::make_unique<Impl>(config, options);
  impl_->params = training::initial_parameters(impl_->layout, config.n_layer, options.seed);
  impl_->m.assign(impl_->params.size(), 0.0f);
  impl_->v.assign(impl_->params.size(), 0.0f);
}

const ModelConfig& Trainer::config() const { return impl_->config; }
const TrainingOptions& Trainer::options() const { return impl_->options; }
int Trainer::step() const { return impl_->step; }
std::size_t Trainer::parameter_count() const { return impl_->layout.size(); }
const std::map<std::string, std::string>& Trainer::checkpoint_extra() const { return impl_->extra; }

StepResult Trainer::train_step(std::span<const std::int32_t> inputs, std::span<const std::int32_t> targets, int B, int T) {
  Impl& t = *impl_;
  t.check_batch(inputs, targets, B, T);
  StepResult r;
  r.loss = t.run_shards(inputs.data(), targets.data(), B, T, true) / (double(B) * T);
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
  impl_->check_batch(inputs, targets, B, T);
  return {impl_->run_shards(inputs.data(), targets.data(), B, T, false), std::int64_t(B) * T};
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
    const EvalResult r = evaluate(inputs, targets, b, len);
    total.loss_sum += r.loss_sum;
    total.tokens += r.tokens;
    start += std::int64_t(b) * len;
  }
  return total;
}

std::map<std::string, std::vector<float>> Trainer::gradients(std::span<const std::int32_t> inputs,
                                                             std::span<const std::int32_t> targets, int B, int T) const {
  impl_->check_batch(inputs, targets, B, T);
  impl_->run_shards(inputs.data(), targets.data(), B, T, true);
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
