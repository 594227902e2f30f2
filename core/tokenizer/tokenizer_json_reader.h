// The checked reading of a tokenizer.json's parts: tokenizer_json.cpp reads the model and the
// added tokens, tokenizer_json_components.cpp the pipeline's components (normalizer,
// pre-tokenizer, post-processor, decoder). Every problem is a ModelFormatError naming the file.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "tokenizer/pipeline.h"
#include "tokenizer/tokenizer_impl.h"

namespace glassbox::tokenizer_json {

using nlohmann::json;

// object[key], or null where it has none, without copying it (a copy of a deeply nested value
// recurses once per level).
const json& field(const json& object, const char* key);

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& problem) const { throw ModelFormatError(source_, problem); }
  const json& member(const json& object, const char* key, const std::string& where) const;
  bool flag(const json& object, const char* key, bool fallback, const std::string& where) const;
  std::string type_of(const json& component, const std::string& where) const;
  // A type the library defines but this reader lacks "is not supported"; any other is unknown
  // (a typo, or a newer library's component).
  [[noreturn]] void unsupported(const std::string& where, const std::string& type) const;
  void normalizer(const json& n, std::vector<NormalizerStep>& steps) const;
  std::string text_field(const json& object, const char* key, const std::string& where) const;
  // {"String": s} (a literal) or {"Regex": r}, as Split and Replace write their pattern.
  void read_pattern(const json& p, const std::string& where, std::string& literal,
                    std::shared_ptr<const Regex>& regex) const;
  // Metaspace's prepend_scheme, or older files' add_prefix_space (true: "always").
  std::string prepend_scheme(const json& m, const std::string& where) const;
  SplitBehavior behavior(const json& b, const std::string& where = "pre_tokenizer Split") const;
  void pre_tokenizer(const json& p, std::vector<PreTokenizerStep>& steps, bool& byte_level) const;
  // TemplateProcessing's "single": the tokens before and after the text ($A).
  void post_processor(const json& p, const TokenMap& ids_by_content, Pipeline& pipeline) const;
  void decoder(const json& d, std::vector<DecoderStep>& steps) const;

 private:
  // Sequences inside Sequences: each level is a call, so a hostile file's nesting is bounded.
  struct Nested {
    explicit Nested(const Reader& r) : reader(r) {
      if (++reader.depth_ > 16) reader.fail("nests Sequence components more than 16 deep");
    }
    ~Nested() { --reader.depth_; }
    const Reader& reader;
  };

  std::string source_;
  mutable int depth_ = 0;
};

}   // namespace glassbox::tokenizer_json
