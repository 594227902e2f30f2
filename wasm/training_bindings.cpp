// Embind class `Training`: a GPT trained inside the module from texts, prepared as `glassbox
// train` prepares files (glassbox/training_text.h: the held-out end, the vocabulary learned from
// the rest, the texts joined by <|endoftext|>; the batches of sample_batch): with the same settings
// it computes the same losses as the native CLI, bit for bit. training.mjs (LocalTraining) calls step()
// once per step, evaluate() when the held-out loss is due, and files() for the result, which it
// loads into the engine's module as any model. This is the training module's own class (the
// trainer is a module apart from the engine: wasm/CMakeLists.txt), so nothing here makes an Engine.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/config.h"
#include "glassbox/error.h"
#include "glassbox/tokenizer.h"
#include "glassbox/tokenizer_trainer.h"
#include "glassbox/trainer.h"
#include "glassbox/training_text.h"
#include "js_glue.h"

namespace {

using emscripten::val;
using namespace glassbox;
using namespace glassbox::js;

class Training {
 public:
  // texts: an array of strings. options: engine.mjs's, every field present: {vocabSize,
  // tokenizer ({vocab, merges} strings, or null to learn one of vocabSize tokens), nLayer, nEmbd,
  // nHead, nPositions, seqLen, batchSize, steps, learningRate, minLearningRate, warmup,
  // weightDecay, gradClip, dropout, seed, threads, validFraction}.
  static Training* create(const val& texts, const val& options) {
    return guarded([&] { return new Training(texts, options); });
  }

  // One optimisation step: {step (done so far), loss, learningRate, gradNorm, tokens (trained on so far)}.
  val step() {
    return guarded([&] {
      const TrainingOptions& o = trainer_->options();
      const int s = trainer_->step();
      if (s >= o.steps) throw InvalidArgument("the training is done: it has run its " + std::to_string(o.steps) + " steps");
      sample_batch(train_, o.batch_size, o.seq_len, o.seed, s, inputs_, targets_);
      const StepResult r = trainer_->train_step(inputs_, targets_, o.batch_size, o.seq_len);
      if (!std::isfinite(r.loss))
        throw Error("the loss became " + std::to_string(r.loss) + " at step " + std::to_string(s + 1) +
                    "; try a lower learningRate (the run has ended)");
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
      const EvalResult r = trainer_->evaluate_stream(valid_, o.seq_len, o.batch_size, static_cast<std::int64_t>(max_tokens));
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
      out.set("weights", typed_array_copy("Uint8Array", reinterpret_cast<const std::uint8_t*>(weights.data()), weights.size()));
      out.set("vocab", files_.vocab_json);
      out.set("merges", files_.merges_txt);
      return out;
    });
  }

 private:
  Training(const val& texts, const val& o) {
    std::vector<TrainingDocument> docs;
    std::size_t bytes = 0;
    const unsigned n = texts["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      docs.push_back({"texts[" + std::to_string(i) + "]", texts[i].as<std::string>()});
      bytes += docs.back().text.size();
    }
    if (bytes == 0) throw InvalidArgument("the training text is empty: give at least one non-empty text");
    const double valid_fraction = o["validFraction"].as<double>();
    if (!(valid_fraction >= 0 && valid_fraction < 1))
      throw InvalidArgument("validFraction must be at least 0 and less than 1, got " + std::to_string(valid_fraction));
    std::vector<TrainingDocument> valid;
    if (valid_fraction > 0) valid.push_back(hold_out(docs, valid_fraction));

    TrainingOptions options;
    options.batch_size = o["batchSize"].as<int>();
    options.seq_len = o["seqLen"].as<int>();
    options.steps = o["steps"].as<int>();
    options.learning_rate = o["learningRate"].as<double>();
    options.min_learning_rate = o["minLearningRate"].as<double>();
    options.warmup_steps = o["warmup"].as<int>();
    options.weight_decay = o["weightDecay"].as<double>();
    options.grad_clip = o["gradClip"].as<double>();
    options.dropout = o["dropout"].as<double>();
    options.seed = static_cast<std::uint64_t>(o["seed"].as<double>());
    options.threads = o["threads"].as<int>();

    // The shape, and whether training it fits in the heap, before the vocabulary is learned: with
    // vocabSize (the learned vocabulary is at most that), or the given tokenizer's.
    const val given = o["tokenizer"];
    std::optional<Tokenizer> tokenizer;
    if (!given.isNull() && !given.isUndefined()) {
      files_.vocab_json = given["vocab"].as<std::string>();
      files_.merges_txt = given["merges"].as<std::string>();
      tokenizer.emplace(Tokenizer::from_strings(files_.vocab_json, files_.merges_txt));
    }
    ModelConfig config = shape(o, tokenizer ? tokenizer->vocab_size() : o["vocabSize"].as<int>());
    options.validate(config);
    check_fits(Trainer::memory_bytes(config, options));

    if (!tokenizer) {   // learned from the training part alone (never the held-out text)
      std::string text;
      for (const auto& d : docs) text += d.text;
      TokenizerTrainingOptions t;
      t.vocab_size = o["vocabSize"].as<int>();
      files_ = train_tokenizer(text, t);
      tokenizer.emplace(Tokenizer::from_strings(files_.vocab_json, files_.merges_txt));
      config = shape(o, tokenizer->vocab_size());
    }
    if (auto eot = tokenizer->special_token("<|endoftext|>")) config.eos_token_ids = {*eot};
    train_ = encode_documents(*tokenizer, docs);
    valid_ = encode_documents(*tokenizer, valid);
    if (train_.size() < static_cast<std::size_t>(options.seq_len) + 1)
      throw InvalidArgument("the training text is " + std::to_string(train_.size()) + " tokens, too few for sequences of " +
                            std::to_string(options.seq_len) + " (give more text or a smaller seqLen)");
    trainer_.emplace(config, options);
  }

  // A GPT-2 of the options' shape, as `glassbox train` makes it (gelu_new, learned positions).
  static ModelConfig shape(const val& o, int vocab_size) {
    const std::string json = "{\"model_type\": \"gpt2\", \"activation_function\": \"gelu_new\", \"vocab_size\": " +
                             std::to_string(vocab_size) +
                             ", \"n_positions\": " + std::to_string(o["nPositions"].as<int>()) +
                             ", \"n_embd\": " + std::to_string(o["nEmbd"].as<int>()) +
                             ", \"n_layer\": " + std::to_string(o["nLayer"].as<int>()) +
                             ", \"n_head\": " + std::to_string(o["nHead"].as<int>()) + "}";
    try {
      return ModelConfig::parse(json, "the model shape options");
    } catch (const ModelFormatError& e) {   // a shape the caller chose, not a damaged file
      throw InvalidArgument(e.what());
    }
  }

  // Refuses a run the heap cannot hold (4 GB at most, less what is in use), before any of it is made.
  static void check_fits(std::uint64_t needed) {
    const std::uint64_t in_use = mallinfo().uordblks;
    const std::uint64_t limit = emscripten_get_heap_max();
    const std::uint64_t left = limit > in_use ? limit - in_use : 0;
    if (needed > left)
      throw InvalidArgument("training this model needs about " + std::to_string(needed >> 20) + " MB, more than the " +
                            std::to_string(left >> 20) + " MB this WebAssembly heap can still give (" +
                            std::to_string(limit >> 20) + " MB at most): make it smaller (nLayer, nEmbd, vocabSize, "
                            "batchSize, seqLen)");
  }

  TokenizerFiles files_;
  std::vector<std::int32_t> train_, valid_, inputs_, targets_;
  std::optional<Trainer> trainer_;
};

}  // namespace

EMSCRIPTEN_BINDINGS(glassbox_training) {
  emscripten::class_<Training>("Training")
      .class_function("create", &Training::create, emscripten::allow_raw_pointers())
      .function("step", &Training::step)
      .function("evaluate", &Training::evaluate)
      .function("stepsDone", &Training::steps_done)
      .function("files", &Training::files);
}
