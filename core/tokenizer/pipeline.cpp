// Running a tokenizer.json pipeline (pipeline.h) on a text, as the Hugging Face tokenizers
// library does (tokenizer/added_vocabulary.rs, normalizer.rs's split, the pre-tokenizers).
#include "tokenizer/pipeline.h"

#include <algorithm>
#include <array>

#include "glassbox/error.h"
#include "tokenizer/pattern_llama3.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

struct Span {
  std::size_t start, end;
  bool is_match;
};

// The library's NormalizedString::split: the text as alternating gaps and matches, then grouped
// by the behavior, empty pieces dropped.
template <typename Emit>
void split_by(std::string_view text, std::vector<Span> spans, SplitBehavior behavior, bool invert, Emit&& emit) {
  if (invert)
    for (Span& s : spans) s.is_match = !s.is_match;
  std::vector<Span> pieces;   // is_match here: to be removed
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Span& s : spans) pieces.push_back({s.start, s.end, false});
      break;
    case SplitBehavior::Removed:
      pieces = spans;
      break;
    case SplitBehavior::Contiguous:
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !pieces.empty())
          pieces.back().end = s.end;
        else
          pieces.push_back({s.start, s.end, false});
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !pieces.empty())
          pieces.back().end = s.end;
        else
          pieces.push_back({s.start, s.end, false});
        previous_match = s.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !pieces.empty())
          pieces.back().start = it->start;
        else
          pieces.push_back({it->start, it->end, false});
        previous_match = it->is_match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
  }
  for (const Span& p : pieces)
    if (!p.is_match && p.end > p.start) emit(text.substr(p.start, p.end - p.start), p.start == 0);
}

// Matches as the alternating gaps and matches that cover the text (the library's find_matches).
std::vector<Span> cover(std::string_view text, const std::vector<Regex::Match>& matches) {
  std::vector<Span> spans;
  std::size_t prev = 0;
  for (const auto& m : matches) {
    if (m.start != prev) spans.push_back({prev, m.start, false});
    spans.push_back({m.start, m.end, true});
    prev = m.end;
  }
  if (prev != text.size() || text.empty()) spans.push_back({prev, text.size(), false});
  return spans;
}

// Calls emit(piece, starts) for each piece the step cuts `piece` into: views of `piece`, or of a
// string that lives until the last emit returns (a prefix space added, spaces replaced); `starts`:
// the piece begins where `piece` begins (Metaspace's prepend_scheme "first" needs to know).
template <typename Emit>
void apply_step(const PreTokenizerStep& step, std::string_view piece, bool at_start, Emit&& emit) {
  switch (step.kind) {
    case PreTokenizerStep::Kind::ByteLevel: {
      std::string with_space;
      if (step.add_prefix_space && !piece.starts_with(' ')) {
        with_space = " ";
        with_space += piece;
        piece = with_space;
      }
      if (!step.use_regex) {
        emit(piece, true);
        return;
      }
      const char* begin = piece.data();
      pretokenize(piece, [&](std::string_view p) { emit(p, p.data() == begin); });
      return;
    }
    case PreTokenizerStep::Kind::Split: {
      std::vector<Regex::Match> matches;
      if (step.llama3_digits)
        for (std::size_t pos = 0; pos < piece.size();) {
          const std::size_t n = llama3_piece_length(piece, pos, step.llama3_digits);
          matches.push_back({pos, pos + n});
          pos += n;
        }
      else if (step.gpt2_pattern)
        pretokenize(piece, [&](std::string_view p) {
          const auto start = static_cast<std::size_t>(p.data() - piece.data());
          matches.push_back({start, start + p.size()});
        });
      else
        matches = step.regex->find_all(piece);
      split_by(piece, cover(piece, matches), step.behavior, step.invert, emit);
      return;
    }
    case PreTokenizerStep::Kind::Digits: {
      // Each \p{N} character is a match of its own; Contiguous joins runs of them.
      std::vector<Regex::Match> matches;
      for (std::size_t pos = 0; pos < piece.size();) {
        const auto [cp, length] = unicode::decode_utf8(piece, pos);
        const std::size_t next = pos + static_cast<std::size_t>(length > 0 ? length : 1);
        if (unicode::is_number(cp)) matches.push_back({pos, next});
        pos = next;
      }
      split_by(piece, cover(piece, matches),
               step.individual_digits ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false, emit);
      return;
    }
    case PreTokenizerStep::Kind::WhitespaceSplit:
    case PreTokenizerStep::Kind::Punctuation: {
      // Each character the predicate holds for is a match of its own (the library's split by a
      // char predicate): whitespace.rs's char::is_whitespace, removed; punctuation.rs's is_punc.
      const bool whitespace = step.kind == PreTokenizerStep::Kind::WhitespaceSplit;
      std::vector<Regex::Match> matches;
      for (std::size_t pos = 0; pos < piece.size();) {
        const auto [cp, length] = unicode::decode_utf8(piece, pos);
        const std::size_t next = pos + static_cast<std::size_t>(length > 0 ? length : 1);
        if (whitespace ? unicode::is_whitespace(cp) : unicode::is_punctuation(cp)) matches.push_back({pos, next});
        pos = next;
      }
      split_by(piece, cover(piece, matches), whitespace ? SplitBehavior::Removed : step.behavior, false, emit);
      return;
    }
    case PreTokenizerStep::Kind::Whitespace: {
      // whitespace.rs: the regex crate's \w+|[^\w\s]+, matches kept and the rest removed. The
      // alternation is leftmost-first and each branch is greedy, so at each character: a word
      // character starts a run of word characters; else a non-space starts a run of characters
      // that are neither; else the (white space) character is skipped.
      enum class Class { Word, Other, Space };
      auto class_at = [&piece](std::size_t pos, std::size_t& next) {
        const auto [cp, length] = unicode::decode_utf8(piece, pos);
        next = pos + static_cast<std::size_t>(length > 0 ? length : 1);
        if (unicode::is_word(cp)) return Class::Word;
        return unicode::is_whitespace(cp) ? Class::Space : Class::Other;
      };
      std::size_t next = 0;
      for (std::size_t pos = 0; pos < piece.size();) {
        const Class run = class_at(pos, next);
        if (run == Class::Space) {
          pos = next;
          continue;
        }
        std::size_t end = next;
        while (end < piece.size() && class_at(end, next) == run) end = next;
        emit(piece.substr(pos, end - pos), pos == 0);
        pos = end;
      }
      return;
    }
    case PreTokenizerStep::Kind::Metaspace: {
      // The library's Metaspace: replace ' ', prepend (unless the piece already starts with the
      // replacement; "first" only where the piece starts the text), then split MergedWithNext.
      std::string text;
      const std::string_view rep = step.replacement;
      const bool prepend = !piece.empty() && !piece.starts_with(' ') && !piece.starts_with(rep) &&
                           (step.prepend_always || (step.prepend_first && at_start));
      if (prepend) text = rep;
      for (char c : piece)
        if (c == ' ')
          text += rep;
        else
          text += c;
      if (!step.split) {
        if (!text.empty()) emit(std::string_view(text), true);
        return;
      }
      std::vector<Regex::Match> matches;
      for (std::size_t pos = text.find(rep); pos != std::string::npos; pos = text.find(rep, pos + rep.size()))
        matches.push_back({pos, pos + rep.size()});
      split_by(std::string_view(text), cover(text, matches), SplitBehavior::MergedWithNext, false, emit);
      return;
    }
  }
}

bool is_word_char(char32_t cp) { return unicode::is_letter(cp) || unicode::is_number(cp); }

// The code point that ends text[..pos] / starts text[pos..].
char32_t last_char(std::string_view text, std::size_t pos) {
  std::size_t start = pos;
  while (start > 0 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  return start > 0 ? unicode::decode_utf8(text, start - 1).cp : U'\0';
}

// The added tokens of one kind (normalized or not) in `text`, as the library's
// AddedVocabulary::find_matches: leftmost-longest, then single_word, lstrip and rstrip. Calls
// on_text(text, at_start) for the text between tokens (at_start: it begins `text`) and
// on_token(id) for each token.
template <typename OnText, typename OnToken>
void split_added(const std::vector<AddedToken>& tokens, bool normalized, bool allow_special, std::string_view text,
                 OnText&& on_text, OnToken&& on_token) {
  // One pass over the text: at each byte that starts some token, the longest token there.
  std::vector<const AddedToken*> candidates;
  std::array<bool, 256> starts{};
  for (const AddedToken& t : tokens)
    if (t.normalized == normalized) {
      candidates.push_back(&t);
      starts[static_cast<unsigned char>(t.content[0])] = true;
    }
  if (candidates.empty()) {
    if (!text.empty()) on_text(text, true);
    return;
  }
  std::size_t start_offset = 0, search = 0;
  while (search < text.size()) {
    const AddedToken* best = nullptr;
    std::size_t best_at = search;
    for (; best_at < text.size(); ++best_at) {
      if (!starts[static_cast<unsigned char>(text[best_at])]) continue;
      const std::string_view rest = text.substr(best_at);
      for (const AddedToken* t : candidates)
        if (rest.starts_with(t->content) && (!best || t->content.size() > best->content.size())) best = t;
      if (best) break;
    }
    if (!best) break;
    std::size_t start = best_at, stop = best_at + best->content.size();
    search = stop;
    if (best->special && !allow_special) continue;   // the text of a special token is ordinary text
    if (best->single_word) {
      const bool space_before = start == 0 || !is_word_char(last_char(text, start));
      const bool space_after = stop == text.size() || !is_word_char(unicode::decode_utf8(text, stop).cp);
      if (!space_before || !space_after) continue;
    }
    if (best->lstrip) {
      std::size_t s = start;
      while (s > start_offset) {
        const char32_t cp = last_char(text, s);
        if (!unicode::is_whitespace(cp)) break;
        s -= cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      }
      start = s;
    }
    if (best->rstrip) {
      while (stop < text.size()) {
        const auto [cp, length] = unicode::decode_utf8(text, stop);
        if (length == 0 || !unicode::is_whitespace(cp)) break;
        stop += static_cast<std::size_t>(length);
      }
      search = stop;
    }
    if (start_offset < start) on_text(text.substr(start_offset, start - start_offset), start_offset == 0);
    on_token(best->id);
    start_offset = stop;
  }
  if (start_offset < text.size()) on_text(text.substr(start_offset), start_offset == 0);
}

}   // namespace

namespace {

// The steps in order, depth first: each piece goes through all of them before the next, so no
// step's pieces are ever collected.
void run_steps(const PreTokenizerStep* step, const PreTokenizerStep* end, std::string_view piece, bool at_start,
               const PieceSink& sink) {
  if (step == end) return sink(piece);
  apply_step(*step, piece, at_start,
             [&](std::string_view p, bool starts) { run_steps(step + 1, end, p, at_start && starts, sink); });
}

}   // namespace

void Pipeline::pre_tokenize(std::string_view text, const PieceSink& sink, bool at_start) const {
  run_steps(pre_tokenizers.data(), pre_tokenizers.data() + pre_tokenizers.size(), text, at_start, sink);
}

void Pipeline::pre_tokenize(std::string_view text, std::vector<std::string>& pieces) const {
  pre_tokenize(text, [&](std::string_view p) { pieces.emplace_back(p); });
}

void Tokenizer::Impl::encode_pipeline(std::string_view text, bool allow_special, bool add_special,
                                      std::vector<std::int32_t>& out) const {
  const Pipeline& p = *pipeline;
  if (add_special) out.insert(out.end(), p.prefix_ids.begin(), p.prefix_ids.end());
  const PieceSink encode = [&](std::string_view piece) { encode_piece(piece, out); };
  const auto push_token = [&](std::int32_t id) { out.push_back(id); };
  split_added(
      p.added_tokens, false, allow_special, text,
      [&](std::string_view raw, bool raw_at_start) {
        const auto encode_text = [&](std::string_view segment, bool at_start) {
          p.pre_tokenize(segment, encode, raw_at_start && at_start);
        };
        if (p.normalizers.empty()) {
          split_added(p.added_tokens, true, allow_special, raw, encode_text, push_token);
          return;
        }
        const std::string normalized = normalize(p.normalizers, raw);
        split_added(p.added_tokens, true, allow_special, normalized, encode_text, push_token);
      },
      push_token);
  if (add_special) out.insert(out.end(), p.suffix_ids.begin(), p.suffix_ids.end());
}

}   // namespace glassbox
