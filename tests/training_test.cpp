// Training: the backward pass against finite differences (double precision) and against PyTorch's
// autograd; ten steps of clipping + AdamW + schedule against torch.optim.AdamW
// (tests/fixtures/train-*, scripts/make_training_fixtures.py); checkpoints and resume; a short run
// that must learn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "io/dtype.h"
#include "glassbox/error.h"
#include "glassbox/trainer.h"
#include "test_util.h"
#include "training/backprop.h"
#include "training/optimizer.h"
#include "training/parameters.h"

namespace glassbox {
namespace {

using test::fixture_dir;
using Tensors = std::map<std::string, std::vector<double>>;

// Every tensor of a safetensors file (F32 or F64) as doubles.
Tensors read_doubles(const std::filesystem::path& file) {
  Tensors out;
  const SafeTensors st = SafeTensors::open(file);
  for (const auto& t : st.tensors()) {
    auto& v = out[t.name];
    v.resize(t.numel);
    for (std::int64_t i = 0; i < t.numel; ++i) {
      if (t.dtype == DType::F64)
        std::memcpy(&v[i], t.bytes.data() + 8 * i, 8);
      else {
        float f;
        std::memcpy(&f, t.bytes.data() + 4 * i, 4);
        v[i] = f;
      }
    }
  }
  return out;
}

struct Batch {
  std::vector<std::int32_t> inputs, targets;   // targets: kIgnoreTarget where nothing is predicted
  int B = 0, T = 0;
  std::vector<std::int32_t> labels, label_positions;   // classifier fixtures only
  TrainingBatch view() const { return {inputs, targets, B, T, labels, label_positions}; }
  training::Batch raw() const {
    return {inputs.data(),
            targets.data(),
            B,
            T,
            labels.empty() ? nullptr : labels.data(),
            labels.empty() ? nullptr : label_positions.data()};
  }
};

struct Fixture {
  ModelConfig config;
  nlohmann::json training;
  Tensors initial, grads, final;
  std::vector<Batch> batches;

  explicit Fixture(const std::string& name) {
    const auto dir = fixture_dir(name);
    config = ModelConfig::load(dir / "config.json");
    training = test::read_json(dir / "training.json");
    initial = read_doubles(dir / "model.safetensors");
    grads = read_doubles(dir / "grads.safetensors");
    final = read_doubles(dir / "final.safetensors");
    for (const auto& b : training["batches"]) {
      Batch batch;
      batch.B = static_cast<int>(b["inputs"].size());
      batch.T = static_cast<int>(b["inputs"][0].size());
      for (const auto& row : b["inputs"])
        for (int id : row) batch.inputs.push_back(id);
      for (const auto& row : b["targets"])
        for (int id : row) batch.targets.push_back(id);
      if (b.contains("labels")) {
        batch.labels = b["labels"].get<std::vector<std::int32_t>>();
        batch.label_positions = b["label_positions"].get<std::vector<std::int32_t>>();
      }
      batches.push_back(batch);
    }
  }

  // Two sequences of 7 tokens cut from batch 1: enough for every code path (several heads and
  // positions, a token seen twice), small enough to run a forward pass per parameter.
  Batch small_batch() const {
    Batch s;
    s.B = 2;
    s.T = 7;
    const Batch& b = batches[1];
    for (int r = 0; r < s.B; ++r) {
      s.inputs.insert(s.inputs.end(), b.inputs.begin() + r * b.T, b.inputs.begin() + r * b.T + s.T);
      s.targets.insert(s.targets.end(), b.targets.begin() + r * b.T, b.targets.begin() + r * b.T + s.T);
      if (!b.labels.empty()) {   // the label read at the last of the 7 tokens, which predicts nothing
        s.labels.push_back(b.labels[r]);
        s.label_positions.push_back(s.T - 1);
        s.targets.back() = kIgnoreTarget;
      }
    }
    return s;
  }

  // The fixture's loss: the mean over predicted tokens (times lm_weight for a classifier) plus
  // the mean label loss.
  training::LossWeights weights(const Batch& b) const {
    std::int64_t predicted = 0;
    for (auto t : b.targets) predicted += t != kIgnoreTarget;
    const double lm = training.at("options").value("lm_weight", 1.0);
    return {predicted ? lm / double(predicted) : 0.0, b.labels.empty() ? 0.0 : 1.0 / b.B};
  }
  template <class Real>
  double loss(const Batch& b, const training::ParameterLayout& layout, const Real* params, Real* grads,
              training::Workspace<Real>& ws, const training::Dropout& dropout = {}) const {
    const training::LossWeights w = weights(b);
    const training::Losses l = training::loss_and_gradients(config, layout, params, grads, b.raw(), w, ws, dropout);
    return w.lm * l.lm_sum + w.label * l.label_sum;
  }

  TrainingOptions options(int threads = 2) const {
    const auto& o = training["options"];
    TrainingOptions t;
    t.batch_size = 3;
    t.seq_len = config.n_positions;
    t.steps = o["total_steps"];
    t.learning_rate = o["learning_rate"];
    t.min_learning_rate = o["min_learning_rate"];
    t.warmup_steps = o["warmup_steps"];
    t.weight_decay = o["weight_decay"];
    t.beta1 = o["beta1"];
    t.beta2 = o["beta2"];
    t.eps = o["eps"];
    t.grad_clip = o["grad_clip"];
    t.lm_weight = o.value("lm_weight", 0.5);
    t.threads = threads;
    return t;
  }

  Trainer trainer(int threads = 2) const {
    Trainer t(config, options(threads));
    for (const auto& [name, values] : initial) t.set_parameter(name, std::vector<float>(values.begin(), values.end()));
    return t;
  }

  // The initial parameters as one flat double array in the training layout.
  std::vector<double> flat_initial(const training::ParameterLayout& layout) const {
    std::vector<double> p(layout.size());
    for (const auto& s : layout.slots())
      std::copy(initial.at(s.name).begin(), initial.at(s.name).end(), p.begin() + s.offset);
    return p;
  }
};

// The key third of c_attn's bias has a gradient that is exactly zero in exact arithmetic (softmax
// ignores a constant added to a row), so float32 rounding noise, which Adam normalises, moves it
// by up to lr per step: it is compared loosely (see scripts/make_training_fixtures.py).
bool is_key_bias(const std::string& name, std::size_t i, int C) {
  return name.size() > 16 && name.compare(name.size() - 16, 16, "attn.c_attn.bias") == 0 && i >= std::size_t(C) &&
         i < std::size_t(2 * C);
}

// Compares the analytic gradient `grads` with central differences (loss(p+h) - loss(p-h)) / 2h of
// every `stride`-th entry of every tensor; `loss` reads `params`.
void expect_finite_differences(const training::ParameterLayout& layout, std::vector<double>& params,
                               const std::vector<double>& grads, const std::function<double()>& loss, int stride) {
  const double h = 1e-5;
  std::size_t checked = 0;
  for (const auto& s : layout.slots()) {
    double worst = 0;
    for (std::size_t i = s.offset; i < s.offset + s.size; i += stride) {
      const double p = params[i];
      params[i] = p + h;
      const double up = loss();
      params[i] = p - h;
      const double down = loss();
      params[i] = p;
      const double numeric = (up - down) / (2 * h);
      // truncation ~ h^2 |third derivative|, rounding ~ 1e-16 |loss| / h: both far below this bound
      worst = std::max(worst, std::abs(numeric - grads[i]) / (1e-8 + 1e-6 * std::abs(numeric)));
      ++checked;
    }
    EXPECT_LT(worst, 1.0) << s.name << ": worst error against finite differences, in units of 1e-8 + 1e-6 |numeric|";
  }
  std::size_t expected = 0;
  for (const auto& s : layout.slots()) expected += (s.size + stride - 1) / stride;
  EXPECT_EQ(checked, expected);
}

class TrainingFixtureTest : public testing::TestWithParam<std::string> {};

TEST_P(TrainingFixtureTest, GradientsInDoubleMatchPyTorchAutograd) {
  const Fixture f(GetParam());
  const training::ParameterLayout layout(f.config);
  const std::vector<double> params = f.flat_initial(layout);
  std::vector<double> grads(layout.size(), 0.0);
  training::Workspace<double> ws;
  const Batch& b = f.batches[0];
  const double loss = f.loss(b, layout, params.data(), grads.data(), ws);
  EXPECT_NEAR(loss, f.training["steps"][0]["loss"].get<double>(), 1e-12);
  for (const auto& s : layout.slots()) {
    const auto& ref = f.grads.at(s.name);
    double worst = 0;
    for (std::size_t i = 0; i < s.size; ++i) worst = std::max(worst, std::abs(grads[s.offset + i] - ref[i]));
    EXPECT_LT(worst, 1e-12) << s.name;
  }
}

TEST_P(TrainingFixtureTest, GradientsInFloatMatchPyTorchAutograd) {
  const Fixture f(GetParam());
  const Trainer trainer = f.trainer();
  const Batch& b = f.batches[0];
  const auto grads = trainer.gradients(b.view());
  for (const auto& [name, ref] : f.grads) {
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, std::abs(double(grads.at(name)[i]) - ref[i]));
    EXPECT_LT(worst, 5e-6) << name;
  }
}

// d loss / d p ~ (loss(p + h) - loss(p - h)) / 2h for every single parameter, in double.
TEST_P(TrainingFixtureTest, GradientsMatchFiniteDifferencesForEveryParameter) {
  const Fixture f(GetParam());
  const training::ParameterLayout layout(f.config);
  std::vector<double> params = f.flat_initial(layout);
  std::vector<double> grads(layout.size(), 0.0);
  training::Workspace<double> ws;
  const Batch b = f.small_batch();
  auto loss = [&] { return f.loss<double>(b, layout, params.data(), nullptr, ws); };
  f.loss(b, layout, params.data(), grads.data(), ws);
  expect_finite_differences(layout, params, grads, loss, 1);
}

// With dropout the loss is still a deterministic function of the parameters for a fixed seed
// (the masks depend on seed, sequence and site only), so finite differences check its gradient.
TEST_P(TrainingFixtureTest, GradientsWithDropoutMatchFiniteDifferences) {
  const Fixture f(GetParam());
  const training::ParameterLayout layout(f.config);
  std::vector<double> params = f.flat_initial(layout);
  std::vector<double> grads(layout.size(), 0.0);
  training::Workspace<double> ws;
  const Batch b = f.small_batch();
  training::Dropout dropout;
  dropout.p = 0.3;
  dropout.seed = 12345;
  auto loss = [&] { return f.loss<double>(b, layout, params.data(), nullptr, ws, dropout); };
  const double clean = f.loss<double>(b, layout, params.data(), nullptr, ws);
  EXPECT_GT(std::abs(loss() - clean), 1e-3);   // the masks change the loss
  EXPECT_EQ(loss(), loss());                   // and are the same every time
  f.loss(b, layout, params.data(), grads.data(), ws, dropout);
  expect_finite_differences(layout, params, grads, loss, 3);   // every third entry: quicker
}

// Ten steps of the real Trainer (float, two threads) against PyTorch's clip_grad_norm_ + AdamW.
TEST_P(TrainingFixtureTest, TenAdamWStepsMatchPyTorch) {
  const Fixture f(GetParam());
  Trainer trainer = f.trainer();
  for (int k = 0; k < 10; ++k) {
    const Batch& b = f.batches[k];
    const auto& ref = f.training["steps"][k];
    const StepResult r = trainer.train_step(b.view());
    EXPECT_NEAR(r.learning_rate, ref["lr"].get<double>(), 1e-12) << "step " << k;
    EXPECT_NEAR(r.loss, ref["loss"].get<double>(), 2e-5) << "step " << k;
    EXPECT_NEAR(r.grad_norm, ref["grad_norm"].get<double>(), 1e-5 * ref["grad_norm"].get<double>()) << "step " << k;
  }
  EXPECT_EQ(trainer.step(), 10);
  const Batch& b0 = f.batches[0];
  const EvalResult e = trainer.evaluate(b0.view());
  const training::LossWeights w = f.weights(b0);
  EXPECT_NEAR(w.lm * e.loss_sum + w.label * e.label_loss_sum, f.training["final_loss"].get<double>(), 2e-5);
  EXPECT_LT(f.training["final_loss"].get<double>(), f.training["steps"][0]["loss"].get<double>() - 0.5);   // it learned
  for (const auto& [name, ref] : f.final) {
    const auto ours = trainer.parameter(name);
    double worst = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double d = std::abs(double(ours[i]) - ref[i]);
      if (is_key_bias(name, i, f.config.n_embd))
        EXPECT_LT(d, 0.07) << name << "[" << i << "]";
      else
        worst = std::max(worst, d);
    }
    EXPECT_LT(worst, 5e-5) << name;
  }
}

// The same ten steps in double through the optimizer functions: PyTorch's arithmetic, exactly.
TEST_P(TrainingFixtureTest, TenAdamWStepsInDoubleMatchPyTorchClosely) {
  const Fixture f(GetParam());
  const training::ParameterLayout layout(f.config);
  const TrainingOptions o = f.options();
  std::vector<double> params = f.flat_initial(layout), grads(layout.size()), m(layout.size()), v(layout.size());
  training::Workspace<double> ws;
  for (int k = 0; k < 10; ++k) {
    const Batch& b = f.batches[k];
    std::fill(grads.begin(), grads.end(), 0.0);
    f.loss(b, layout, params.data(), grads.data(), ws);
    const double norm = training::clip_gradients(grads.data(), grads.size(), o.grad_clip);
    EXPECT_NEAR(norm, f.training["steps"][k]["grad_norm"].get<double>(), 1e-11);
    training::adamw_update(layout, params.data(), grads.data(), m.data(), v.data(), k + 1,
                           {learning_rate_at(o, k), o.beta1, o.beta2, o.eps, o.weight_decay});
  }
  for (const auto& s : layout.slots()) {
    double worst = 0;
    for (std::size_t i = 0; i < s.size; ++i)
      worst = std::max(worst, std::abs(params[s.offset + i] - f.final.at(s.name)[i]));
    EXPECT_LT(worst, 1e-9) << s.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TrainingFixtureTest,
                         testing::Values("train-gpt2", "train-openai-gpt", "train-gpt2-erf", "train-mlm",
                                         "train-classify"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

// What the trainer computes is what the inference engine computes: the saved model's logits give
// the trainer's loss.
TEST(Training, SavedModelGivesTheTrainersLoss) {
  for (const std::string name : {"train-gpt2", "train-openai-gpt", "train-gpt2-erf"}) {
    const Fixture f(name);
    const Trainer trainer = f.trainer();
    test::TempDir dir;
    trainer.save_model(dir.path());
    const Model model = Model::load(dir.path());
    const Batch& b = f.batches[0];
    double sum = 0;
    for (int s = 0; s < b.B; ++s) {
      KVCache cache = model.new_cache();
      ForwardOptions options;
      options.all_logits = true;
      const auto logits = model.forward(std::span(b.inputs).subspan(std::size_t(s) * b.T, b.T), cache, options);
      const int V = f.config.vocab_size;
      for (int t = 0; t < b.T; ++t) {
        const float* row = logits.data() + std::size_t(t) * V;
        double max = row[0], z = 0;
        for (int v = 0; v < V; ++v) max = std::max(max, double(row[v]));
        for (int v = 0; v < V; ++v) z += std::exp(row[v] - max);
        sum += std::log(z) + max - row[b.targets[std::size_t(s) * b.T + t]];
      }
    }
    EXPECT_NEAR(sum / (b.B * b.T), trainer.evaluate(b.inputs, b.targets, b.B, b.T).loss(), 1e-5) << name;
    EXPECT_EQ(ModelConfig::load(dir.path() / "config.json").to_json(), f.config.to_json()) << name;
  }
}

// The masked LM and the classifier, saved and loaded by the inference engine: a masked LM's bidirectional logits at
// the masked positions and a classifier's label logits give the trainer's losses, and the
// classifier's file has Hugging Face's GPT2ForSequenceClassification names.
TEST(Training, SavedMaskedLMAndClassifierGiveTheTrainersLosses) {
  {
    const Fixture f("train-mlm");
    const Trainer trainer = f.trainer();
    test::TempDir dir;
    trainer.save_model(dir.path());
    const Model model = Model::load(dir.path());
    EXPECT_TRUE(model.config().bidirectional);
    EXPECT_EQ(model.config().mask_token_id, 63);
    const Batch& b = f.batches[0];
    const int V = f.config.vocab_size;
    double sum = 0;
    int predicted = 0;
    for (int s = 0; s < b.B; ++s) {
      KVCache cache = model.new_cache();
      ForwardOptions options;
      options.all_logits = true;   // bidirectional because the config says so, not because asked
      const auto logits = model.forward(std::span(b.inputs).subspan(std::size_t(s) * b.T, b.T), cache, options);
      for (int t = 0; t < b.T; ++t) {
        const int target = b.targets[std::size_t(s) * b.T + t];
        if (target == kIgnoreTarget) continue;
        const float* row = logits.data() + std::size_t(t) * V;
        double max = row[0], z = 0;
        for (int v = 0; v < V; ++v) max = std::max(max, double(row[v]));
        for (int v = 0; v < V; ++v) z += std::exp(row[v] - max);
        sum += std::log(z) + max - row[target];
        ++predicted;
      }
    }
    const EvalResult e = trainer.evaluate(b.view());
    EXPECT_EQ(e.tokens, predicted);
    EXPECT_NEAR(sum / predicted, e.loss(), 1e-5);
    EXPECT_NEAR(e.loss(), f.training["steps"][0]["loss"].get<double>(), 1e-5);   // PyTorch's
  }
  {
    const Fixture f("train-classify");
    const Trainer trainer = f.trainer();
    test::TempDir dir;
    trainer.save_model(dir.path());
    const SafeTensors st = SafeTensors::open(dir.path() / "model.safetensors");
    EXPECT_NE(st.find("score.weight"), nullptr);
    EXPECT_NE(st.find("transformer.h.0.attn.c_attn.weight"), nullptr);
    EXPECT_EQ(st.find("h.0.attn.c_attn.weight"), nullptr);
    const Model model = Model::load(dir.path());
    EXPECT_EQ(model.config().labels, (std::vector<std::string>{"red", "green", "blue"}));
    const Batch& b = f.batches[0];
    double sum = 0;
    for (int s = 0; s < b.B; ++s) {
      const auto ids = std::span(b.inputs).subspan(std::size_t(s) * b.T, b.label_positions[s] + 1);
      const auto z = model.classify(ids);
      ASSERT_EQ(z.size(), 3u);
      double max = z[0], total = 0;
      for (float v : z) max = std::max(max, double(v));
      for (float v : z) total += std::exp(v - max);
      sum += std::log(total) + max - z[b.labels[s]];
    }
    const EvalResult e = trainer.evaluate(b.view());
    EXPECT_EQ(e.labels, b.B);
    EXPECT_NEAR(sum / b.B, e.label_loss(), 1e-5);
  }
}

// BERT's masking, counted over many positions: ~15% chosen (at least one per sequence), their
// targets the original ids and the rest ignored; of the chosen inputs ~80% masked, ~10% random,
// ~10% kept; the same (seed, step) gives the same masks, another step others.
TEST(Training, MaskTokensChoosesFifteenPercentAsBertDoes) {
  const int B = 50, T = 200, V = 1000, mask = 999;
  std::vector<std::int32_t> original(std::size_t(B) * T);
  for (std::size_t i = 0; i < original.size(); ++i) original[i] = std::int32_t(i % 997);   // never the mask id
  std::vector<std::int32_t> inputs = original, targets;
  mask_tokens(inputs, targets, B, T, mask, V, 7, 3);
  int chosen = 0, masked = 0, kept = 0, random = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (targets[i] == kIgnoreTarget) {
      ASSERT_EQ(inputs[i], original[i]) << i;   // unchosen positions are untouched
      continue;
    }
    ASSERT_EQ(targets[i], original[i]) << i;
    ++chosen;
    masked += inputs[i] == mask;
    kept += inputs[i] == original[i];
    random += inputs[i] != mask && inputs[i] != original[i];
  }
  const double n = double(B) * T;
  EXPECT_NEAR(chosen / n, 0.15, 0.01);
  EXPECT_NEAR(masked / double(chosen), 0.8, 0.03);
  EXPECT_NEAR(kept / double(chosen), 0.1, 0.03);   // a random token may also equal the original: ~0.1%
  EXPECT_NEAR(random / double(chosen), 0.1, 0.03);
  std::vector<std::int32_t> again = original, again_targets;
  mask_tokens(again, again_targets, B, T, mask, V, 7, 3);
  EXPECT_EQ(again, inputs);
  EXPECT_EQ(again_targets, targets);
  mask_tokens(again = original, again_targets, B, T, mask, V, 7, 4);
  EXPECT_NE(again_targets, targets);
  // One token per sequence: it is always the one chosen.
  std::vector<std::int32_t> one = {5, 6, 7}, one_targets;
  mask_tokens(one, one_targets, 3, 1, mask, V, 1, 0);
  EXPECT_EQ(one_targets, (std::vector<std::int32_t>{5, 6, 7}));
  EXPECT_THROW(mask_tokens(one, one_targets, 3, 1, V, V, 1, 0), InvalidArgument);   // mask id outside
  // Another rate: that share is chosen.
  std::vector<std::int32_t> more = original, more_targets;
  mask_tokens(more, more_targets, B, T, mask, V, 7, 3, 0.4);
  const auto more_chosen =
      std::count_if(more_targets.begin(), more_targets.end(), [](std::int32_t t) { return t != kIgnoreTarget; });
  EXPECT_NEAR(more_chosen / n, 0.4, 0.015);
  for (const double bad : {0.0, -0.1, 1.5, std::nan("")})
    EXPECT_THROW(mask_tokens(more, more_targets, B, T, mask, V, 7, 3, bad), InvalidArgument);
}

// A classifier's batch from examples of lengths 1, 2 and 4: right-padded, next-token targets
// inside each text, ignored at its last token and on padding, the label read at its last token.
TEST(Training, LabelledBatchPadsAndReadsEachLabelAtItsLastToken) {
  const LabelledIds a{{7}, 1}, b{{3, 4}, 0}, c{{1, 2, 5, 6}, 2};
  const std::vector<const LabelledIds*> examples = {&a, &b, &c};
  const LabelledBatch batch(examples, 9);
  const int I = kIgnoreTarget;
  EXPECT_EQ(batch.B, 3);
  EXPECT_EQ(batch.T, 4);
  EXPECT_EQ(batch.inputs, (std::vector<std::int32_t>{7, 9, 9, 9, 3, 4, 9, 9, 1, 2, 5, 6}));
  EXPECT_EQ(batch.targets, (std::vector<std::int32_t>{I, I, I, I, 4, I, I, I, 2, 5, 6, I}));
  EXPECT_EQ(batch.labels, (std::vector<std::int32_t>{1, 0, 2}));
  EXPECT_EQ(batch.label_positions, (std::vector<std::int32_t>{0, 1, 3}));
  // sample_labelled_batch: a function of (seed, step)
  const std::vector<LabelledIds> pool = {a, b, c};
  const auto s1 = sample_labelled_batch(pool, 8, 5, 2, 9), s2 = sample_labelled_batch(pool, 8, 5, 2, 9);
  EXPECT_EQ(s1.inputs, s2.inputs);
  EXPECT_EQ(s1.labels, s2.labels);
  EXPECT_NE(sample_labelled_batch(pool, 8, 5, 3, 9).labels, s1.labels);
}

// A language model's batch in which nothing is predicted is refused rather than taken as a step.
TEST(Training, ABatchThatPredictsNothingIsRefused) {
  const Fixture f("train-gpt2");
  Trainer trainer = f.trainer();
  const Batch& b = f.batches[0];
  const std::vector<std::int32_t> none(b.targets.size(), kIgnoreTarget);
  EXPECT_THROW(trainer.train_step(b.inputs, none, b.B, b.T), InvalidArgument);
  EXPECT_EQ(trainer.step(), 0);
  ModelConfig both = Fixture("train-classify").config;
  both.bidirectional = true;
  EXPECT_THROW(Trainer(both, f.options()), InvalidArgument);
}

TEST(Training, ShardsOnThreadsGiveTheGradientOfTheWholeBatch) {
  const Fixture f("train-gpt2");
  const Batch& b = f.batches[0];
  for (double dropout : {0.0, 0.25}) {   // dropout masks belong to sequences, not to shards
    auto trainer = [&](int threads) {
      TrainingOptions o = f.options(threads);
      o.dropout = dropout;
      Trainer t(f.config, o);
      for (const auto& [name, values] : f.initial)
        t.set_parameter(name, std::vector<float>(values.begin(), values.end()));
      return t;
    };
    const auto one = trainer(1).gradients(b.inputs, b.targets, b.B, b.T);
    const auto three = trainer(3).gradients(b.inputs, b.targets, b.B, b.T);
    for (const auto& [name, g] : one)
      for (std::size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], three.at(name)[i], 1e-6) << name << " dropout " << dropout;
  }
}

TEST(Training, DropoutKeepsTheExpectedShareAndNeverAppliesToEvaluation) {
  const Fixture f("train-gpt2");
  TrainingOptions o = f.options();
  o.dropout = 0.5;
  Trainer t(f.config, o);
  const Batch& b = f.batches[0];
  const double eval1 = t.evaluate(b.inputs, b.targets, b.B, b.T).loss();
  EXPECT_EQ(eval1, t.evaluate(b.inputs, b.targets, b.B, b.T).loss());
  Trainer plain = f.trainer();
  for (const auto& name : plain.parameter_names()) plain.set_parameter(name, t.parameter(name));
  EXPECT_EQ(eval1, plain.evaluate(b.inputs, b.targets, b.B, b.T).loss());   // evaluation ignores dropout
  // The mask of a site keeps about 1 - p of the elements, scaled by 1/(1-p): mean 1.
  training::Workspace<float> ws;
  const training::ParameterLayout layout(f.config);
  std::vector<float> params(layout.size(), 0.01f);
  training::Dropout d;
  d.p = 0.5;
  d.seed = 99;
  training::loss_and_gradients<float>(f.config, layout, params.data(), nullptr, b.raw(), {}, ws, d);
  const std::size_t n = std::size_t(b.B) * b.T * f.config.n_embd;
  double kept = 0, sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    kept += ws.blocks[1].mlp_mask[i] != 0;
    sum += ws.blocks[1].mlp_mask[i];
  }
  EXPECT_NEAR(kept / n, 0.5, 0.05);
  EXPECT_NEAR(sum / n, 1.0, 0.1);
  EXPECT_NE(ws.blocks[1].mlp_mask, ws.blocks[1].attn_mask);   // each site its own mask
}

std::vector<std::int32_t> random_stream(int n, int vocab, std::uint64_t seed) {
  std::vector<std::int32_t> s(n);
  std::uint64_t x = seed;
  for (auto& id : s) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    id = static_cast<std::int32_t>((x >> 33) % vocab);
  }
  return s;
}

TEST(Training, ResumingFromACheckpointEqualsAnUninterruptedRun) {
  const Fixture f("train-gpt2");
  TrainingOptions o = f.options();
  o.batch_size = 4;
  o.seq_len = 12;
  o.dropout = 0.2;   // the masks of the steps after the checkpoint must be the same too
  const auto stream = random_stream(500, f.config.vocab_size, 7);
  std::vector<std::int32_t> in, tg;
  Trainer straight(f.config, o);
  for (int s = 0; s < 6; ++s) {
    sample_batch(stream, o.batch_size, o.seq_len, o.seed, s, in, tg);
    straight.train_step(in, tg, o.batch_size, o.seq_len);
  }
  test::TempDir dir;
  {
    Trainer first(f.config, o);
    for (int s = 0; s < 3; ++s) {
      sample_batch(stream, o.batch_size, o.seq_len, o.seed, s, in, tg);
      first.train_step(in, tg, o.batch_size, o.seq_len);
    }
    first.save_checkpoint(dir.path() / "ckpt.safetensors", {{"note", "half way"}});
  }
  Trainer resumed = Trainer::from_checkpoint(dir.path() / "ckpt.safetensors");
  EXPECT_EQ(resumed.step(), 3);
  EXPECT_EQ(resumed.checkpoint_extra().at("note"), "half way");
  EXPECT_EQ(resumed.options().to_json(), o.to_json());
  for (int s = resumed.step(); s < 6; ++s) {
    sample_batch(stream, o.batch_size, o.seq_len, o.seed, s, in, tg);
    resumed.train_step(in, tg, o.batch_size, o.seq_len);
  }
  for (const auto& name : straight.parameter_names()) {
    const auto a = straight.parameter(name), b = resumed.parameter(name);
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size_bytes())) << name << " differs after resuming";
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "ckpt.safetensors.tmp"));
}

TEST(Training, LearnsToRepeatATinyText) {
  const std::string text = "the cat sat on the mat. the dog sat on the log. ";
  std::vector<std::int32_t> stream;
  for (int r = 0; r < 6; ++r)
    for (unsigned char ch : text) stream.push_back(ch);
  const ModelConfig config = ModelConfig::parse(
      R"({"model_type": "gpt2", "vocab_size": 256, "n_positions": 32, "n_embd": 32, "n_layer": 2, "n_head": 2})");
  TrainingOptions o;
  o.batch_size = 8;
  o.seq_len = 32;
  o.steps = 150;
  o.warmup_steps = 10;
  o.learning_rate = 1e-2;
  o.min_learning_rate = 1e-3;
  o.weight_decay = 0.0;
  Trainer trainer(config, o);
  std::vector<std::int32_t> in, tg;
  double first = 0, last = 0;
  for (int s = 0; s < o.steps; ++s) {
    sample_batch(stream, o.batch_size, o.seq_len, o.seed, s, in, tg);
    const double loss = trainer.train_step(in, tg, o.batch_size, o.seq_len).loss;
    if (s == 0) first = loss;
    last = loss;
  }
  EXPECT_NEAR(first, std::log(256.0), 0.3);   // GPT-2 init: nearly uniform
  // The text's own entropy, given 32 characters of context, is about 0.2 nats per character
  // (only "c"/"d", "s", "m"/"l" after "the " are open); memorising it gets close to that.
  EXPECT_LT(last, 0.45);
  const EvalResult all = trainer.evaluate_stream(stream, 32, 4);
  EXPECT_EQ(all.tokens, static_cast<std::int64_t>(stream.size()) - 1);
  EXPECT_LT(all.loss(), 0.6);
}

TEST(Training, MemoryBytesBoundsWhatARunHolds) {
  // Wide vocabulary, dropout, one shard, run on this thread: the allocator counts what this thread
  // allocates (a shard thread of its own would allocate in an arena of its own).
  const ModelConfig config = ModelConfig::parse(
      R"({"model_type": "gpt2", "vocab_size": 2000, "n_positions": 64, "n_embd": 64, "n_layer": 2, "n_head": 4})");
  TrainingOptions o;
  o.batch_size = 8;
  o.seq_len = 64;
  o.threads = 1;
  o.dropout = 0.1;
  std::vector<std::int32_t> stream(4096);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = std::int32_t((i * 7919) % 2000);
  const std::size_t before = test::heap_in_use();
  std::size_t most = 0;
  {
    Trainer trainer(config, o);
    std::vector<std::int32_t> in, tg;
    for (int s = 0; s < 2; ++s) {
      sample_batch(stream, o.batch_size, o.seq_len, o.seed, s, in, tg);
      trainer.train_step(in, tg, o.batch_size, o.seq_len);
      most = std::max(most, test::heap_in_use() - before);
    }
    const Model model = trainer.to_model();
    most = std::max(most, test::heap_in_use() - before);
  }
  const std::uint64_t estimate = Trainer::memory_bytes(config, o);
  EXPECT_GE(estimate, most) << "held " << most << " bytes";
  EXPECT_LE(estimate, 3 * most) << "held " << most << " bytes: the estimate is too loose to refuse by";
}

TEST(Training, LearningRateScheduleWarmsUpThenDecays) {
  TrainingOptions o;
  o.learning_rate = 1.0;
  o.min_learning_rate = 0.1;
  o.warmup_steps = 4;
  o.steps = 14;
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 0), 0.25);
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 3), 1.0);
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 4), 1.0);
  EXPECT_NEAR(learning_rate_at(o, 9), 0.55, 1e-12);   // half way through the decay
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 14), 0.1);
  EXPECT_DOUBLE_EQ(learning_rate_at(o, 100), 0.1);
}

TEST(Training, BatchesDependOnlyOnSeedAndStep) {
  const auto stream = random_stream(1000, 50, 3);
  std::vector<std::int32_t> a_in, a_tg, b_in, b_tg;
  sample_batch(stream, 4, 10, 5, 17, a_in, a_tg);
  sample_batch(stream, 4, 10, 5, 17, b_in, b_tg);
  EXPECT_EQ(a_in, b_in);
  sample_batch(stream, 4, 10, 5, 18, b_in, b_tg);
  EXPECT_NE(a_in, b_in);
  // Another seed draws other windows, not a shifted copy of this seed's (that once happened).
  std::vector<std::int32_t> big_a, big_b, t;
  sample_batch(stream, 64, 10, 5, 17, big_a, t);
  sample_batch(stream, 64, 10, 6, 17, big_b, t);
  int shared = 0;
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j)
      shared += std::equal(big_a.begin() + i * 10, big_a.begin() + i * 10 + 10, big_b.begin() + j * 10);
  EXPECT_LT(shared, 8);   // 64 x 64 pairs from ~990 offsets: ~4 by chance
  for (std::size_t i = 0; i + 1 < 10; ++i) EXPECT_EQ(a_tg[i], a_in[i + 1]);   // targets are the next tokens
  EXPECT_THROW(sample_batch(std::span(stream).first(10), 1, 10, 5, 0, a_in, a_tg), InvalidArgument);
}

TEST(Training, BadOptionsAndBatchesAreClearErrors) {
  const Fixture f("train-gpt2");
  auto rejects = [&](auto change, const std::string& words) {
    TrainingOptions o = f.options();
    change(o);
    try {
      Trainer t(f.config, o);
      ADD_FAILURE() << "accepted, expected an error about " << words;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  rejects([](TrainingOptions& o) { o.learning_rate = NAN; }, "learning rate");
  rejects([](TrainingOptions& o) { o.seq_len = 17; }, "sequence length");
  rejects([](TrainingOptions& o) { o.batch_size = 0; }, "batch size");
  rejects([](TrainingOptions& o) { o.beta2 = 1.0; }, "beta2");
  rejects([](TrainingOptions& o) { o.grad_clip = -1; }, "clip");
  rejects([](TrainingOptions& o) { o.threads = 0; }, "threads");
  rejects([](TrainingOptions& o) { o.dropout = 1.0; }, "dropout");

  Trainer t = f.trainer();
  std::vector<std::int32_t> in(6, 1), tg(6, 1);
  EXPECT_THROW(t.train_step(in, tg, 2, 4), InvalidArgument);   // 6 ids for 2 x 4
  tg[3] = 64;
  EXPECT_THROW(t.train_step(in, tg, 2, 3), InvalidArgument);   // id outside the vocabulary
  EXPECT_EQ(t.step(), 0);                                      // nothing happened
  EXPECT_THROW(t.set_parameter("h.9.ln_1.weight", std::vector<float>(16)), InvalidArgument);
  EXPECT_THROW(t.set_parameter("wte.weight", std::vector<float>(3)), InvalidArgument);
}

TEST(Training, DamagedOrForeignCheckpointsAreClearErrors) {
  const Fixture f("train-gpt2");
  test::TempDir dir;
  const auto file = dir.path() / "ckpt.safetensors";
  f.trainer().save_checkpoint(file);
  const std::string bytes = test::read_file(file);
  test::write_file(file, bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(Trainer::from_checkpoint(file), ModelFormatError);
  try {   // a model file is not a checkpoint
    Trainer::from_checkpoint(fixture_dir("train-gpt2") / "model.safetensors");
    ADD_FAILURE();
  } catch (const ModelFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("not a glassbox training checkpoint"), std::string::npos) << e.what();
  }
}

TEST(Training, SavesHalfPrecisionModelsThatLoad) {
  const Fixture f("train-gpt2");
  const Trainer trainer = f.trainer();
  for (DType dtype : {DType::F16, DType::BF16}) {
    test::TempDir dir;
    trainer.save_model(dir.path(), dtype);
    const SafeTensors st = SafeTensors::open(dir.path() / "model.safetensors");
    const TensorInfo* wte = st.find("wte.weight");
    ASSERT_TRUE(wte);
    EXPECT_EQ(wte->dtype, dtype);
    std::vector<float> back(wte->numel);
    to_f32(*wte, back.data());
    const auto ours = trainer.parameter("wte.weight");
    const double tol = dtype == DType::F16 ? 1.0 / 2048 : 1.0 / 256;   // half an ulp, relative
    for (std::size_t i = 0; i < back.size(); ++i)
      ASSERT_LE(std::abs(back[i] - ours[i]), tol * std::abs(ours[i]) + 1e-7);
    EXPECT_NO_THROW(Model::load(dir.path()));
  }
}

}   // namespace
}   // namespace glassbox
