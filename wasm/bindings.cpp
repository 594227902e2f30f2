// Embind bindings: the C++ core as one JS class, `Engine`. wasm/glassbox.mjs wraps it in the
// promise-based API of docs/js-api.md; nothing here is meant to be called by users directly.
// (module_bindings.cpp adds heapBytesInUse, setThreads and threads.)
//
// Costs: weights stream into the heap as they are read (ModelLoader: JS writes each piece into the
// loader's window, where it is converted; the file is never held whole). Arrays cross the boundary
// as typed-array copies, so nothing JS holds points into the heap (which moves when it grows), but
// for the loader's window, written at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "glassbox/error.h"
#include "glassbox/generate.h"
#include "glassbox/generation_config.h"
#include "glassbox/model.h"
#include "glassbox/model_loader.h"
#include "glassbox/tokenizer.h"
#include "engine_binding.h"
#include "js_glue.h"
#include "text_tokenizer.h"

namespace {

using emscripten::val;
using namespace glassbox;
using namespace glassbox::js;

}   // namespace

// A model on its way in: the bytes of model.safetensors are written into window() and committed,
// and finish() makes the Engine (glassbox/model_loader.h). delete() cancels, freeing everything.
class Loading {
 public:
  // header: a Uint8Array of the file's first bytes through the end of its header; options:
  // {quantize: "none" | "int8" | "int4", sha256: boolean, context: number (0: the default)}.
  static Loading* create(const std::string& config_json, const val& header, const val& options) {
    return guarded([&] {
      const auto bytes = emscripten::convertJSArrayToNumberVector<std::uint8_t>(header);
      return new Loading(ModelLoader(config_json, std::as_bytes(std::span(bytes)),
                                     {.quantize = parse_quantization(options["quantize"].as<std::string>()),
                                      .context = options["context"].as<int>()},
                                     options["sha256"].as<bool>()));
    });
  }
  explicit Loading(ModelLoader loader) : loader_(std::move(loader)) {}

  double size() const { return static_cast<double>(loader_.size()); }
  double received() const { return static_cast<double>(loader_.received()); }
  // A Uint8Array over the heap where the next bytes go: to be written before anything else runs
  // (it is detached when the heap grows). Empty once the whole file is in.
  val window() {
    return guarded([&] {
      const auto w = loader_.window();
      return val(emscripten::typed_memory_view(w.size(), reinterpret_cast<std::uint8_t*>(w.data())));
    });
  }
  void commit(double n) {
    guarded([&] { loader_.commit(static_cast<std::size_t>(n)); });
  }
  std::string sha256() const {
    return guarded([&] { return loader_.sha256_hex(); });
  }
  // The engine, with the defaults of files.generationConfig (generation_config.json's text), and
  // the tokenizer of files.tokenizerJson (tokenizer.json's text) when given,
  // else of files {vocab, merges} (strings, parsed whatever they hold, an empty one included; all
  // null: ids only), or files.tokenizer's when given (a Tokenizer made of the same files, which it
  // takes over).
  Engine* finish(const val& files) {
    return guarded([&] {
      auto engine = std::make_unique<Engine>(loader_.finish());
      const val early = files["tokenizer"];
      const val json = files["tokenizerJson"];
      const val vocab = files["vocab"];
      if (!early.isUndefined() && !early.isNull())
        engine->set_tokenizer(early.as<TextTokenizer*>(emscripten::allow_raw_pointers())->take());
      else if (!json.isNull() && !json.isUndefined())
        engine->set_tokenizer(Tokenizer::from_tokenizer_json(json.as<std::string>()));
      else if (!vocab.isNull() && !vocab.isUndefined())
        engine->set_tokenizer(Tokenizer::from_strings(vocab.as<std::string>(), files["merges"].as<std::string>()));
      if (const val g = files["generationConfig"]; !g.isNull() && !g.isUndefined())
        engine->set_generation_config(GenerationConfig::parse(g.as<std::string>()));
      return engine.release();
    });
  }

 private:
  ModelLoader loader_;
};

EMSCRIPTEN_BINDINGS(glassbox) {
  emscripten::class_<Engine>("Engine")
      .class_function("loadMemory", &Engine::load_memory)
      .class_function("cacheMemory", &Engine::cache_memory)
      .class_function("shape", &Engine::shape)
      .function("tokenize", &Engine::tokenize)
      .function("detokenize", &Engine::detokenize)
      .function("forward", &Engine::forward)
      .function("forwardBatch", &Engine::forward_batch)
      .function("classifierIds", &Engine::classifier_ids)
      .function("info", &Engine::info)
      .function("start", &Engine::start)
      .function("next", &Engine::next)
      .function("stop", &Engine::stop)
      .function("patchStart", &Engine::patch_start)
      .function("patchStep", &Engine::patch_step)
      .function("patchResult", &Engine::patch_result)
      .function("patchStop", &Engine::patch_stop)
      .function("attribute", &Engine::attribute);
  emscripten::class_<Loading>("Loading")
      .class_function("create", &Loading::create, emscripten::allow_raw_pointers())
      .function("size", &Loading::size)
      .function("received", &Loading::received)
      .function("window", &Loading::window)
      .function("commit", &Loading::commit)
      .function("sha256", &Loading::sha256)
      .function("finish", &Loading::finish, emscripten::allow_raw_pointers());
  emscripten::class_<TextTokenizer>("Tokenizer")
      .class_function("create", &TextTokenizer::create, emscripten::allow_raw_pointers())
      .class_function("fromJson", &TextTokenizer::from_json, emscripten::allow_raw_pointers())
      .function("tokenize", &TextTokenizer::tokenize)
      .function("detokenize", &TextTokenizer::detokenize);
}
