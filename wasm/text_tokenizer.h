// The tokenizer alone, bound for JS (the engine module's `Tokenizer`, and the whole of the
// tokenizer-only module).
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "glassbox/tokenizer.h"
#include "js_glue.h"

namespace glassbox::js {

// The tokenizer alone, from vocab.json and merges.txt or from tokenizer.json: a page can show its
// prompt's tokens while the weights still download (engine.mjs, LocalTokenizer).
class TextTokenizer {
 public:
  static TextTokenizer* create(const std::string& vocab, const std::string& merges) {
    return guarded([&] { return new TextTokenizer(Tokenizer::from_strings(vocab, merges)); });
  }
  static TextTokenizer* from_json(const std::string& tokenizer_json) {
    return guarded([&] { return new TextTokenizer(Tokenizer::from_tokenizer_json(tokenizer_json)); });
  }
  explicit TextTokenizer(Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // allow_special: special tokens written in the text are matched; add_special: the
  // post-processor's tokens (BOS...) are added (Tokenizer::encode).
  val tokenize(const std::string& text, bool allow_special, bool add_special) const {
    return guarded([&] {
      const auto ids = live().encode(text, allow_special, add_special);
      return typed_array_copy("Int32Array", ids.data(), ids.size());
    });
  }

  val detokenize(const val& ids) const {
    return guarded([&] { return js_text(live().decode(ids_from_js(ids))); });
  }

  int vocab_size() const {
    return guarded([&] { return live().vocab_size(); });
  }

  // The tokenizer, moved into the model made of the same files (Loading::finish): building it
  // again would cost as much as the first time, on the way to the model being ready.
  Tokenizer take() {
    Tokenizer t = std::move(live());
    tokenizer_.reset();
    return t;
  }

 private:
  const Tokenizer& live() const {
    if (!tokenizer_) throw Error("this tokenizer was handed over to its model");
    return *tokenizer_;
  }
  Tokenizer& live() { return const_cast<Tokenizer&>(std::as_const(*this).live()); }

  std::optional<Tokenizer> tokenizer_;
};

}   // namespace glassbox::js
