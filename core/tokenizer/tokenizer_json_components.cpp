// The pipeline's components in a tokenizer.json (tokenizer_json_reader.h): each type the library
// defines is read into pipeline.h's steps or refused by name, never a silent difference in ids.
#include <algorithm>
#include <utility>

#include "glassbox/quoted.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/tokenizer_json_reader.h"
#include "tokenizer/unicode.h"

namespace glassbox::tokenizer_json {
namespace {

// GPT-2's pattern as tokenizer.json files write it: the hand-written matcher runs it.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

}   // namespace

const json& field(const json& object, const char* key) {
  static const json kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

const json& Reader::member(const json& object, const char* key, const std::string& where) const {
  auto it = object.find(key);
  if (it == object.end()) fail(where + " has no \"" + key + "\"");
  return *it;
}

bool Reader::flag(const json& object, const char* key, bool fallback, const std::string& where) const {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail(where + "'s \"" + key + "\" must be true or false");
  return it->get<bool>();
}

std::string Reader::type_of(const json& component, const std::string& where) const {
  if (!component.is_object()) fail(where + " must be an object or null");
  const json& type = member(component, "type", where);
  if (!type.is_string()) fail(where + "'s \"type\" must be a string");
  return type.get<std::string>();
}

// A type the library defines but this reader lacks "is not supported"; any other is unknown
// (a typo, or a newer library's component).
void Reader::unsupported(const std::string& where, const std::string& type) const {
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

void Reader::normalizer(const json& n, std::vector<NormalizerStep>& steps) const {
  if (n.is_null()) return;
  const std::string type = type_of(n, "normalizer");
  static const std::pair<const char*, NormalizerStep::Kind> kPlain[] = {{"NFC", NormalizerStep::Kind::Nfc},
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

std::string Reader::text_field(const json& object, const char* key, const std::string& where) const {
  const json& value = member(object, key, where);
  if (!value.is_string()) fail(where + "'s \"" + key + "\" must be a string");
  return value.get<std::string>();
}

// {"String": s} (a literal) or {"Regex": r}, as Split and Replace write their pattern.
void Reader::read_pattern(const json& p, const std::string& where, std::string& literal,
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
std::string Reader::prepend_scheme(const json& m, const std::string& where) const {
  if (m.contains("prepend_scheme")) {
    const std::string scheme = text_field(m, "prepend_scheme", where);
    if (scheme != "first" && scheme != "always" && scheme != "never")
      fail(where + "'s \"prepend_scheme\" " + quote_text(scheme) + " is not first, always or never");
    return scheme;
  }
  return flag(m, "add_prefix_space", true, where) ? "always" : "never";
}

SplitBehavior Reader::behavior(const json& b, const std::string& where) const {
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

void Reader::pre_tokenizer(const json& p, std::vector<PreTokenizerStep>& steps, bool& byte_level) const {
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
  } else if (type == "Whitespace") {
    step.kind = PreTokenizerStep::Kind::Whitespace;
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
void Reader::post_processor(const json& p, const TokenMap& ids_by_content, Pipeline& pipeline) const {
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

void Reader::decoder(const json& d, std::vector<DecoderStep>& steps) const {
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
  } else if (type == "BPEDecoder") {
    step.kind = DecoderStep::Kind::BpeSuffix;
    const json& suffix = field(d, "suffix");
    step.literal = suffix.is_null() ? "</w>" : text_field(d, "suffix", "decoder BPEDecoder");
    if (step.literal.empty()) fail("decoder BPEDecoder's \"suffix\" is empty");
  } else if (type == "Metaspace") {
    step.kind = DecoderStep::Kind::Metaspace;
    step.replacement = text_field(d, "replacement", "decoder Metaspace");
    step.prepend_never = prepend_scheme(d, "decoder Metaspace") == "never";
  } else {
    unsupported("decoder", type);
  }
  steps.push_back(std::move(step));
}

}   // namespace glassbox::tokenizer_json
