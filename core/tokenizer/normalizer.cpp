// The normalizers of a tokenizer.json pipeline (pipeline.h). NFC is Unicode's canonical
// decomposition, canonical ordering and canonical composition (UAX #15), NFD the first two, NFKC and
// NFKD the same with the compatibility decompositions too, over the tables
// scripts/gen_normalization_tables.py generates, with Hangul syllables by their algorithm.
// Lowercase and Strip as the library's (Rust's char::to_lowercase, char::is_whitespace).
#include <algorithm>
#include <cstdint>
#include <span>
#include <unordered_map>

#include "tokenizer/pipeline.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

struct CombiningClassRange {
  char32_t first, last;
  std::uint8_t ccc;
};
struct Decomposition {
  char32_t cp, first, second;
  bool composes;
};
struct CompatibilityDecomposition {
  char32_t cp;
  std::uint16_t offset;
  std::uint8_t length;
};
struct Lowercase {
  char32_t cp, first, second;
};
struct LowercaseRun {
  char32_t first, last;
  std::uint8_t stride;
  std::int32_t delta;
};

#include "tokenizer/normalization_tables.inc"

// Hangul (Unicode 15.0, section 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

std::uint8_t combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  const auto it = std::upper_bound(std::begin(kCombiningClasses), std::end(kCombiningClasses), cp,
                                   [](char32_t c, const CombiningClassRange& r) { return c < r.first; });
  if (it == std::begin(kCombiningClasses)) return 0;
  const auto& r = *(it - 1);
  return cp <= r.last ? r.ccc : 0;
}

const Decomposition* decomposition(char32_t cp) {
  const auto it = std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), cp,
                                   [](const Decomposition& d, char32_t c) { return d.cp < c; });
  return it != std::end(kDecompositions) && it->cp == cp ? it : nullptr;
}

// The full decomposition of cp: canonical, and with `compatibility` also the <tag> ones (NFKD).
void decompose(char32_t cp, std::u32string& out, bool compatibility) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const char32_t s = cp - kSBase;
    out += kLBase + s / kNCount;
    out += kVBase + (s % kNCount) / kTCount;
    if (s % kTCount) out += kTBase + s % kTCount;
    return;
  }
  if (const Decomposition* d = decomposition(cp)) {
    decompose(d->first, out, compatibility);
    if (d->second) decompose(d->second, out, compatibility);
    return;
  }
  if (compatibility) {
    const auto it = std::lower_bound(std::begin(kCompatibilityDecompositions), std::end(kCompatibilityDecompositions),
                                     cp, [](const CompatibilityDecomposition& d, char32_t c) { return d.cp < c; });
    if (it != std::end(kCompatibilityDecompositions) && it->cp == cp) {
      for (std::size_t i = 0; i < it->length; ++i) decompose(kCompatibilityPool[it->offset + i], out, true);
      return;
    }
  }
  out += cp;
}

// Primary composites by their pair, built once.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  static const std::unordered_map<std::uint64_t, char32_t> kPairs = [] {
    std::unordered_map<std::uint64_t, char32_t> pairs;
    for (const Decomposition& d : kDecompositions)
      if (d.composes) pairs.emplace((std::uint64_t{d.first} << 32) | d.second, d.cp);
    return pairs;
  }();
  const auto it = kPairs.find((std::uint64_t{a} << 32) | b);
  return it == kPairs.end() ? 0 : it->second;
}

// NFC, NFD, NFKC, NFKD (UAX #15): decompose (compatibility: also the <tag> mappings), order the
// combining marks, then (compose) compose canonically.
std::string normalize_form(std::string_view text, bool compatibility, bool compose_after) {
  // Below U+0300 no canonical decomposition gives a sequence that would compose differently, and
  // nothing combines: such text is its own NFC and NFD (all of ASCII and Latin-1 prose). The
  // compatibility forms map some Latin-1 (U+00A0, ², ½): there only ASCII is kept as is.
  const char32_t plain = compatibility ? 0xA0 : 0x300;
  bool simple = true;
  for (std::size_t pos = 0; pos < text.size() && simple;) {
    const auto [cp, length] = unicode::decode_utf8(text, pos);
    simple = cp < plain && (compose_after || cp < 0xC0);   // NFD splits Latin-1's accented letters
    pos += static_cast<std::size_t>(length > 0 ? length : 1);
  }
  if (simple) return std::string(text);

  std::u32string d;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [cp, length] = unicode::decode_utf8(text, pos);
    decompose(cp, d, compatibility);
    pos += static_cast<std::size_t>(length > 0 ? length : 1);
  }
  // Canonical ordering: each run of non-starters sorted by class, stably.
  for (std::size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<std::ptrdiff_t>(i), d.begin() + static_cast<std::ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  if (!compose_after) {
    std::string out;
    out.reserve(text.size());
    for (char32_t cp : d) unicode::append_utf8(out, cp);
    return out;
  }
  // Canonical composition: each character joins the last starter unless blocked.
  std::u32string c;
  std::ptrdiff_t starter = -1;
  int last_class = -1;
  for (char32_t cp : d) {
    const int cls = combining_class(cp);
    if (starter >= 0 && (last_class < cls || last_class == 0)) {
      if (const char32_t composite = compose(c[static_cast<std::size_t>(starter)], cp)) {
        c[static_cast<std::size_t>(starter)] = composite;
        continue;
      }
    }
    if (cls == 0) starter = static_cast<std::ptrdiff_t>(c.size());
    last_class = cls;
    c += cp;
  }
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : c) unicode::append_utf8(out, cp);
  return out;
}

// Rust's char::to_lowercase per code point (the library's NormalizedString::lowercase): the full
// mapping, without the context-dependent final sigma.
std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    // Not a structured binding: the lambda below captures cp, which clang 14 refuses.
    const unicode::Utf8Char ch = unicode::decode_utf8(text, pos);
    const char32_t cp = ch.cp;
    pos += static_cast<std::size_t>(ch.length > 0 ? ch.length : 1);
    if (cp < 0x80) {
      out += static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp);
      continue;
    }
    if (const auto pair = std::find_if(std::begin(kLowercasePairs), std::end(kLowercasePairs),
                                       [&](const Lowercase& l) { return l.cp == cp; });
        pair != std::end(kLowercasePairs)) {
      unicode::append_utf8(out, pair->first);
      unicode::append_utf8(out, pair->second);
      continue;
    }
    const auto run = std::upper_bound(std::begin(kLowercaseRuns), std::end(kLowercaseRuns), cp,
                                      [](char32_t c, const LowercaseRun& r) { return c < r.first; });
    if (run != std::begin(kLowercaseRuns)) {
      const LowercaseRun& r = *(run - 1);
      if (cp <= r.last && (cp - r.first) % r.stride == 0) {
        unicode::append_utf8(out, static_cast<char32_t>(static_cast<std::int32_t>(cp) + r.delta));
        continue;
      }
    }
    unicode::append_utf8(out, cp);
  }
  return out;
}

// The library's Strip normalizer: leading / trailing char::is_whitespace (White_Space).
std::string strip(std::string_view text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  while (left && begin < end) {
    const auto [cp, length] = unicode::decode_utf8(text, begin);
    if (length == 0 || !unicode::is_whitespace(cp)) break;
    begin += static_cast<std::size_t>(length);
  }
  while (right && end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const auto [cp, length] = unicode::decode_utf8(text, start);
    if (length == 0 || !unicode::is_whitespace(cp)) break;
    end = start;
  }
  return std::string(text.substr(begin, end - begin));
}

// Each non-overlapping occurrence, leftmost first, replaced (the library's NormalizedString::replace).
std::string replace(const NormalizerStep& step, const std::string& text) {
  return replace_matches(step.regex.get(), step.literal, step.content, text);
}

}   // namespace

std::string normalize(const std::vector<NormalizerStep>& steps, std::string_view text) {
  std::string out(text);
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::Nfc:
        out = normalize_form(out, false, true);
        break;
      case NormalizerStep::Kind::Nfd:
        out = normalize_form(out, false, false);
        break;
      case NormalizerStep::Kind::Nfkc:
        out = normalize_form(out, true, true);
        break;
      case NormalizerStep::Kind::Nfkd:
        out = normalize_form(out, true, false);
        break;
      case NormalizerStep::Kind::Lowercase:
        out = lowercase(out);
        break;
      case NormalizerStep::Kind::Strip:
        out = strip(out, step.strip_left, step.strip_right);
        break;
      case NormalizerStep::Kind::Prepend:
        if (!out.empty()) out.insert(0, step.content);
        break;
      case NormalizerStep::Kind::Replace:
        out = replace(step, out);
        break;
    }
  }
  return out;
}

}   // namespace glassbox
