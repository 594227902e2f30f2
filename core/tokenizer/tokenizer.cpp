// Encoding and decoding with a Tokenizer (made by tokenizer_files.cpp): the hot path, compiled
// for speed everywhere.
#include "glassbox/tokenizer.h"

#include <algorithm>
#include <cstdint>

#include "glassbox/error.h"
#include "tokenizer/bpe.h"
#include "tokenizer/decoder.h"
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
  initial_symbols(piece, symbols);
  if (symbols.size() < kLongPiece)
    bpe_merge_scan(symbols, merges);
  else
    bpe_merge_heap(symbols, merges);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void Tokenizer::Impl::initial_symbols(std::string_view piece, std::vector<std::int32_t>& symbols) const {
  const bool affixed = !subword_prefix.empty() || !word_suffix.empty();
  if (!text_tokens && !affixed) {
    for (unsigned char b : piece) symbols.push_back(byte_id[b]);
    return;
  }
  // The library's BPE::merge_word (models/bpe/model.rs): each unit (a character, or a byte of a
  // byte-level piece), with the prefix and suffix, is its vocabulary token; else the "<0xAB>"
  // tokens of its bytes (byte_fallback); else unk_token (consecutive ones fused with fuse_unk);
  // else nothing. Its quirk kept: an unknown unit waiting to be added goes after byte-fallback
  // tokens that follow it, before the next known unit.
  std::int32_t unk = -1;
  std::string affixed_key;
  for (std::size_t pos = 0; pos < piece.size();) {
    const std::size_t length =
        text_tokens ? static_cast<std::size_t>(std::max(1, unicode::decode_utf8(piece, pos).length)) : 1;
    std::string_view key = piece.substr(pos, length);
    if (affixed) {
      affixed_key.assign(pos > 0 ? subword_prefix : std::string());
      affixed_key += key;
      if (pos + length == piece.size()) affixed_key += word_suffix;
      key = affixed_key;
    }
    pos += length;
    if (auto it = ordinary.find(key); it != ordinary.end()) {
      if (unk >= 0) symbols.push_back(unk);
      unk = -1;
      symbols.push_back(it->second);
      continue;
    }
    if (std::all_of(key.begin(), key.end(), [&](char b) { return fallback_id[static_cast<unsigned char>(b)] >= 0; })) {
      for (unsigned char b : key) symbols.push_back(fallback_id[b]);
      continue;
    }
    if (unk_id < 0) continue;   // no unk_token: the library drops the unit
    if (unk >= 0 && !fuse_unk) symbols.push_back(unk);
    unk = unk_id;
  }
  if (unk >= 0) symbols.push_back(unk);
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
  if (impl_->text_tokens) {
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (std::int32_t id : ids) {
      token_bytes(id);   // the range check
      tokens.push_back(impl_->pieces[id]);
    }
    // No decoder: the library joins the tokens with spaces (Tokenizer::decode in tokenizer/mod.rs).
    if (impl_->pipeline->decoders.empty()) {
      std::string text;
      for (std::size_t i = 0; i < tokens.size(); ++i) (text += i ? " " : "") += tokens[i];
      return text;
    }
    return decode_chain(impl_->pipeline->decoders, std::move(tokens));
  }
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

std::vector<std::int32_t> Tokenizer::special_ids() const {
  std::vector<std::int32_t> ids;
  for (const auto& special : impl_->specials) ids.push_back(special.second);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string StreamingDecoder::push(std::int32_t id) {
  if (tokenizer_.impl_->text_tokens) return push_text(id);
  pending_ += tokenizer_.token_bytes(id);
  // Emit everything up to a character that may still be completed by the next token.
  const std::size_t ready = unicode::complete_utf8_prefix(pending_);
  std::string text = unicode::replace_invalid_utf8(std::string_view(pending_).substr(0, ready));
  pending_.erase(0, ready);
  return text;
}

// The decoder chain (decoder.h) is not per token: ByteFallback decodes a run of byte tokens as a
// whole (one U+FFFD per token where the run is not UTF-8), and Metaspace / Strip treat the first
// token of the text apart. So the ids since the last token that is not a fallback byte wait in
// window_, and are decoded after that token (anchor_): what they add to the anchor's own text is
// what they add to the whole text, since an anchor ends any byte run and is never empty.
std::string StreamingDecoder::push_text(std::int32_t id) {
  tokenizer_.token_bytes(id);   // the range check
  window_.push_back(id);
  if (fallback_byte(tokenizer_.impl_->pieces[id]) >= 0) return "";
  return flush_window();
}

std::string StreamingDecoder::flush_window() {
  if (window_.empty()) return "";
  std::string text;
  if (anchor_ < 0) {
    text = tokenizer_.decode(window_);
  } else {
    const std::string head = tokenizer_.decode(std::span(&anchor_, 1));
    window_.insert(window_.begin(), anchor_);
    const std::string whole = tokenizer_.decode(window_);
    text = whole.starts_with(head) ? whole.substr(head.size()) : whole;
  }
  anchor_ = window_.back();
  window_.clear();
  return text;
}

std::string StreamingDecoder::finish() {
  if (tokenizer_.impl_->text_tokens) {
    std::string text = flush_window();
    anchor_ = -1;
    return text;
  }
  std::string text = unicode::replace_invalid_utf8(pending_);
  pending_.clear();
  return text;
}

}   // namespace glassbox
