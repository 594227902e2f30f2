// TrainingOptions (glassbox/trainer.h): their checks, their JSON (checkpoints keep them), and the
// learning-rate schedule they define.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/trainer.h"
#include "training/portable_math.h"

namespace glassbox {

void TrainingOptions::validate(const ModelConfig& c) const {
  auto fail = [](const std::string& what) { throw InvalidArgument("training option " + what); };
  auto finite = [](double x) { return std::isfinite(x); };
  if (batch_size < 1) fail("batch size must be at least 1, got " + std::to_string(batch_size));
  if (seq_len < 1 || seq_len > c.n_positions)
    fail("sequence length must be 1.." + std::to_string(c.n_positions) + " (the context), got " +
         std::to_string(seq_len));
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
  nlohmann::json j = {{"batch_size", batch_size},
                      {"seq_len", seq_len},
                      {"steps", steps},
                      {"learning_rate", learning_rate},
                      {"min_learning_rate", min_learning_rate},
                      {"warmup_steps", warmup_steps},
                      {"weight_decay", weight_decay},
                      {"beta1", beta1},
                      {"beta2", beta2},
                      {"eps", eps},
                      {"grad_clip", grad_clip},
                      {"dropout", dropout},
                      {"seed", seed},
                      {"threads", threads},
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

}   // namespace glassbox
