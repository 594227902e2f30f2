// Character classes against hand-picked characters (not against another table), and strict UTF-8.
#include "tokenizer/unicode.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace glassbox::unicode {
namespace {

enum Class { Letter, Number, Space, None };

void expect_class(char32_t cp, Class expected) {
  SCOPED_TRACE(testing::Message() << "U+" << std::hex << std::uppercase << static_cast<unsigned>(cp));
  EXPECT_EQ(is_letter(cp), expected == Letter);
  EXPECT_EQ(is_number(cp), expected == Number);
  EXPECT_EQ(is_whitespace(cp), expected == Space);
}

std::string utf8(char32_t cp) {
  std::string s;
  append_utf8(s, cp);
  return s;
}

bool is_scalar(char32_t cp) { return cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF); }

TEST(Unicode, VersionComesFromTheGeneratedTables) {
  EXPECT_FALSE(unicode_version().empty());
  RecordProperty("unicode_version", std::string(unicode_version()));
}

TEST(Unicode, Ascii) {
  for (char32_t c = 'A'; c <= 'Z'; ++c) expect_class(c, Letter);
  for (char32_t c = 'a'; c <= 'z'; ++c) expect_class(c, Letter);
  for (char32_t c = '0'; c <= '9'; ++c) expect_class(c, Number);
  for (char32_t c : {U' ', U'\t', U'\n', U'\v', U'\f', U'\r'}) expect_class(c, Space);
  for (char32_t c : U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") expect_class(c, None);
  expect_class(0x00, None);
  expect_class(0x08, None);
  expect_class(0x1C, None);   // file separator: Python's str.isspace() says yes, White_Space says no
  expect_class(0x1F, None);
  expect_class(0x7F, None);
}

TEST(Unicode, Latin1) {
  expect_class(U'é', Letter);
  expect_class(U'ß', Letter);
  expect_class(U'ÿ', Letter);     // U+00FF, last entry of the fast table
  expect_class(0x0100, Letter);   // Ā, first code point looked up by search
  expect_class(U'ª', Letter);     // Lo
  expect_class(U'µ', Letter);     // Ll
  expect_class(U'×', None);       // Sm, between two letter ranges
  expect_class(U'÷', None);
  expect_class(U'²', Number);   // superscript two, No
  expect_class(U'¹', Number);
  expect_class(U'½', Number);    // U+00BD, No
  expect_class(0x0085, Space);   // NEXT LINE
  expect_class(0x00A0, Space);   // NO-BREAK SPACE
  expect_class(0x00AD, None);    // soft hyphen, Cf
  expect_class(U'§', None);
}

TEST(Unicode, Letters) {
  expect_class(U'Ω', Letter);   // Greek
  expect_class(U'λ', Letter);
  expect_class(U'Ж', Letter);   // Cyrillic
  expect_class(U'я', Letter);
  expect_class(0x01C5, Letter);    // ǅ, Lt
  expect_class(0x02B0, Letter);    // ʰ, Lm
  expect_class(0x3005, Letter);    // 々, Lm
  expect_class(0x4E00, Letter);    // 一, CJK
  expect_class(0x9FFF, Letter);    // last of the CJK block (a First/Last pair in UnicodeData.txt)
  expect_class(0x20000, Letter);   // CJK extension B, another First/Last pair
  expect_class(0xAC00, Letter);    // 가, Hangul syllables, First/Last pair
  expect_class(0xD7A3, Letter);    // last Hangul syllable
  expect_class(0xD7A4, None);
  expect_class(0x0627, Letter);   // ا, Arabic
  expect_class(0x05D0, Letter);   // א, Hebrew
  expect_class(0x0E01, Letter);   // ก, Thai
  expect_class(0x0915, Letter);   // क, Devanagari
  expect_class(0x093F, None);     // Devanagari vowel sign I: Mc, a mark, not a letter
  expect_class(0x0301, None);     // combining acute accent, Mn
  expect_class(0x0345, None);     // combining ypogegrammeni: Mn although Alphabetic
}

TEST(Unicode, Numbers) {
  expect_class(0x0661, Number);    // ١ Arabic-Indic digit one, Nd
  expect_class(0x06F1, Number);    // ۱ extended Arabic-Indic, Nd
  expect_class(0x0967, Number);    // १ Devanagari, Nd
  expect_class(0xFF10, Number);    // ０ fullwidth, Nd
  expect_class(0x1D7CE, Number);   // mathematical bold digit zero, Nd
  expect_class(0x2160, Number);    // Ⅰ Roman numeral one, Nl
  expect_class(0x3007, Number);    // 〇 ideographic zero: Nl, not a letter
  expect_class(0x2460, Number);    // ① circled one, No
  expect_class(0x2070, Number);    // ⁰ superscript zero, No
  expect_class(0x4E09, Letter);    // 三 "three": a letter (Lo), not a number
}

TEST(Unicode, WhiteSpace) {
  for (char32_t c : {0x1680u, 0x2000u, 0x2003u, 0x200Au, 0x2028u, 0x2029u, 0x202Fu, 0x205Fu, 0x3000u})
    expect_class(c, Space);
  expect_class(0x200B, None);   // zero-width space: Cf, not White_Space
  expect_class(0x200C, None);
  expect_class(0x2060, None);   // word joiner
  expect_class(0xFEFF, None);   // byte order mark
  expect_class(0x180E, None);   // Mongolian vowel separator: White_Space only until Unicode 6.2
}

TEST(Unicode, OtherCharacters) {
  expect_class(0x1F600, None);   // 😀
  expect_class(0x1F1E6, None);   // regional indicator A
  expect_class(0x2764, None);    // ❤
  expect_class(0x20AC, None);    // €
  expect_class(0x3001, None);    // 、 ideographic comma
  expect_class(0xFFFD, None);
  expect_class(0xE000, None);   // private use
  expect_class(0xD800, None);   // surrogate
  expect_class(0x10FFFF, None);
  expect_class(0x110000, None);   // beyond Unicode
  expect_class(0xFFFFFFFF, None);
}

// \w, the regex crate's (UTS #18): Alphabetic | M | Nd | Pc | Join_Control.
TEST(Unicode, Word) {
  auto expect_word = [](char32_t cp, bool expected) {
    SCOPED_TRACE(testing::Message() << "U+" << std::hex << std::uppercase << static_cast<unsigned>(cp));
    EXPECT_EQ(is_word(cp), expected);
  };
  for (char32_t c : U"azAZ09_\u00e9\u00df\u00aa\u03a9\u0416\u4e00\u9fff\uac00\u3005") expect_word(c, c != 0);
  for (char32_t c : U" \t\n!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~\u00a0\u00d7\u00bd\u00b2") expect_word(c, false);
  expect_word(0x20000, true);   // CJK extension B (a letter, found through is_letter)
  expect_word(0x2160, true);    // Ⅰ: Nl is Alphabetic
  expect_word(0x3007, true);    // 〇: Nl
  expect_word(0x0345, true);    // Mn and Other_Alphabetic
  expect_word(0x0301, true);    // combining acute accent, Mn
  expect_word(0x093F, true);    // Devanagari vowel sign I, Mc
  expect_word(0x20DD, true);    // combining enclosing circle, Me
  expect_word(0xFE0F, true);    // variation selector 16, Mn
  expect_word(0xE0100, true);   // variation selector 17, first of the last range
  expect_word(0xE01EF, true);   // variation selector 256, the last \w code point
  expect_word(0xE01F0, false);
  expect_word(0x0661, true);    // Arabic-Indic digit one, Nd
  expect_word(0x0967, true);    // Devanagari digit one, Nd
  expect_word(0xFF10, true);    // fullwidth digit zero, Nd
  expect_word(0x1D7CE, true);   // mathematical bold digit zero, Nd
  expect_word(0x1FBF9, true);   // segmented digit nine, Nd
  expect_word(0x2460, false);   // ① circled one: No is not \w
  expect_word(0x203F, true);    // ‿ undertie, Pc
  expect_word(0xFF3F, true);    // fullwidth low line, Pc
  expect_word(0x2040, true);    // ⁀ character tie, Pc
  expect_word(0x200C, true);    // ZWNJ, Join_Control
  expect_word(0x200D, true);    // ZWJ, Join_Control
  expect_word(0x200B, false);   // zero-width space, Cf
  expect_word(0x200E, false);   // left-to-right mark, Cf
  expect_word(0xFEFF, false);
  expect_word(0x1F130, true);    // 🄰 squared Latin capital A: So but Other_Alphabetic
  expect_word(0x1F12F, false);   // 🄯 copyleft symbol, So, just before it
  expect_word(0x1F600, false);   // 😀
  expect_word(0x1F3FD, false);   // skin tone modifier, Sk
  expect_word(0x2764, false);    // ❤
  expect_word(0x3001, false);    // 、
  expect_word(0x2014, false);    // em dash, Pd
  expect_word(0x00AB, false);    // «, Pi
  expect_word(0xFFFD, false);
  expect_word(0xE000, false);   // private use
  expect_word(0xD800, false);   // surrogate
  expect_word(0x10FFFF, false);
  expect_word(0x110000, false);
  expect_word(0x7FFFFFFF, false);
  expect_word(0xFFFFFFFF, false);
}

TEST(Utf8, EncodesKnownSequences) {
  EXPECT_EQ(utf8(0x00), std::string(1, '\0'));
  EXPECT_EQ(utf8(0x7F), "\x7F");
  EXPECT_EQ(utf8(0x80), "\xC2\x80");
  EXPECT_EQ(utf8(0x7FF), "\xDF\xBF");
  EXPECT_EQ(utf8(0x800), "\xE0\xA0\x80");
  EXPECT_EQ(utf8(0xD7FF), "\xED\x9F\xBF");
  EXPECT_EQ(utf8(0xE000), "\xEE\x80\x80");
  EXPECT_EQ(utf8(0xFFFF), "\xEF\xBF\xBF");
  EXPECT_EQ(utf8(0x10000), "\xF0\x90\x80\x80");
  EXPECT_EQ(utf8(0x1F600), "\xF0\x9F\x98\x80");
  EXPECT_EQ(utf8(0x10FFFF), "\xF4\x8F\xBF\xBF");
  EXPECT_EQ(utf8(0xD800), "\xEF\xBF\xBD");   // not a scalar value: U+FFFD
  EXPECT_EQ(utf8(0x110000), "\xEF\xBF\xBD");
}

TEST(Utf8, RoundTripsEveryScalarValue) {
  std::string all;
  for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (!is_scalar(cp)) continue;
    const std::string s = utf8(cp);
    const int expected_length = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    ASSERT_EQ(static_cast<int>(s.size()), expected_length) << std::hex << static_cast<unsigned>(cp);
    const Utf8Char c = decode_utf8(s, 0);
    ASSERT_EQ(c.cp, cp);
    ASSERT_EQ(c.length, expected_length);
    all += s;
  }
  EXPECT_TRUE(is_valid_utf8(all));
  EXPECT_EQ(valid_utf8_prefix(all), all.size());
  EXPECT_EQ(complete_utf8_prefix(all), all.size());
  EXPECT_EQ(replace_invalid_utf8(all), all);
}

// Every 1-, 2- and 3-byte string, and the 4-byte strings with every lead and second byte: a decoder
// that accepts a string must give a scalar value whose encoding is exactly that string (this is
// what excludes overlong forms). The round trip above shows that all encodings are accepted.
TEST(Utf8, AcceptsOnlyShortestFormsOfScalarValues) {
  char buf[4];
  auto check = [&buf](std::size_t n) {
    const std::string_view s(buf, n);
    const Utf8Char c = decode_utf8(s, 0);
    if (c.length == 0) return;
    ASSERT_TRUE(is_scalar(c.cp)) << std::hex << static_cast<unsigned>(c.cp);
    ASSERT_EQ(utf8(c.cp), s.substr(0, static_cast<std::size_t>(c.length)));
  };
  for (int a = 0; a < 256; ++a) {
    buf[0] = static_cast<char>(a);
    check(1);
    for (int b = 0; b < 256; ++b) {
      buf[1] = static_cast<char>(b);
      check(2);
      for (int c = 0; c < 256; ++c) {
        buf[2] = static_cast<char>(c);
        check(3);
      }
      for (int c : {0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF}) {
        buf[2] = static_cast<char>(c);
        for (int d : {0x00, 0x80, 0xBF, 0xC0}) {
          buf[3] = static_cast<char>(d);
          check(4);
        }
      }
    }
  }
}

TEST(Utf8, RejectsEachInvalidForm) {
  const char* invalid[] = {
      "\x80",
      "\xBF",   // stray continuation bytes
      "\xC0\x80",
      "\xC1\xBF",   // overlong 2-byte (U+0000, U+007F)
      "\xE0\x80\x80",
      "\xE0\x9F\xBF",   // overlong 3-byte (below U+0800)
      "\xF0\x80\x80\x80",
      "\xF0\x8F\xBF\xBF",   // overlong 4-byte (below U+10000)
      "\xED\xA0\x80",
      "\xED\xBF\xBF",   // surrogates U+D800, U+DFFF
      "\xF4\x90\x80\x80",
      "\xF7\xBF\xBF\xBF",   // above U+10FFFF
      "\xF5\x80\x80\x80",
      "\xF8\x88\x80\x80\x80",
      "\xFE",
      "\xFF",   // bytes never used
      "\xC3",
      "\xE2\x82",
      "\xF0\x9F\x98",   // truncated at the end
      "\xC3"
      "A",
      "\xE2\x82"
      "A",
      "\xF0\x9F"
      "AA",             // truncated by a non-continuation byte
      "\xE2\xC3\xA9",   // a new lead byte where a continuation was due
  };
  for (const char* s : invalid) {
    const std::string_view text(s);
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_EQ(decode_utf8(text, 0).length, 0);
    EXPECT_EQ(decode_utf8(text, 0).cp, 0xFFFDu);
    EXPECT_FALSE(is_valid_utf8(text));
    EXPECT_EQ(valid_utf8_prefix(std::string("ok") + s), 2u);
  }
  EXPECT_EQ(decode_utf8("abc", 3).length, 0);   // past the end
  EXPECT_TRUE(is_valid_utf8(""));
}

TEST(Utf8, DecodesAtAnOffset) {
  const std::string text = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";   // a é € 😀
  EXPECT_EQ(decode_utf8(text, 1).cp, U'é');
  EXPECT_EQ(decode_utf8(text, 3).cp, U'€');
  EXPECT_EQ(decode_utf8(text, 6).cp, 0x1F600u);
  EXPECT_EQ(decode_utf8(text, 6).length, 4);
  EXPECT_EQ(decode_utf8(text, 2).length, 0);   // inside é
}

TEST(Utf8, CompletePrefixHoldsBackOnlyIncompleteValidTails) {
  EXPECT_EQ(complete_utf8_prefix(""), 0u);
  EXPECT_EQ(complete_utf8_prefix("abc"), 3u);
  // Every proper prefix of every multi-byte character is held back, after any text.
  for (char32_t cp : {0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFFu, 0x10000u, 0x1F600u, 0x10FFFFu}) {
    const std::string s = utf8(cp);
    for (std::size_t n = 1; n < s.size(); ++n) {
      EXPECT_EQ(complete_utf8_prefix(s.substr(0, n)), 0u) << std::hex << static_cast<unsigned>(cp) << " " << n;
      EXPECT_EQ(complete_utf8_prefix("x\xC3\xA9" + s.substr(0, n)), 3u)
          << std::hex << static_cast<unsigned>(cp) << " " << n;
    }
    EXPECT_EQ(complete_utf8_prefix("x" + s), 1 + s.size());
  }
  // Invalid bytes count as complete, at the end too: nothing can follow that makes them valid.
  EXPECT_EQ(complete_utf8_prefix("a\x80"), 2u);
  EXPECT_EQ(complete_utf8_prefix("a\xC0"), 2u);   // C0 only starts overlong forms
  EXPECT_EQ(complete_utf8_prefix("a\xFF"), 2u);
  EXPECT_EQ(complete_utf8_prefix("a\xE0\x80"), 3u);   // overlong whatever follows
  EXPECT_EQ(complete_utf8_prefix("a\xED\xA0"), 3u);   // a surrogate whatever follows
  EXPECT_EQ(complete_utf8_prefix("a\xF4\x90"), 3u);   // above U+10FFFF whatever follows
  EXPECT_EQ(complete_utf8_prefix("a\xE2\x82"
                                 "b"),
            4u);   // broken by 'b'
  // Invalid bytes in the middle, then an incomplete character: only the tail is held back.
  EXPECT_EQ(complete_utf8_prefix("\x80"
                                 "b\xC3\xA9\xF0\x9F\x98"),
            4u);
}

TEST(Utf8, ReplacesEachMaximalSubpartWithOneReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(replace_invalid_utf8("abc"), "abc");
  EXPECT_EQ(replace_invalid_utf8("a\xF0\x9F\x98"), "a" + r);   // one truncated character
  EXPECT_EQ(replace_invalid_utf8("\xF0\x9F\x98"
                                 "a"),
            r + "a");
  EXPECT_EQ(replace_invalid_utf8("\xC0\xAF"), r + r);   // C0 is never a lead byte
  EXPECT_EQ(replace_invalid_utf8("\xE0\x80\xAF"), r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xED\xA0\x80"), r + r + r);   // surrogate
  EXPECT_EQ(replace_invalid_utf8("\xF4\x90\x80\x80"), r + r + r + r);
  EXPECT_EQ(replace_invalid_utf8("\xE2\x82\xE2\x82\xAC"), r + "\xE2\x82\xAC");
  EXPECT_EQ(replace_invalid_utf8("\x80\x80"), r + r);
}

}   // namespace
}   // namespace glassbox::unicode
