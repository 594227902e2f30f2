// Encoding and decoding with a Tokenizer (made by tokenizer_files.cpp): the hot path, compiled
// for speed everywhere.
#include "glassbox/tokenizer.h"

#include <algorithm>
#include <cstdint>

#include "glassbox/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace glassbox {

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::Impl::encode_piece(std::string_view piece, std::vector<std::int32_t>& out) const {
  // Most pieces are whole tokens (common words): one lookup, no merging.
  if (auto it = ordinary.find(piece);
      it != ordinary.end() && (merges_to_itself.empty() || merges_to_itself[it->second])) {
    out.push_back(it->second);
    return;
  }
  thread_local std::vector<std::int32_t> symbols;
  symbols.clear();
  for (unsigned char b : piece) symbols.push_back(byte_id[b]);
  if (piece.size() < kLongPiece)
    bpe_merge_scan(symbols, merges);
  else
    bpe_merge_heap(symbols, merges);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void Tokenizer::Impl::encode_ordinary(std::string_view text, std::vector<std::int32_t>& out) const {
  pretokenize(text, [&](std::string_view piece) { encode_piece(piece, out); });
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

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool allow_special, bool add_special) const {
  if (const std::size_t bad = unicode::valid_utf8_prefix(text); bad != text.size())
    throw InvalidArgument("text is not valid UTF-8 at byte " + std::to_string(bad));
  std::vector<std::int32_t> ids;
  if (impl_->pipeline) {
    impl_->encode_pipeline(text, allow_special, add_special, ids);
    return ids;
  }
  if (!allow_special || impl_->specials.empty()) {
    impl_->encode_ordinary(text, ids);
    return ids;
  }
  // Cut the text at each special token (the earliest occurrence; the longest if two start there).
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t best = std::string_view::npos, best_len = 0;
    std::int32_t best_id = -1;
    std::string_view best_name;
    for (const auto& [name, id] : impl_->specials) {
      const std::size_t at = text.find(name, pos);
      if (at < best || (at == best && name.size() > best_len)) {
        best = at;
        best_len = name.size();
        best_id = id;
        best_name = name;
      }
    }
    std::string_view before = text.substr(pos, best == std::string_view::npos ? std::string_view::npos : best - pos);
    // A masked LM learns <|mask|> in place of a whole token, its leading space included (" said"):
    // the spaces written before a mask belong to it, as RoBERTa's <mask> strips them (lstrip).
    if (best_name == kMaskToken)
      while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    impl_->encode_ordinary(before, ids);
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

}   // namespace glassbox
