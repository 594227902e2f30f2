// Python's str operations, which count and cut by code point, over UTF-8 text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace glassbox::jinja {

// UTF-8 <-> code points. A byte that is not part of valid UTF-8 decodes as the lone surrogate
// kEscapedByte + byte (Python's "surrogateescape") and encodes back to that byte, so any bytes
// survive a round trip; such a code point is neither a space nor a letter.
constexpr char32_t kEscapedByte = 0xDC00;

// The longest string a template may make (64 MiB), and so the longest output: a bound for hostile
// templates that no real one comes near.
constexpr size_t kMaxStringBytes = size_t{1} << 26;
std::u32string utf8_decode(const std::string& s);
std::string utf8_encode(const std::u32string& s);

// str.isspace() of one code point.
bool python_space(char32_t c);

// str.strip/lstrip/rstrip: whitespace when chars is absent, else any of chars.
std::string python_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right);
// str.split(sep, maxsplit): runs of whitespace when sep is absent (no empty parts), else sep.
// Throws std::invalid_argument for an empty sep.
std::vector<std::string> python_split(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit);
// str.replace(old, new, count).
std::string python_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count);
// str.upper/lower/title/capitalize (ASCII letters change; other letters stay as they are).
std::string ascii_upper(std::string s);
std::string ascii_lower(std::string s);
std::string python_title(const std::string& s);
std::string python_capitalize(const std::string& s);

// The indices seq[start:stop:step] visits in a sequence of length n (Python's slice.indices).
// Throws std::invalid_argument for a zero step.
std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                   std::optional<int64_t> step);

}   // namespace glassbox::jinja
