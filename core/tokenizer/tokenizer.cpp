#include "glassbox/tokenizer.h"

#include <array>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "tokenizer/bpe.h"
#include "tokenizer/byte_unicode.h"
#include "glassbox/error.h"
#include "io/mapped_file.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

// Heterogeneous lookup: find a std::string key with a std::string_view, without a copy.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

// GPT-2 marks special tokens as <|name|>; they never come out of ordinary text.
bool is_special(std::string_view token) {
  return token.size() > 4 && token.substr(0, 2) == "<|" && token.substr(token.size() - 2) == "|>";
}

}  // namespace

struct Tokenizer::Impl {
  std::vector<std::string> bytes_of;        // id -> raw bytes
  TokenMap ordinary;                        // raw bytes -> id, special tokens excluded
  std::vector<std::pair<std::string, std::int32_t>> specials;   // "<|endoftext|>" -> id
  std::array<std::int32_t, 256> byte_id{};  // the single-byte token of each byte
  MergeTable merges;

  void encode_ordinary(std::string_view text, std::vector<std::int32_t>& out) const;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::filesystem::path& dir) {
  const auto vocab_path = dir / "vocab.json", merges_path = dir / "merges.txt";
  const std::string vocab = read_file(vocab_path);   // first, so a missing pair names vocab.json
  const std::string merges = read_file(merges_path);
  return from_strings(vocab, merges, vocab_path.string(), merges_path.string());
}

Tokenizer Tokenizer::from_strings(std::string_view vocab_json, std::string_view merges_txt,
                                  const std::string& vocab_source, const std::string& merges_source) {
  auto impl = std::make_unique<Impl>();
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(vocab_json.begin(), vocab_json.end());
  } catch (const nlohmann::json::exception& e) {
    throw ModelFormatError(vocab_source, std::string("not valid JSON: ") + e.what());
  }
  if (!vocab.is_object() || vocab.empty())
    throw ModelFormatError(vocab_source, "must be a non-empty JSON object of token -> id");

  // Ids must be exactly 0 .. n-1, each once.
  const std::size_t n = vocab.size();
  impl->bytes_of.resize(n);
  std::vector<bool> seen(n, false);
  for (const auto& [token, id_json] : vocab.items()) {
    if (!id_json.is_number_integer() || id_json.get<std::int64_t>() < 0 || id_json.get<std::uint64_t>() >= n)
      throw ModelFormatError(vocab_source, "token \"" + token + "\" has id " + id_json.dump() +
                                               "; ids must be 0.." + std::to_string(n - 1));
    const auto id = id_json.get<std::int32_t>();
    if (seen[id]) throw ModelFormatError(vocab_source, "id " + std::to_string(id) + " is given to two tokens");
    seen[id] = true;
    if (is_special(token)) {
      impl->bytes_of[id] = token;
      impl->specials.emplace_back(token, id);
      continue;
    }
    std::string bytes;
    if (!unicode_to_bytes(token, bytes))
      throw ModelFormatError(vocab_source, "token \"" + token + "\" has a character outside GPT-2's byte alphabet");
    impl->ordinary.emplace(bytes, id);
    impl->bytes_of[id] = std::move(bytes);
  }
  for (int b = 0; b < 256; ++b) {
    auto it = impl->ordinary.find(std::string_view(std::string(1, static_cast<char>(b))));
    if (it == impl->ordinary.end())
      throw ModelFormatError(vocab_source, "no token for the single byte " + std::to_string(b) +
                                               " (a byte-level vocabulary has all 256)");
    impl->byte_id[b] = it->second;
  }

  // merges.txt: "#version: 0.2" then one "left right" pair per line, best first.
  std::int32_t rank = 0;
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < merges_txt.size();) {
    std::size_t end = merges_txt.find('\n', pos);
    if (end == std::string_view::npos) end = merges_txt.size();
    std::string_view line = merges_txt.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || (line_no == 1 && line.starts_with("#version"))) continue;
    const std::size_t space = line.find(' ');
    std::string left, right;
    const auto where = "line " + std::to_string(line_no) + " \"" + std::string(line) + "\"";
    if (space == std::string_view::npos || line.find(' ', space + 1) != std::string_view::npos ||
        !unicode_to_bytes(line.substr(0, space), left) || !unicode_to_bytes(line.substr(space + 1), right))
      throw ModelFormatError(merges_source, where + ": expected two tokens separated by one space");
    auto l = impl->ordinary.find(left), r = impl->ordinary.find(right), m = impl->ordinary.find(left + right);
    if (l == impl->ordinary.end() || r == impl->ordinary.end() || m == impl->ordinary.end())
      throw ModelFormatError(merges_source, where + ": a token of this merge or its result is not in the vocabulary");
    if (!impl->merges.find(l->second, r->second)) impl->merges.add(l->second, r->second, {rank, m->second});
    ++rank;
  }
  return Tokenizer(std::move(impl));
}

void Tokenizer::Impl::encode_ordinary(std::string_view text, std::vector<std::int32_t>& out) const {
  std::vector<std::int32_t> symbols;
  pretokenize(text, [&](std::string_view piece) {
    // Most pieces are whole tokens (common words): one lookup, no merging.
    if (auto it = ordinary.find(piece); it != ordinary.end()) {
      out.push_back(it->second);
      return;
    }
    symbols.clear();
    for (unsigned char b : piece) symbols.push_back(byte_id[b]);
    if (piece.size() < kLongPiece) bpe_merge_scan(symbols, merges);
    else bpe_merge_heap(symbols, merges);
    out.insert(out.end(), symbols.begin(), symbols.end());
  });
}

std::vector<std::int32_t> Tokenizer::encode_for_classifier(std::string_view text, int max_tokens) const {
  if (max_tokens < 1) throw InvalidArgument("a classifier's input needs room for at least one token");
  std::vector<std::int32_t> ids = encode(text);
  const auto eot = special_token("<|endoftext|>");
  const std::size_t room = static_cast<std::size_t>(max_tokens) - (eot ? 1 : 0);
  if (ids.size() > room) ids.resize(room);
  if (eot) ids.push_back(*eot);
  return ids;
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool allow_special) const {
  if (const std::size_t bad = unicode::valid_utf8_prefix(text); bad != text.size())
    throw InvalidArgument("text is not valid UTF-8 at byte " + std::to_string(bad));
  std::vector<std::int32_t> ids;
  if (!allow_special || impl_->specials.empty()) {
    impl_->encode_ordinary(text, ids);
    return ids;
  }
  // Cut the text at each special token (the earliest occurrence; the longest if two start there).
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t best = std::string_view::npos, best_len = 0;
    std::int32_t best_id = -1;
    for (const auto& [name, id] : impl_->specials) {
      const std::size_t at = text.find(name, pos);
      if (at < best || (at == best && name.size() > best_len)) {
        best = at;
        best_len = name.size();
        best_id = id;
      }
    }
    impl_->encode_ordinary(text.substr(pos, best == std::string_view::npos ? std::string_view::npos : best - pos), ids);
    if (best == std::string_view::npos) break;
    ids.push_back(best_id);
    pos = best + best_len;
  }
  return ids;
}

const std::string& Tokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= impl_->bytes_of.size())
    throw InvalidArgument("token id " + std::to_string(id) + " is out of range: the vocabulary has ids 0.." +
                          std::to_string(impl_->bytes_of.size() - 1));
  return impl_->bytes_of[id];
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids) const {
  std::string bytes;
  for (std::int32_t id : ids) bytes += token_bytes(id);
  return unicode::replace_invalid_utf8(bytes);
}

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const int n = unicode::decode_utf8(text, pos).length;
    if (n == 0) return pos;
    pos += static_cast<std::size_t>(n);
  }
  return std::nullopt;
}

int Tokenizer::vocab_size() const { return static_cast<int>(impl_->bytes_of.size()); }

std::optional<std::int32_t> Tokenizer::special_token(std::string_view name) const {
  for (const auto& [n, id] : impl_->specials)
    if (n == name) return id;
  return std::nullopt;
}

std::string StreamingDecoder::push(std::int32_t id) {
  pending_ += tokenizer_.token_bytes(id);
  // Emit everything up to a character that may still be completed by the next token.
  const std::size_t ready = unicode::complete_utf8_prefix(pending_);
  std::string text = unicode::replace_invalid_utf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return text;
}

std::string StreamingDecoder::finish() {
  std::string text = unicode::replace_invalid_utf8(pending_);
  pending_.clear();
  return text;
}

}  // namespace glassbox
