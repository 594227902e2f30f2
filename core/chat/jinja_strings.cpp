// Python's str semantics: every length, index and cut is by code point.
#include "chat/jinja_strings.h"

#include <algorithm>
#include <stdexcept>

#include "tokenizer/unicode.h"

namespace glassbox::jinja {

std::u32string utf8_decode(const std::string& s) {
  std::u32string out;
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    bool valid = extra >= 0 && i + static_cast<size_t>(extra) < s.size();
    char32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1F) : extra == 2 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; valid && k <= extra; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
      if ((d >> 6) != 2) valid = false;
      cp = (cp << 6) | (d & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too, so that every byte
    // string decodes and encodes back to itself.
    static const char32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (valid && extra > 0 && (cp < smallest[extra] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)) valid = false;
    if (!valid) {
      out += kEscapedByte + c;
      ++i;
    } else {
      out += cp;
      i += static_cast<size_t>(extra) + 1;
    }
  }
  return out;
}

std::string utf8_encode(const std::u32string& s) {
  std::string out;
  for (char32_t cp : s) {
    if (cp >= kEscapedByte + 0x80 && cp <= kEscapedByte + 0xFF) {
      out += static_cast<char>(cp - kEscapedByte);
    } else {
      unicode::append_utf8(out, cp);   // (another lone surrogate, or past U+10FFFF: U+FFFD)
    }
  }
  return out;
}

bool python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string python_strip(const std::string& s, const std::optional<std::string>& chars, bool left, bool right) {
  const std::u32string text = utf8_decode(s);
  const std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
  const auto strip = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : python_space(c); };
  size_t begin = 0, end = text.size();
  if (left)
    while (begin < end && strip(text[begin])) ++begin;
  if (right)
    while (end > begin && strip(text[end - 1])) --end;
  return utf8_encode(text.substr(begin, end - begin));
}

std::vector<std::string> python_split(const std::string& s, const std::optional<std::string>& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep) {
    if (sep->empty()) throw std::invalid_argument("empty separator");
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t at = s.find(*sep, start);
      if (at == std::string::npos) break;
      parts.push_back(s.substr(start, at - start));
      start = at + sep->size();
    }
    parts.push_back(s.substr(start));
    return parts;
  }
  const std::u32string text = utf8_decode(s);
  size_t i = 0;
  while (true) {
    while (i < text.size() && python_space(text[i])) ++i;
    if (i == text.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      size_t end = text.size();
      while (end > i && python_space(text[end - 1])) --end;
      parts.push_back(utf8_encode(text.substr(i, end - i)));
      break;
    }
    const size_t start = i;
    while (i < text.size() && !python_space(text[i])) ++i;
    parts.push_back(utf8_encode(text.substr(start, i - start)));
  }
  return parts;
}

std::string python_replace(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` before every code point and at the end.
    const std::u32string text = utf8_decode(s);
    int64_t done = 0;
    if (to.size() * (text.size() + 1) > kMaxStringBytes)
      throw std::invalid_argument("the replaced string would be longer than " + std::to_string(kMaxStringBytes) +
                                  " bytes");
    for (char32_t c : text) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      out += utf8_encode(std::u32string(1, c));
    }
    if (count < 0 || done < count) out += to;
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t at = s.find(from, start);
    if (at == std::string::npos) break;
    if (out.size() + (at - start) + to.size() > kMaxStringBytes)
      throw std::invalid_argument("the replaced string would be longer than " + std::to_string(kMaxStringBytes) +
                                  " bytes");
    out += s.substr(start, at - start) + to;
    start = at + from.size();
    ++done;
  }
  return out + s.substr(start);
}

std::string ascii_upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  return s;
}

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return s;
}

std::string python_title(const std::string& s) {
  std::string out = s;
  bool previous_cased = false;
  for (char& c : out) {
    const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z';
    if (lower && !previous_cased)
      c = static_cast<char>(c - 32);
    else if (upper && previous_cased)
      c = static_cast<char>(c + 32);
    previous_cased = lower || upper;
  }
  return out;
}

std::string python_capitalize(const std::string& s) {
  std::string out = ascii_lower(s);
  if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = static_cast<char>(out[0] - 32);
  return out;
}

std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                   std::optional<int64_t> step) {
  const int64_t st = step.value_or(1);
  if (st == 0) throw std::invalid_argument("slice step cannot be zero");
  const auto clamp = [&](std::optional<int64_t> v, int64_t fallback) {
    if (!v) return fallback;
    int64_t i = *v < 0 ? *v + n : *v;
    if (st > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  const int64_t b = clamp(start, st > 0 ? 0 : n - 1);
  const int64_t e = clamp(stop, st > 0 ? n : -1);
  std::vector<int64_t> out;
  for (int64_t i = b; st > 0 ? i < e : i > e;) {
    out.push_back(i);
    if (st > 0 ? e - i <= st : i - e <= -st) break;   // the next index would pass the end (or overflow)
    i += st;
  }
  return out;
}

}   // namespace glassbox::jinja
