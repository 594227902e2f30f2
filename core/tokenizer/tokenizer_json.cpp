// Making a Tokenizer from tokenizer.json, the Hugging Face tokenizers library's format: the model
// (BPE: vocabulary, merges, byte_fallback, unk_token) and the added tokens here, the pipeline
// around them (pipeline.h) through tokenizer_json_components.cpp.
#include <algorithm>

#include "glassbox/error.h"
#include "glassbox/quoted.h"
#include "glassbox/tokenizer.h"
#include "io/mapped_file.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/decoder.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/tokenizer_json_reader.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

using tokenizer_json::field;
using tokenizer_json::json;
using tokenizer_json::Reader;

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
  // continuing_subword_prefix / end_of_word_suffix, in the vocabulary's representation.
  for (auto [key, into] : {std::pair{"continuing_subword_prefix", &impl->subword_prefix},
                           std::pair{"end_of_word_suffix", &impl->word_suffix}}) {
    const json& value = field(model, key);
    if (value.is_null()) continue;
    if (!value.is_string()) reader.fail(std::string("model.") + key + " must be a string or null");
    if (!key_of(value.get<std::string>(), *into))
      reader.fail(std::string("model.") + key + " " + quote_text(value.get<std::string>()) +
                  " is not made of byte-level characters");
  }
  // byte_fallback's "<0xAB>" tokens (text tokens only: a byte-level vocabulary has every byte),
  // and unk_token.
  impl->fallback_id.fill(-1);
  if (byte_fallback && impl->text_tokens)
    for (const auto& [token, id] : impl->ordinary)
      if (const int b = fallback_byte(token); b >= 0) impl->fallback_id[b] = id;
  if (const json& unk = field(model, "unk_token"); !unk.is_null()) {
    if (!unk.is_string()) reader.fail("model.unk_token must be a string or null");
    if (key_of(unk.get<std::string>(), bytes))
      if (const auto it = impl->ordinary.find(bytes); it != impl->ordinary.end()) impl->unk_id = it->second;
    if (impl->unk_id < 0 && impl->text_tokens)
      reader.fail("model.unk_token " + quote_text(unk.get<std::string>()) + " is not in model.vocab");
  }
  if (!impl->text_tokens) {
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
    // The merged token is a + b less the length of continuing_subword_prefix (model.rs cuts it
    // from b whatever b starts with).
    const std::size_t cut = impl->subword_prefix.size();
    if (right.size() < cut) reader.fail(where() + ": " + quote_text(b) + " is shorter than continuing_subword_prefix");
    auto m = impl->ordinary.find(left + right.substr(cut));
    if (m == impl->ordinary.end())
      reader.fail(where() + " makes " + quote_text(left + right.substr(cut)) + ", which is not in model.vocab");
    impl->merges.add_last(l->second, r->second, {static_cast<std::int32_t>(i), m->second});
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
