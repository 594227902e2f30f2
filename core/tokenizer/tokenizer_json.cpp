// Making a Tokenizer from tokenizer.json, the Hugging Face tokenizers library's format: the model
// (BPE), the added tokens and the pipeline around them (pipeline.h). Each component type the
// library defines but this reader does not is an error naming the type, never a silent
// difference in ids.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "io/mapped_file.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/decoder.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

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
  // A type the library defines but this reader lacks "is not supported"; any other is unknown
  // (a typo, or a newer library's component).
  [[noreturn]] void unsupported(const std::string& where, const std::string& type) const {
    static const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> kLibraryTypes = {
        {"normalizer",
         {"BertNormalizer", "Strip", "StripAccents", "NFC", "NFD", "NFKC", "NFKD", "Sequence", "Lowercase", "Nmt",
          "Precompiled", "Replace", "Prepend", "ByteLevel"}},
        {"pre_tokenizer",
         {"BertPreTokenizer", "ByteLevel", "CharDelimiterSplit", "Metaspace", "Whitespace", "Sequence", "Split",
          "Punctuation", "WhitespaceSplit", "Digits", "UnicodeScripts", "FixedLength"}},
        {"model", {"BPE", "WordPiece", "WordLevel", "Unigram"}},
        {"post_processor", {"RobertaProcessing", "BertProcessing", "ByteLevel", "TemplateProcessing", "Sequence"}},
        {"decoder",
         {"BPEDecoder", "ByteLevel", "WordPiece", "Metaspace", "CTC", "Sequence", "Replace", "Fuse", "Strip",
          "ByteFallback"}}};
    for (const auto& [component, types] : kLibraryTypes)
      if (component == where && std::find(types.begin(), types.end(), type) != types.end())
        fail(where + " type " + quote_text(type) + " is not supported");
    fail("unknown " + where + " type " + quote_text(type));
  }

  void normalizer(const json& n, std::vector<NormalizerStep>& steps) const {
    if (n.is_null()) return;
    const std::string type = type_of(n, "normalizer");
    static const std::pair<const char*, NormalizerStep::Kind> kPlain[] = {
        {"NFC", NormalizerStep::Kind::Nfc},
        {"NFD", NormalizerStep::Kind::Nfd},
        {"NFKC", NormalizerStep::Kind::Nfkc},
        {"NFKD", NormalizerStep::Kind::Nfkd},
        {"Lowercase", NormalizerStep::Kind::Lowercase}};
    for (const auto& [name, kind] : kPlain)
      if (type == name) {
        steps.push_back({kind, "", "", nullptr});
        return;
      }
    if (type == "Strip") {
      NormalizerStep step{NormalizerStep::Kind::Strip, "", "", nullptr};
      step.strip_left = flag(n, "strip_left", true, "normalizer Strip");
      step.strip_right = flag(n, "strip_right", true, "normalizer Strip");
      steps.push_back(std::move(step));
    } else if (type == "Prepend") {
      steps.push_back({NormalizerStep::Kind::Prepend, text_field(n, "prepend", "normalizer Prepend"), "", nullptr});
    } else if (type == "Replace") {
      NormalizerStep step{NormalizerStep::Kind::Replace, text_field(n, "content", "normalizer Replace"), "", nullptr};
      read_pattern(member(n, "pattern", "normalizer Replace"), "normalizer Replace", step.literal, step.regex);
      steps.push_back(std::move(step));
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

  std::string text_field(const json& object, const char* key, const std::string& where) const {
    const json& value = member(object, key, where);
    if (!value.is_string()) fail(where + "'s \"" + key + "\" must be a string");
    return value.get<std::string>();
  }

  // {"String": s} (a literal) or {"Regex": r}, as Split and Replace write their pattern.
  void read_pattern(const json& p, const std::string& where, std::string& literal,
                    std::shared_ptr<const Regex>& regex) const {
    if (p.is_object() && p.contains("String") && p["String"].is_string()) {
      literal = p["String"].get<std::string>();
      if (literal.empty()) fail(where + "'s pattern is the empty string");
      return;
    }
    if (p.is_object() && p.contains("Regex") && p["Regex"].is_string()) {
      try {
        regex = std::make_shared<const Regex>(p["Regex"].get<std::string>());
      } catch (const RegexError& e) {
        fail(where + ": " + e.what());
      }
      return;
    }
    fail(where + "'s \"pattern\" must be {\"Regex\": ...} or {\"String\": ...}");
  }

  // Metaspace's prepend_scheme, or older files' add_prefix_space (true: "always").
  std::string prepend_scheme(const json& m, const std::string& where) const {
    if (m.contains("prepend_scheme")) {
      const std::string scheme = text_field(m, "prepend_scheme", where);
      if (scheme != "first" && scheme != "always" && scheme != "never")
        fail(where + "'s \"prepend_scheme\" " + quote_text(scheme) + " is not first, always or never");
      return scheme;
    }
    return flag(m, "add_prefix_space", true, where) ? "always" : "never";
  }

  SplitBehavior behavior(const json& b, const std::string& where = "pre_tokenizer Split") const {
    static const std::pair<const char*, SplitBehavior> kNames[] = {
        {"Removed", SplitBehavior::Removed},
        {"Isolated", SplitBehavior::Isolated},
        {"MergedWithPrevious", SplitBehavior::MergedWithPrevious},
        {"MergedWithNext", SplitBehavior::MergedWithNext},
        {"Contiguous", SplitBehavior::Contiguous}};
    if (b.is_string())
      for (const auto& [name, value] : kNames)
        if (b.get<std::string>() == name) return value;
    fail(where + "'s \"behavior\" " + b.dump() + " is not one of the library's behaviors");
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
    } else if (type == "Metaspace") {
      step.kind = PreTokenizerStep::Kind::Metaspace;
      step.replacement = text_field(p, "replacement", "pre_tokenizer Metaspace");
      if (step.replacement.empty()) fail("pre_tokenizer Metaspace's \"replacement\" is empty");
      const std::string scheme = prepend_scheme(p, "pre_tokenizer Metaspace");
      step.prepend_always = scheme == "always";
      step.prepend_first = scheme == "first";
      step.split = flag(p, "split", true, "pre_tokenizer Metaspace");
    } else if (type == "WhitespaceSplit") {
      step.kind = PreTokenizerStep::Kind::WhitespaceSplit;
    } else if (type == "Punctuation") {
      step.kind = PreTokenizerStep::Kind::Punctuation;
      const json& b = field(p, "behavior");
      step.behavior = b.is_null() ? SplitBehavior::Isolated : behavior(b, "pre_tokenizer Punctuation");
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

  void decoder(const json& d, std::vector<DecoderStep>& steps) const {
    if (d.is_null()) return;
    const std::string type = type_of(d, "decoder");
    DecoderStep step{};
    if (type == "Sequence") {
      const json& list = member(d, "decoders", "decoder Sequence");
      if (!list.is_array()) fail("decoder Sequence's \"decoders\" must be an array");
      for (const json& item : list) {
        const Nested nested(*this);
        decoder(item, steps);
      }
      return;
    }
    if (type == "ByteLevel") {
      step.kind = DecoderStep::Kind::ByteLevel;
    } else if (type == "Replace") {
      step.kind = DecoderStep::Kind::Replace;
      step.content = text_field(d, "content", "decoder Replace");
      read_pattern(member(d, "pattern", "decoder Replace"), "decoder Replace", step.literal, step.regex);
    } else if (type == "ByteFallback") {
      step.kind = DecoderStep::Kind::ByteFallback;
    } else if (type == "Fuse") {
      step.kind = DecoderStep::Kind::Fuse;
    } else if (type == "Strip") {
      step.kind = DecoderStep::Kind::Strip;
      const std::string content = text_field(d, "content", "decoder Strip");
      const auto [cp, length] = unicode::decode_utf8(content, 0);
      if (length == 0 || static_cast<std::size_t>(length) != content.size())
        fail("decoder Strip's \"content\" must be one character");
      step.strip = cp;
      for (auto [key, into] : {std::pair{"start", &step.start}, std::pair{"stop", &step.stop}}) {
        const json& n = member(d, key, "decoder Strip");
        if (!n.is_number_unsigned()) fail(std::string("decoder Strip's \"") + key + "\" must be a count");
        *into = n.get<std::size_t>();
      }
    } else if (type == "Metaspace") {
      step.kind = DecoderStep::Kind::Metaspace;
      step.replacement = text_field(d, "replacement", "decoder Metaspace");
      step.prepend_never = prepend_scheme(d, "decoder Metaspace") == "never";
    } else {
      unsupported("decoder", type);
    }
    steps.push_back(std::move(step));
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

  // The pipeline's steps before the model; a ByteLevel pre-tokenizer picks the byte-level token
  // representation, anything else the text one (pipeline.h).
  reader.normalizer(field(doc, "normalizer"), pipeline.normalizers);
  bool byte_level = false;
  reader.pre_tokenizer(field(doc, "pre_tokenizer"), pipeline.pre_tokenizers, byte_level);
  impl->text_tokens = !byte_level;

  // The model.
  const json& model = reader.member(doc, "model", "the file");
  if (!model.is_object()) reader.fail("\"model\" must be an object");
  const std::string model_type = model.value("type", "BPE");   // older files leave out BPE's type
  if (model_type != "BPE") reader.unsupported("model", model_type);
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (model.contains(key) && !model[key].is_null() &&
        !(model[key].is_string() && model[key].get<std::string>().empty()))
      reader.fail(std::string("model.") + key + " is not supported yet");
  if (model.contains("dropout") && !model["dropout"].is_null() && model["dropout"] != 0 && model["dropout"] != 1)
    reader.fail("model.dropout is not supported (encoding would be random)");
  pipeline.ignore_merges = reader.flag(model, "ignore_merges", false, "model");
  const bool byte_fallback = reader.flag(model, "byte_fallback", false, "model");
  impl->fuse_unk = reader.flag(model, "fuse_unk", false, "model");

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
  if (impl->text_tokens) impl->pieces.resize(n);
  std::vector<bool> assigned(n, false);
  std::string bytes;
  // Added tokens may also be in model.vocab, written as their text rather than in byte-level
  // characters (GPT-NeoX's runs of spaces): BPE never makes those; they are the added token.
  std::unordered_map<std::int64_t, std::string> added_content;
  for (const json& t : added) added_content.emplace(t["id"].get<std::int64_t>(), t["content"].get<std::string>());
  // A token's key in `ordinary`: its raw bytes (byte-level) or the file's string (text).
  const auto key_of = [&](const std::string& token, std::string& out) {
    out.clear();
    if (!impl->text_tokens) return unicode_to_bytes(token, out);
    out = token;
    return unicode::valid_utf8_prefix(token) == token.size();
  };
  for (const auto& [token, id_json] : vocab.items()) {
    const auto id = id_json.get<std::int32_t>();
    if (!key_of(token, bytes)) {
      if (auto it = added_content.find(id); it != added_content.end() && it->second == token) continue;
      reader.fail("model.vocab token " + quote_text(token) +
                  (impl->text_tokens ? " is not valid UTF-8"
                                     : " is not made of byte-level characters (the pre-tokenizer is ByteLevel)"));
    }
    if (assigned[id]) reader.fail("model.vocab gives id " + std::to_string(id) + " to two tokens");
    if (!impl->ordinary.emplace(bytes, id).second)
      reader.fail("model.vocab has the token " + quote_text(token) + " twice");
    assigned[id] = true;
    impl->bytes_of[id] = bytes;
    if (impl->text_tokens) impl->pieces[id] = token;
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
    if (impl->text_tokens) impl->pieces[token.id] = token.content;
    assigned[token.id] = true;
    ids_by_content.emplace(token.content, token.id);
    if (token.special) impl->specials.emplace_back(token.content, token.id);
    pipeline.added_tokens.push_back(std::move(token));
  }
  for (std::size_t id = 0; id < n; ++id)
    if (!assigned[id])
      reader.fail("id " + std::to_string(id) + " has no token (ids must be 0.." + std::to_string(n - 1) + ")");
  if (impl->text_tokens) {
    // byte_fallback's "<0xAB>" tokens, and unk_token.
    impl->fallback_id.fill(-1);
    if (byte_fallback)
      for (const auto& [token, id] : impl->ordinary)
        if (const int b = fallback_byte(token); b >= 0) impl->fallback_id[b] = id;
    if (const json& unk = field(model, "unk_token"); !unk.is_null()) {
      if (!unk.is_string()) reader.fail("model.unk_token must be a string or null");
      const auto it = impl->ordinary.find(unk.get<std::string>());
      if (it == impl->ordinary.end())
        reader.fail("model.unk_token " + quote_text(unk.get<std::string>()) + " is not in model.vocab");
      impl->unk_id = it->second;
    }
  } else {
    for (int b = 0; b < 256; ++b) {
      auto it = impl->ordinary.find(std::string_view(std::string(1, static_cast<char>(b))));
      if (it == impl->ordinary.end())
        reader.fail("model.vocab has no token for the byte " + std::to_string(b) +
                    " (a byte-level vocabulary has all 256)");
      impl->byte_id[b] = it->second;
    }
  }

  const json& merges = reader.member(model, "merges", "model");
  if (!merges.is_array()) reader.fail("model.merges must be an array");
  impl->merges.reserve(merges.size());
  std::string left, right;
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const auto pair = merge_pair(merges[i], i, reader);
    const std::string &a = pair.first, &b = pair.second;   // not a structured binding: clang 14 cannot capture one
    const auto where = [&] {
      return "model.merges[" + std::to_string(i) + "] (" + quote_text(a) + ", " + quote_text(b) + ")";
    };
    if (!key_of(a, left) || !key_of(b, right))
      reader.fail(where() +
                  (impl->text_tokens ? " is not valid UTF-8" : " has a character outside the byte-level alphabet"));
    auto l = impl->ordinary.find(left), r = impl->ordinary.find(right);
    if (l == impl->ordinary.end()) reader.fail(where() + " names " + quote_text(a) + ", which is not in model.vocab");
    if (r == impl->ordinary.end()) reader.fail(where() + " names " + quote_text(b) + ", which is not in model.vocab");
    auto m = impl->ordinary.find(left + right);
    if (m == impl->ordinary.end())
      reader.fail(where() + " makes " + quote_text(a + b) + ", which is not in model.vocab");
    impl->merges.add_first(l->second, r->second, {static_cast<std::int32_t>(i), m->second});
  }

  // The pipeline's steps after the model.
  reader.post_processor(field(doc, "post_processor"), ids_by_content, pipeline);
  reader.decoder(field(doc, "decoder"), pipeline.decoders);
  if (!impl->text_tokens) {
    if (pipeline.decoders.empty()) reader.fail("has no decoder; a byte-level pipeline needs its ByteLevel decoder");
    for (const DecoderStep& d : pipeline.decoders)
      if (d.kind != DecoderStep::Kind::ByteLevel)
        reader.fail("has a decoder other than ByteLevel with a ByteLevel pre-tokenizer; not supported");
  } else {
    // What token_bytes shows for each token: its text alone, inside a text.
    for (std::size_t id = 0; id < n; ++id) impl->bytes_of[id] = token_text(pipeline.decoders, impl->pieces[id]);
  }

  if (!pipeline.ignore_merges) impl->find_tokens_merging_to_themselves();
  return Tokenizer(std::move(impl));
}

}   // namespace glassbox

namespace glassbox {

void Tokenizer::Impl::find_tokens_merging_to_themselves() {
  merges_to_itself.assign(bytes_of.size(), false);
  std::vector<std::int32_t> symbols;
  for (const auto& [token, id] : ordinary) {
    symbols.clear();
    initial_symbols(token, symbols);
    if (symbols.size() < kLongPiece)
      bpe_merge_scan(symbols, merges);
    else
      bpe_merge_heap(symbols, merges);
    merges_to_itself[id] = symbols.size() == 1 && symbols[0] == id;
  }
}

}   // namespace glassbox
