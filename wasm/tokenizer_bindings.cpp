// Embind bindings of the tokenizer-only module (glassbox-tokenizer.mjs/.wasm, the package's
// "./tokenizer" entry, wasm/tokenizer.mjs): byte-level BPE (vocab.json + merges.txt or tokenizer.json) without the
// model, a module a fraction of the engine's size for pages that only count or show tokens.
#include <emscripten/bind.h>

#include "text_tokenizer.h"

EMSCRIPTEN_BINDINGS(glassbox_tokenizer) {
  using glassbox::js::TextTokenizer;
  emscripten::class_<TextTokenizer>("Tokenizer")
      .class_function("create", &TextTokenizer::create, emscripten::allow_raw_pointers())
      .class_function("fromJson", &TextTokenizer::from_json, emscripten::allow_raw_pointers())
      .function("tokenize", &TextTokenizer::tokenize)
      .function("detokenize", &TextTokenizer::detokenize)
      .function("vocabSize", &TextTokenizer::vocab_size);
}
