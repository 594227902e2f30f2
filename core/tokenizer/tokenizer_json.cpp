// Making a Tokenizer from tokenizer.json, the Hugging Face tokenizers library's format: the model
// (BPE), the added tokens and the pipeline around them (pipeline.h). Each component type the
// library defines but this reader does not is an error naming the type, never a silent
// difference in ids.
#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "io/mapped_file.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/tokenizer_impl.h"

namespace glassbox {
namespace {

using nlohmann::json;

// object[key], or null where it has none, without copying it (a copy of a deeply nested value
// recurses once per level).
const json& field(const json& object, const char* key) {
  static const json kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// GPT-2's pattern as tokenizer.json files write it: the hand-written matcher runs it.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& problem) const { throw ModelFormatError(source_, problem); }

  const json& member(const json& object, const char* key, const std::string& where) const {
    auto it = object.find(key);
    if (it == object.end()) fail(where + " has no \"" + key + "\"");
    return *it;
  }
  bool flag(const json& object, const char* key, bool fallback, const std::string& where) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) fail(where + "'s \"" + key + "\" must be true or false");
    return it->get<bool>();
  }
  std::string type_of(const json& component, const std::string& where) const {
    if (!component.is_object()) fail(where + " must be an object or null");
    const json& type = member(component, "type", where);
    if (!type.is_string()) fail(where + "'s \"type\" must be a string");
    return type.get<std::string>();
  }
  [[noreturn]] void unsupported(const std::string& where, const std::string& type) const {
    fail(where + " type " + quote_text(type) + " is not supported");
  }

  void normalizer(const json& n, std::vector<NormalizerStep>& steps) const {
    if (n.is_null()) return;
    const std::string type = type_of(n, "normalizer");
    if (type == "NFC") {
      steps.push_back(NormalizerStep::Nfc);
    } else if (type == "Sequence") {
      const json& list = member(n, "normalizers", "normalizer Sequence");
      if (!list.is_array()) fail("normalizer Sequence's \"normalizers\" must be an array");
      for (const json& item : list) {
        const Nested nested(*this);
        normalizer(item, steps);
      }
    } else {
      unsupported("normalizer", type);
    }
  }

  SplitBehavior behavior(const json& b) const {
    static const std::pair<const char*, SplitBehavior> kNames[] = {
        {"Removed", SplitBehavior::Removed},
        {"Isolated", SplitBehavior::Isolated},
        {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext},
        {"Contiguous", SplitBehavior::Contiguous}};
    if (b.is_string())
      for (const auto& [name, value] : kNames)
        if (b.get<std::string>() == name) return value;
    fail("pre_tokenizer Split's \"behavior\" " + b.dump() + " is not one of the library's behaviors");
  }

  void pre_tokenizer(const json& p, std::vector<PreTokenizerStep>& steps, bool& byte_level) const {
    if (p.is_null()) return;
    const std::string type = type_of(p, "pre_tokenizer");
    PreTokenizerStep step{};
    if (type == "Sequence") {
      const json& list = member(p, "pretokenizers", "pre_tokenizer Sequence");
      if (!list.is_array()) fail("pre_tokenizer Sequence's \"pretokenizers\" must be an array");
      for (const json& item : list) {
        const Nested nested(*this);
        pre_tokenizer(item, steps, byte_level);
      }
      return;
    }
    if (type == "ByteLevel") {
      step.kind = PreTokenizerStep::Kind::ByteLevel;
      step.add_prefix_space = flag(p, "add_prefix_space", true, "pre_tokenizer ByteLevel");
      step.use_regex = flag(p, "use_regex", true, "pre_tokenizer ByteLevel");
      byte_level = true;
    } else if (type == "Split") {
      step.kind = PreTokenizerStep::Kind::Split;
      const json& pattern = member(p, "pattern", "pre_tokenizer Split");
      std::string regex;
      if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string()) {
        regex = pattern["Regex"].get<std::string>();
      } else if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string()) {
        // A literal: each ASCII character that is not a letter or digit escaped.
        for (char c : pattern["String"].get<std::string>()) {
          const auto u = static_cast<unsigned char>(c);
          if (u < 0x80 && !std::isalnum(u)) regex += '\\';
          regex += c;
        }
      } else {
        fail("pre_tokenizer Split's \"pattern\" must be {\"Regex\": ...} or {\"String\": ...}");
      }
      if (regex == kGpt2Pattern) {
        step.gpt2_pattern = true;
      } else if (regex == kLlama3Pattern || regex == kQwen2Pattern) {
        step.llama3_digits = regex == kLlama3Pattern ? 3 : 1;
      } else {
        try {
          step.regex = std::make_shared<const Regex>(regex);
        } catch (const RegexError& e) {
          fail(std::string("pre_tokenizer Split: ") + e.what());
        }
      }
      step.behavior = behavior(member(p, "behavior", "pre_tokenizer Split"));
      step.invert = flag(p, "invert", false, "pre_tokenizer Split");
    } else if (type == "Digits") {
      step.kind = PreTokenizerStep::Kind::Digits;
      step.individual_digits = flag(p, "individual_digits", false, "pre_tokenizer Digits");
    } else {
      unsupported("pre_tokenizer", type);
    }
    steps.push_back(std::move(step));
  }

  // TemplateProcessing's "single": the tokens before and after the text ($A).
  void post_processor(const json& p, const TokenMap& ids_by_content, Pipeline& pipeline) const {
    if (p.is_null()) return;
    const std::string type = type_of(p, "post_processor");
    if (type == "ByteLevel") return;   // only offsets: no ids
    if (type == "Sequence") {
      const json& list = member(p, "processors", "post_processor Sequence");
      if (!list.is_array()) fail("post_processor Sequence's \"processors\" must be an array");
      for (const json& item : list) {
        const Nested nested(*this);
        post_processor(item, ids_by_content, pipeline);
      }
      return;
    }
    if (type != "TemplateProcessing") unsupported("post_processor", type);
    if (!pipeline.prefix_ids.empty() || !pipeline.suffix_ids.empty())
      fail("post_processor has two TemplateProcessing steps");
    const json& single = member(p, "single", "post_processor TemplateProcessing");
    const json& specials = field(p, "special_tokens");
    if (!single.is_array()) fail("post_processor TemplateProcessing's \"single\" must be an array");
    bool seen_text = false;
    for (const json& item : single) {
      if (item.is_object() && item.contains("Sequence")) {
        if (item["Sequence"].value("id", "") != "A")
          fail("post_processor TemplateProcessing's \"single\" names a sequence other than $A");
        seen_text = true;
        continue;
      }
      if (!item.is_object() || !item.contains("SpecialToken") || !item["SpecialToken"].contains("id") ||
          !item["SpecialToken"]["id"].is_string())
        fail("post_processor TemplateProcessing's \"single\" has an item that is neither Sequence nor SpecialToken");
      const std::string name = item["SpecialToken"]["id"].get<std::string>();
      std::vector<std::int32_t>& into = seen_text ? pipeline.suffix_ids : pipeline.prefix_ids;
      if (specials.is_object() && specials.contains(name) && specials[name].is_object() &&
          specials[name].contains("ids") && specials[name]["ids"].is_array()) {
        for (const json& id : specials[name]["ids"]) {
          if (!id.is_number_integer()) fail("post_processor special token " + quote_text(name) + " has a bad id");
          into.push_back(id.get<std::int32_t>());
        }
      } else if (auto it = ids_by_content.find(name); it != ids_by_content.end()) {
        into.push_back(it->second);
      } else {
        fail("post_processor TemplateProcessing names the token " + quote_text(name) + ", which has no id");
      }
    }
  }

  void decoder(const json& d) const {
    if (d.is_null()) fail("has no decoder; a byte-level pipeline needs its ByteLevel decoder");
    const std::string type = type_of(d, "decoder");
    if (type == "ByteLevel") return;   // tokens are stored as their raw bytes already
    if (type == "Sequence") {
      const json& list = member(d, "decoders", "decoder Sequence");
      if (!list.is_array()) fail("decoder Sequence's \"decoders\" must be an array");
      for (const json& item : list) {
        const Nested nested(*this);
        decoder(item);
      }
      return;
    }
    unsupported("decoder", type);
  }

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

// "a b" (older files) or ["a", "b"] (newer ones).
std::pair<std::string, std::string> merge_pair(const json& m, std::size_t index, const Reader& reader) {
  if (m.is_string()) {
    const std::string& line = m.get_ref<const std::string&>();
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      reader.fail("model.merges[" + std::to_string(index) + "] " + quote_text(line) +
                  " is not two tokens separated by one space");
    return {line.substr(0, space), line.substr(space + 1)};
  }
  if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string())
    return {m[0].get<std::string>(), m[1].get<std::string>()};
  reader.fail("model.merges[" + std::to_string(index) + "] must be \"a b\" or [\"a\", \"b\"]");
}

// For BPE without ignore_merges: whether each token's own bytes merge back into it.
std::vector<bool> tokens_merging_to_themselves(std::size_t n, const TokenMap& ordinary,
                                               const std::array<std::int32_t, 256>& byte_id, const MergeTable& merges) {
  std::vector<bool> itself(n, false);
  std::vector<std::int32_t> symbols;
  for (const auto& [bytes, id] : ordinary) {
    symbols.clear();
    for (unsigned char b : bytes) symbols.push_back(byte_id[b]);
    if (bytes.size() < kLongPiece)
      bpe_merge_scan(symbols, merges);
    else
      bpe_merge_heap(symbols, merges);
    itself[id] = symbols.size() == 1 && symbols[0] == id;
  }
  return itself;
}

}   // namespace

Tokenizer Tokenizer::from_tokenizer_json(std::string_view text, const std::string& source) {
  const Reader reader(source);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    reader.fail(std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object()) reader.fail("must be a JSON object");

  auto impl = std::make_unique<Impl>();
  impl->pipeline = std::make_unique<Pipeline>();
  Pipeline& pipeline = *impl->pipeline;

  // The model.
  const json& model = reader.member(doc, "model", "the file");
  if (!model.is_object()) reader.fail("\"model\" must be an object");
  const std::string model_type = model.value("type", "BPE");   // older files leave out BPE's type
  if (model_type != "BPE") reader.fail("model type " + quote_text(model_type) + " is not supported");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() &&
        !(model[key].is_string() && model[key].get<std::string>().empty()))
      reader.fail(std::string("model.") + key + " is not supported yet (only byte-level BPE without it)");
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0 && model["dropout"] != 1)
    reader.fail("model.dropout is not supported (encoding would be random)");
  pipeline.ignore_merges = reader.flag(model, "ignore_merges", false, "model");

  const json& vocab = reader.member(model, "vocab", "model");
  if (!vocab.is_object() || vocab.empty()) reader.fail("model.vocab must be a non-empty object of token -> id");
  static const json kNoTokens = json::array();
  const json& added = doc.contains("added_tokens") ? doc["added_tokens"] : kNoTokens;
  if (!added.is_array()) reader.fail("\"added_tokens\" must be an array");

  // Ids: the model's vocabulary and the added tokens together make 0..n-1.
  std::int64_t max_id = -1;
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0)
      reader.fail("model.vocab token " + quote_text(token) + " has id " + id.dump() +
                  "; ids must be integers 0, 1, ...");
    max_id = std::max(max_id, id.get<std::int64_t>());
  }
  for (const json& t : added) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || t["id"].get<std::int64_t>() < 0 ||
        !t.contains("content") || !t["content"].is_string() || t["content"].get<std::string>().empty())
      reader.fail("added_tokens has an entry without a non-negative \"id\" and a non-empty \"content\": " +
                  t.dump().substr(0, 200));
    max_id = std::max(max_id, t["id"].get<std::int64_t>());
  }
  if (max_id >= INT32_MAX) reader.fail("has an id above 2^31");
  const auto n = static_cast<std::size_t>(max_id + 1);
  impl->bytes_of.resize(n);
  std::vector<bool> assigned(n, false);
  std::string bytes;
  // Added tokens may also be in model.vocab, written as their text rather than in byte-level
  // characters (GPT-NeoX's runs of spaces): BPE never makes those; they are the added token.
  std::unordered_map<std::int64_t, std::string> added_content;
  for (const json& t : added) added_content.emplace(t["id"].get<std::int64_t>(), t["content"].get<std::string>());
  for (const auto& [token, id_json] : vocab.items()) {
    const auto id = id_json.get<std::int32_t>();
    bytes.clear();
    if (!unicode_to_bytes(token, bytes)) {
      if (auto it = added_content.find(id); it != added_content.end() && it->second == token) continue;
      reader.fail("model.vocab token " + quote_text(token) +
                  " is not made of byte-level characters (only byte-level BPE is supported so far)");
    }
    if (assigned[id]) reader.fail("model.vocab gives id " + std::to_string(id) + " to two tokens");
    if (!impl->ordinary.emplace(bytes, id).second)
      reader.fail("model.vocab has the token " + quote_text(token) + " twice");
    assigned[id] = true;
    impl->bytes_of[id] = bytes;
  }
  TokenMap ids_by_content;   // added tokens' text, for the post-processor's names
  for (const json& t : added) {
    AddedToken token{t["content"].get<std::string>(),
                     t["id"].get<std::int32_t>(),
                     reader.flag(t, "special", false, "added token"),
                     reader.flag(t, "lstrip", false, "added token"),
                     reader.flag(t, "rstrip", false, "added token"),
                     reader.flag(t, "single_word", false, "added token"),
                     reader.flag(t, "normalized", false, "added token")};
    if (token.special) token.normalized = false;   // as the library: special tokens match the raw text
    impl->bytes_of[token.id] = token.content;
    assigned[token.id] = true;
    ids_by_content.emplace(token.content, token.id);
    if (token.special) impl->specials.emplace_back(token.content, token.id);
    pipeline.added_tokens.push_back(std::move(token));
  }
  for (std::size_t id = 0; id < n; ++id)
    if (!assigned[id])
      reader.fail("id " + std::to_string(id) + " has no token (ids must be 0.." + std::to_string(n - 1) + ")");
  for (int b = 0; b < 256; ++b) {
    auto it = impl->ordinary.find(std::string_view(std::string(1, static_cast<char>(b))));
    if (it == impl->ordinary.end())
      reader.fail("model.vocab has no token for the byte " + std::to_string(b) +
                  " (a byte-level vocabulary has all 256; byte_fallback vocabularies are not supported yet)");
    impl->byte_id[b] = it->second;
  }

  const json& merges = reader.member(model, "merges", "model");
  if (!merges.is_array()) reader.fail("model.merges must be an array");
  impl->merges.reserve(merges.size());
  std::string left, right;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    // (not a structured binding: Emscripten 3.1.6's clang 14 cannot capture one in a lambda)
    const auto pair = merge_pair(merges[i], i, reader);
    const std::string &a = pair.first, &b = pair.second;
    const auto where = [&] {
      return "model.merges[" + std::to_string(i) + "] (" + quote_text(a) + ", " + quote_text(b) + ")";
    };
    left.clear();
    right.clear();
    if (!unicode_to_bytes(a, left) || !unicode_to_bytes(b, right))
      reader.fail(where() + " has a character outside the byte-level alphabet");
    auto l = impl->ordinary.find(left), r = impl->ordinary.find(right);
    if (l == impl->ordinary.end()) reader.fail(where() + " names " + quote_text(a) + ", which is not in model.vocab");
    if (r == impl->ordinary.end()) reader.fail(where() + " names " + quote_text(b) + ", which is not in model.vocab");
    auto m = impl->ordinary.find(left + right);
    if (m == impl->ordinary.end())
      reader.fail(where() + " makes " + quote_text(a + b) + ", which is not in model.vocab");
    impl->merges.add_first(l->second, r->second, {static_cast<std::int32_t>(i), m->second});
  }

  // The pipeline.
  reader.normalizer(field(doc, "normalizer"), pipeline.normalizers);
  bool byte_level = false;
  reader.pre_tokenizer(field(doc, "pre_tokenizer"), pipeline.pre_tokenizers, byte_level);
  if (!byte_level) reader.fail("has no ByteLevel pre-tokenizer: only byte-level BPE pipelines are supported so far");
  reader.post_processor(field(doc, "post_processor"), ids_by_content, pipeline);
  reader.decoder(field(doc, "decoder"));

  if (!pipeline.ignore_merges)
    impl->merges_to_itself = tokens_merging_to_themselves(n, impl->ordinary, impl->byte_id, impl->merges);
  return Tokenizer(std::move(impl));
}

}   // namespace glassbox
