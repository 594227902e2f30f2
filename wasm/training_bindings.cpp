// Embind class `Training`: a GPT trained inside the module from texts, set up as `glassbox train`
// sets up files (glassbox/training_setup.h: the settings' defaults, the held-out end, the
// vocabulary learned from the rest, the texts joined by <|endoftext|>; the batches of
// sample_batch): with the same settings it computes the same losses as the native CLI, bit for
// bit. training.mjs (LocalTraining) calls step() once per step, evaluate() when the held-out loss
// is due, and files() for the result, which it loads into the engine's module as any model. This
// is the training module's own class (the trainer is a module apart from the engine:
// wasm/CMakeLists.txt), so nothing here makes an Engine.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "glassbox/trainer.h"
#include "glassbox/training_setup.h"
#include "js_glue.h"

namespace {

using emscripten::val;
using namespace glassbox;
using namespace glassbox::js;

// Calls f(name, field) for each of train()'s options but tokenizer: its name in JavaScript and its
// field of TrainingSettings, which holds the defaults (glassbox/training_setup.h).
template <class Settings, class F>
void each_option(Settings& s, F&& f) {
  f("vocabSize", s.vocab_size);
  f("nLayer", s.n_layer);
  f("nEmbd", s.n_embd);
  f("nHead", s.n_head);
  f("nPositions", s.n_positions);
  f("seqLen", s.options.seq_len);
  f("batchSize", s.options.batch_size);
  f("steps", s.options.steps);
  f("learningRate", s.options.learning_rate);
  f("minLearningRate", s.options.min_learning_rate);
  f("warmup", s.options.warmup_steps);
  f("weightDecay", s.options.weight_decay);
  f("gradClip", s.options.grad_clip);
  f("dropout", s.options.dropout);
  f("seed", s.options.seed);
  f("threads", s.options.threads);
  f("validFraction", s.valid_fraction);
  f("evalEvery", s.eval_every);
  f("evalTokens", s.eval_tokens);
}

class Training {
 public:
  // texts: an array of strings. options: training.mjs's, checked for type; a field left out takes
  // its default: {vocabSize, tokenizer ({vocab, merges} strings, or null to learn one of vocabSize
  // tokens), nLayer, nEmbd, nHead, nPositions, seqLen, batchSize, steps, learningRate,
  // minLearningRate, warmup, weightDecay, gradClip, dropout, seed, threads, validFraction,
  // evalEvery, evalTokens}.
  static Training* create(const val& texts, const val& options) {
    return guarded([&] { return new Training(texts, options); });
  }

  // The run's settings, every field (those options left out with their defaults), tokenizer aside.
  val settings() const {
    val out = val::object();
    each_option(settings_, [&](const char* name, const auto& field) { out.set(name, static_cast<double>(field)); });
    return out;
  }

  // One optimisation step: {step (done so far), loss, learningRate, gradNorm, tokens (trained on so far)}.
  val step() {
    return guarded([&] {
      const TrainingOptions& o = trainer_->options();
      const int s = trainer_->step();
      if (s >= o.steps)
        throw InvalidArgument("the training is done: it has run its " + std::to_string(o.steps) + " steps");
      sample_batch(train_, o.batch_size, o.seq_len, o.seed, s, inputs_, targets_);
      const StepResult r = trainer_->train_step(inputs_, targets_, o.batch_size, o.seq_len);
      // Settings that diverge (most often a learning rate too high) are the caller's to change.
      if (!std::isfinite(r.loss))
        throw InvalidArgument(std::string("the loss became ") + (std::isnan(r.loss) ? "NaN" : "infinite") +
                              " at step " + std::to_string(s + 1) + "; try a lower learningRate (the run has ended)");
      val out = val::object();
      out.set("step", s + 1);
      out.set("loss", r.loss);
      out.set("learningRate", r.learning_rate);
      out.set("gradNorm", r.grad_norm);
      out.set("tokens", double(s + 1) * o.batch_size * o.seq_len);
      return out;
    });
  }

  // The loss per token of the held-out text under the current parameters, over at most maxTokens
  // predictions (0: all): {validLoss, validTokens}; null without held-out text.
  val evaluate(double max_tokens) const {
    return guarded([&] {
      if (valid_.size() < 2) return val::null();
      const TrainingOptions& o = trainer_->options();
      const EvalResult r =
          trainer_->evaluate_stream(valid_, o.seq_len, o.batch_size, static_cast<std::int64_t>(max_tokens));
      val out = val::object();
      out.set("validLoss", r.loss());
      out.set("validTokens", static_cast<double>(r.tokens));
      return out;
    });
  }

  int steps_done() const { return trainer_->step(); }

  // The Hugging Face layout's four files: {config, vocab, merges} strings, weights a Uint8Array
  // (model.safetensors, F32).
  val files() const {
    return guarded([&] {
      const std::string weights = trainer_->model_file(DType::F32);
      val out = val::object();
      out.set("config", trainer_->config().to_json());
      out.set("weights",
              typed_array_copy("Uint8Array", reinterpret_cast<const std::uint8_t*>(weights.data()), weights.size()));
      out.set("vocab", files_.vocab_json);
      out.set("merges", files_.merges_txt);
      return out;
    });
  }

 private:
  Training(const val& texts, const val& o) {
    TrainingInputs inputs;
    std::size_t bytes = 0;
    const unsigned n = texts["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      inputs.train.push_back({"texts[" + std::to_string(i) + "]", texts[i].as<std::string>()});
      bytes += inputs.train.back().text.size();
    }
    if (bytes == 0) throw InvalidArgument("the training text is empty: give at least one non-empty text");
    // JavaScript numbers, integers among them (training.mjs has checked which), as the fields' types
    each_option(settings_, [&](const char* name, auto& field) {
      const val given = o[name];
      if (!given.isUndefined()) field = static_cast<std::remove_reference_t<decltype(field)>>(given.as<double>());
    });
    if (!(settings_.valid_fraction >= 0 && settings_.valid_fraction < 1))
      throw InvalidArgument("validFraction must be at least 0 and less than 1, got " +
                            std::to_string(settings_.valid_fraction));
    const val given = o["tokenizer"];
    if (!given.isNull() && !given.isUndefined()) {
      inputs.tokenizer.emplace();
      inputs.tokenizer->vocab_json = given["vocab"].as<std::string>();
      inputs.tokenizer->merges_txt = given["merges"].as<std::string>();
    }
    // Whether training it fits in the heap, before the vocabulary is learned.
    inputs.checked = [](const ModelConfig& config, const TrainingOptions& options) {
      check_fits(Trainer::memory_bytes(config, options));
    };
    TrainingSetup setup = set_up_training(std::move(inputs), settings_);
    const int seq_len = setup.options.seq_len;
    if (setup.train.size() < static_cast<std::size_t>(seq_len) + 1)
      throw InvalidArgument("the training text is " + std::to_string(setup.train.size()) +
                            " tokens, too few for sequences of " + std::to_string(seq_len) +
                            " (give more text or a smaller seqLen)");
    files_ = std::move(setup.tokenizer_files);
    train_ = std::move(setup.train);
    valid_ = std::move(setup.valid);
    trainer_.emplace(setup.config, setup.options);
  }

  // Refuses a run the heap cannot hold (4 GB at most, less what is in use), before any of it is made.
  static void check_fits(std::uint64_t needed) {
    const std::uint64_t in_use = mallinfo().uordblks;
    const std::uint64_t limit = emscripten_get_heap_max();
    const std::uint64_t left = limit > in_use ? limit - in_use : 0;
    if (needed > left)
      throw InvalidArgument("training this model needs about " + std::to_string(needed >> 20) + " MB, more than the " +
                            std::to_string(left >> 20) + " MB this WebAssembly heap can still give (" +
                            std::to_string(limit >> 20) +
                            " MB at most): make it smaller (nLayer, nEmbd, vocabSize, "
                            "batchSize, seqLen)");
  }

  TrainingSettings settings_;
  TokenizerFiles files_;
  std::vector<std::int32_t> train_, valid_, inputs_, targets_;
  std::optional<Trainer> trainer_;
};

}   // namespace

EMSCRIPTEN_BINDINGS(glassbox_training) {
  emscripten::class_<Training>("Training")
      .class_function("create", &Training::create, emscripten::allow_raw_pointers())
      .function("step", &Training::step)
      .function("evaluate", &Training::evaluate)
      .function("settings", &Training::settings)
      .function("stepsDone", &Training::steps_done)
      .function("files", &Training::files);
}
