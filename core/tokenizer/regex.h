// A small backtracking regex engine over code points, for the Split pre-tokenizer patterns that
// tokenizer.json files carry (Llama 3's, Qwen2's and the like).
//
// Why our own: the Hugging Face library runs these patterns through Oniguruma; Debian packages
// Oniguruma and PCRE2 only as native libraries (not for WebAssembly), std::regex has no Unicode
// classes, and RE2 has no look-ahead, which \s+(?!\S) needs. The patterns are small and their
// semantics simple (leftmost-first alternation, greedy quantifiers), so a backtracking matcher of
// a few hundred lines gives the same matches on both targets. GPT-2's pattern, the one most text
// goes through, keeps its hand-written matcher (pretokenizer.h, checked against tiktoken); the
// tokenizer.json reader uses it when a file carries exactly that pattern.
//
// The syntax understood (anything else is an error naming it, never a silent mismatch):
//   literals and escapes \r \n \t \f \v \\ \' and escaped punctuation; . (any but \n)
//   classes [...] [^...] with ranges and \p{L} \p{N} \s \S \P{..} inside; \p{L} \p{N} \s \S outside
//     (\p{L}: General_Category L*, \p{N}: N*, \s: White_Space, as Oniguruma's Unicode mode)
//   groups (...), (?:...), (?i:...) (case-insensitive: ASCII letters with their Unicode case
//     partners, e.g. s with U+017F LONG S, k with U+212A KELVIN SIGN), look-ahead (?=...) (?!...)
//   alternation |, quantifiers * + ? {m} {m,} {m,n} (greedy)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "glassbox/error.h"

namespace glassbox {

// A pattern this engine does not understand, a malformed one, or a match past the step budget;
// what() names the problem.
class RegexError : public Error {
 public:
  using Error::Error;
};

class Regex {
 public:
  explicit Regex(std::string_view pattern);   // throws RegexError
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;
  ~Regex();

  struct Match {
    std::size_t start, end;   // bytes
  };
  // The successive non-overlapping matches in `text` (valid UTF-8), each the leftmost one after
  // the last, with leftmost-first alternation as Oniguruma and Perl. Empty matches are left out
  // (the patterns tokenizers use cannot match empty; the search steps past one as find_iter does).
  // A backtracking match can take exponential time ((a|a)*b on "aaaa...c"): past kStepBudget +
  // kStepsPerCharacter per code point of `text`, find_all throws RegexError naming the pattern and
  // the byte it had reached, as Oniguruma stops at its retry limit, rather than hang on a hostile
  // file. The patterns real files carry run a few to a few dozen steps per character.
  std::vector<Match> find_all(std::string_view text) const;
  static constexpr std::size_t kStepBudget = 10'000'000, kStepsPerCharacter = 1000;

  struct Program;   // the compiled instructions (regex.cpp)

 private:
  std::unique_ptr<Program> program_;
  std::string pattern_;   // for errors
};

// Each non-overlapping match of `regex` (or, when it is null, occurrence of `literal`), leftmost
// first, replaced by `content`: the Replace step of normalizers and decoders (the library's
// NormalizedString::replace).
std::string replace_matches(const Regex* regex, const std::string& literal, const std::string& content,
                            const std::string& text);

}   // namespace glassbox
