#include "training/parameters.h"

#include <cmath>

#include "glassbox/random.h"
#include "training/portable_math.h"

namespace glassbox::training {
namespace {

// Standard normal (Box-Muller), with the portable cos: the same initialisation everywhere.
double normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform();   // (0, 1]: log is finite
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * cos_pi(2.0 * u2);
}

}   // namespace

ParameterLayout::ParameterLayout(const ModelConfig& c) : config_(c) {
  const std::int64_t V = c.vocab_size, P = c.n_positions, C = c.n_embd, F = c.n_inner;
  const bool gpt2 = c.architecture == Architecture::GPT2;
  auto add = [&](std::string name, std::vector<std::int64_t> shape, bool trainable = true) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    const bool decay = shape.size() == 2 && trainable;
    slots_.push_back({std::move(name), std::move(shape), size_, n, decay, trainable});
    size_ += n;
  };
  add(gpt2 ? "wte.weight" : "tokens_embed.weight", {V, C});
  // Sinusoidal positions are a fixed table, saved as wpe all the same (config.h).
  add(gpt2 ? "wpe.weight" : "positions_embed.weight", {P, C}, c.position_encoding == PositionEncoding::Learned);
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string h = "h." + std::to_string(l) + ".";
    add(h + "ln_1.weight", {C});
    add(h + "ln_1.bias", {C});
    add(h + "attn.c_attn.weight", {C, 3 * C});
    add(h + "attn.c_attn.bias", {3 * C});
    add(h + "attn.c_proj.weight", {C, C});
    add(h + "attn.c_proj.bias", {C});
    add(h + "ln_2.weight", {C});
    add(h + "ln_2.bias", {C});
    add(h + "mlp.c_fc.weight", {C, F});
    add(h + "mlp.c_fc.bias", {F});
    add(h + "mlp.c_proj.weight", {F, C});
    add(h + "mlp.c_proj.bias", {C});
  }
  if (gpt2) {
    ln_f_slot_ = static_cast<int>(slots_.size());
    add("ln_f.weight", {C});
    add("ln_f.bias", {C});
  }
  if (!c.labels.empty()) {
    score_slot_ = static_cast<int>(slots_.size());
    add("score.weight", {static_cast<std::int64_t>(c.labels.size()), C});
  }
}

const TensorSlot* ParameterLayout::find(const std::string& name) const {
  for (const auto& s : slots_)
    if (s.name == name) return &s;
  return nullptr;
}

template <class Real>
ModelView<Real> ParameterLayout::view(Real* base) const {
  // The slots are in the order the constructor added them: 2 embeddings, 12 per layer, [ln_f], [score].
  ModelView<Real> v;
  auto at = [&](std::size_t i) { return base + slots_[i].offset; };
  v.wte = at(0);
  v.wpe = at(1);
  for (int l = 0; l < config_.n_layer; ++l) {
    const std::size_t i = 2 + 12 * static_cast<std::size_t>(l);
    v.layers.push_back({at(i), at(i + 1), at(i + 2), at(i + 3), at(i + 4), at(i + 5), at(i + 6), at(i + 7), at(i + 8),
                        at(i + 9), at(i + 10), at(i + 11)});
  }
  if (ln_f_slot_ >= 0) {
    v.ln_f_w = at(std::size_t(ln_f_slot_));
    v.ln_f_b = at(std::size_t(ln_f_slot_) + 1);
  }
  if (score_slot_ >= 0) v.score = at(std::size_t(score_slot_));
  return v;
}

template ModelView<float> ParameterLayout::view(float*) const;
template ModelView<double> ParameterLayout::view(double*) const;
template ModelView<const float> ParameterLayout::view(const float*) const;
template ModelView<const double> ParameterLayout::view(const double*) const;

std::vector<float> initial_parameters(const ParameterLayout& layout, int n_layer, std::uint64_t seed) {
  std::vector<float> p(layout.size());
  Rng rng(seed);
  const double residual_std = 0.02 / std::sqrt(2.0 * n_layer);
  for (const auto& s : layout.slots()) {
    float* t = p.data() + s.offset;
    const auto ends_with = [&](const char* suffix) {
      const std::string_view n(s.name), x(suffix);
      return n.size() >= x.size() && n.substr(n.size() - x.size()) == x;
    };
    if (!s.trainable) {   // the sinusoidal position table, the only fixed tensor
      sinusoidal_positions(t, static_cast<int>(s.shape[0]), static_cast<int>(s.shape[1]));
    } else if (s.shape.size() == 2) {
      const double std = ends_with("c_proj.weight") ? residual_std : 0.02;
      for (std::size_t i = 0; i < s.size; ++i) t[i] = static_cast<float>(std * normal(rng));
    } else {
      const float value =
          (ends_with("ln_1.weight") || ends_with("ln_2.weight") || ends_with("ln_f.weight")) ? 1.0f : 0.0f;
      for (std::size_t i = 0; i < s.size; ++i) t[i] = value;
    }
  }
  return p;
}

}   // namespace glassbox::training
