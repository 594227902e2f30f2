// Embind bindings: the C++ core as one JS class, `Engine`. wasm/glassbox.mjs wraps it in the
// promise-based API of shared/DESIGN.md; nothing here is meant to be called by users directly.
//
// Costs: weights are copied once, by JS, from the download into a malloc'ed heap block that the
// Engine then owns (F32 tensors are used in place). Arrays cross the boundary as typed-array copies,
// so nothing JS holds points into the heap (which moves when it grows).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdlib>
#include <malloc.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/model.h"
#include "glassbox/threads.h"
#include "glassbox/tokenizer.h"

namespace {

using emscripten::val;
using namespace glassbox;

// Runs f; a C++ exception becomes a JS Error carrying the library's message (a rejected promise
// once it reaches the async API).
template <typename F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    val::global("Error").new_(std::string(e.what())).throw_();
  }
}

std::vector<std::int32_t> ids_from_js(const val& array) {
  return emscripten::convertJSArrayToNumberVector<std::int32_t>(array);
}

template <typename T>
val typed_array_copy(const char* type, const T* data, std::size_t n) {
  return val::global(type).new_(val(emscripten::typed_memory_view(n, data)));
}

class Engine {
 public:
  // Takes ownership of `weights` (malloc'ed by JS), also when it throws. quantize: "none" or "int8".
  static Engine* create(const std::string& config_json, std::uintptr_t weights, std::size_t size,
                        const std::string& vocab_json, const std::string& merges_txt, const std::string& quantize) {
    std::shared_ptr<std::byte> owner(reinterpret_cast<std::byte*>(weights), std::free);
    return guarded([&] {
      const LoadOptions options{parse_quantization(quantize)};
      auto st = SafeTensors::parse(std::span<const std::byte>(owner.get(), size), "model.safetensors", owner);
      auto engine = std::make_unique<Engine>(Model::from_parts(config_json, st, "config.json", options));
      if (!vocab_json.empty()) engine->tokenizer_.emplace(Tokenizer::from_strings(vocab_json, merges_txt));
      return engine.release();
    });
  }
  explicit Engine(Model model) : model_(std::move(model)) {}

  std::string config_json() const { return model_.config_json(); }

  val tokenize(const std::string& text, bool allow_special) const {
    return guarded([&] {
      const auto ids = tokenizer().encode(text, allow_special);
      return typed_array_copy("Int32Array", ids.data(), ids.size());
    });
  }

  std::string detokenize(const val& ids) const {
    return guarded([&] { return tokenizer().decode(ids_from_js(ids)); });
  }

  // {logits: Float32Array(T*V), attention?: Float32Array(L*H*T*T)}
  // {logits?: (T,V) or, without all positions, nothing; attention?}. The page asks for attention
  // only: all T rows of logits would cost T x V x C multiply-adds it never looks at.
  // causal false: bidirectional attention with the same weights (ForwardOptions::causal).
  val forward(const val& ids_js, bool with_logits, bool with_attention, bool causal) const {
    return guarded([&] {
      const auto ids = ids_from_js(ids_js);
      std::vector<float> attention;
      TensorHook keep = [&](const NamedTensor& t) {
        if (std::string_view(t.name) == "attn_probs")
          attention.insert(attention.end(), t.data, t.data + std::size_t(t.shape[0]) * t.shape[1] * t.shape[2]);
      };
      KVCache cache = model_.new_cache();
      const auto logits = model_.forward(
          ids, cache, {.all_logits = with_logits, .hook = with_attention ? &keep : nullptr, .causal = causal});
      val out = val::object();
      if (with_logits) out.set("logits", typed_array_copy("Float32Array", logits.data(), logits.size()));
      if (with_attention) out.set("attention", typed_array_copy("Float32Array", attention.data(), attention.size()));
      return out;
    });
  }

  // [Float32Array(T_b*V), ...]: each sequence of the batch (a JS array of id arrays, checked by
  // engine.mjs) through Model::forward_batch, one pass for all of them.
  val forward_batch(const val& batch_js) const {
    return guarded([&] {
      std::vector<std::vector<std::int32_t>> batch;
      const unsigned n = batch_js["length"].as<unsigned>();
      for (unsigned b = 0; b < n; ++b) batch.push_back(ids_from_js(batch_js[b]));
      const auto logits = model_.forward_batch(batch);
      val out = val::array();
      for (const auto& l : logits) out.call<void>("push", typed_array_copy("Float32Array", l.data(), l.size()));
      return out;
    });
  }

  // Float32Array(n_labels): a classifier's logits over its labels at the last of the ids
  // (Model::classify); throws for a model without a classification head.
  val classify(const val& ids_js) const {
    return guarded([&] {
      const auto logits = model_.classify(ids_from_js(ids_js));
      return typed_array_copy("Float32Array", logits.data(), logits.size());
    });
  }

  // The ids classify() reads for a text, as `glassbox train --task classify` makes them
  // (Tokenizer::encode_for_classifier): its tokens, then <|endoftext|> if the vocabulary has it,
  // cut to the context.
  val classifier_ids(const std::string& text) const {
    return guarded([&] {
      const auto ids = tokenizer().encode_for_classifier(text, model_.config().n_positions);
      return typed_array_copy("Int32Array", ids.data(), ids.size());
    });
  }

  // What the parsed config says beyond config.json's own fields: {labels, bidirectional, maskTokenId}
  // (labels: id2label's names by id, or LABEL_0.. from num_labels; [] for a language model).
  val info() const {
    const ModelConfig& c = model_.config();
    val labels = val::array();
    for (const auto& name : c.labels) labels.call<void>("push", name);
    val out = val::object();
    out.set("labels", labels);
    out.set("bidirectional", c.bidirectional);
    out.set("maskTokenId", c.mask_token_id);
    return out;
  }

  // Starts a generation (replacing any unfinished one). Options as the JS API names them.
  void start(const val& prompt_ids, int max_tokens, double temperature, int top_k, double top_p, double seed,
             bool attention, int top, const std::string& context_full) {
    guarded([&] {
      generator_.reset();
      GenerateOptions o;
      o.max_tokens = max_tokens;
      o.sampling.temperature = static_cast<float>(temperature);
      o.sampling.top_k = top_k;
      o.sampling.top_p = static_cast<float>(top_p);
      o.sampling.seed = static_cast<std::uint64_t>(seed);
      o.attention = attention;
      o.context_full = parse_context_full(context_full);
      if (top < 0) throw InvalidArgument("top must be an integer >= 0, got " + std::to_string(top));
      top_ = top;
      prompt_ = ids_from_js(prompt_ids);
      generator_.emplace(model_, prompt_, o);
      if (tokenizer_) decoder_.emplace(*tokenizer_);
      return 0;
    });
  }

  // One token: {id, position, windowStart, text, attention?, top?}, or {done: true, stopReason, text} at the end
  // (text then holds what the decoder still held back).
  val next() {
    return guarded([&] {
      if (!generator_) throw InvalidArgument("no generation is running");
      val out = val::object();
      const auto token = generator_->next();
      if (!token) {
        out.set("done", true);
        out.set("stopReason", std::string(stop_reason_name(*generator_->stop_reason())));
        out.set("text", decoder_ ? decoder_->finish() : std::string());
        generator_.reset();
        return out;
      }
      out.set("id", token->id);
      out.set("position", token->position);
      out.set("windowStart", token->window_start);
      out.set("text", decoder_ ? decoder_->push(token->id) : std::string());
      if (!token->attention.empty())
        out.set("attention", typed_array_copy("Float32Array", token->attention.data(), token->attention.size()));
      if (top_ > 0) {   // [{id, probability}], most probable first
        val top = val::array();
        for (const TokenProbability& t : most_probable(token->logits, top_)) {
          val entry = val::object();
          entry.set("id", t.id);
          entry.set("probability", t.probability);
          top.call<void>("push", entry);
        }
        out.set("top", top);
      }
      return out;
    });
  }

 private:
  const Tokenizer& tokenizer() const {
    if (!tokenizer_) throw InvalidArgument("this model was loaded without vocab.json and merges.txt: no tokenizer");
    return *tokenizer_;
  }

  Model model_;
  std::optional<Tokenizer> tokenizer_;
  std::vector<std::int32_t> prompt_;
  int top_ = 0;   // most probable next tokens to report per step
  std::optional<Generator> generator_;   // refers to model_: declared after it
  std::optional<StreamingDecoder> decoder_;
};

// Bytes the allocator has handed out and not taken back: what a leak makes grow (tests watch it).
std::size_t heap_bytes_in_use() { return mallinfo().uordblks; }

}  // namespace

// Threads of the forward pass: 1 in the single-threaded module; engine.mjs sets the threaded
// module's count to its pool of Web Workers plus this thread.
void set_threads(int threads) {
  guarded([&] {
    set_num_threads(threads);
    return 0;
  });
}

EMSCRIPTEN_BINDINGS(glassbox) {
  emscripten::function("heapBytesInUse", &heap_bytes_in_use);
  emscripten::function("setThreads", &set_threads);
  emscripten::function("threads", &num_threads);
  emscripten::class_<Engine>("Engine")
      .class_function("create", &Engine::create, emscripten::allow_raw_pointers())
      .function("configJson", &Engine::config_json)
      .function("tokenize", &Engine::tokenize)
      .function("detokenize", &Engine::detokenize)
      .function("forward", &Engine::forward)
      .function("forwardBatch", &Engine::forward_batch)
      .function("classify", &Engine::classify)
      .function("classifierIds", &Engine::classifier_ids)
      .function("info", &Engine::info)
      .function("start", &Engine::start)
      .function("next", &Engine::next);
}
