// The decoder steps (decoder.h), each as the Hugging Face library's decoders/*.rs decode_chain.
#include "tokenizer/decoder.h"

#include <string_view>

#include "tokenizer/byte_unicode.h"
#include "tokenizer/unicode.h"

namespace glassbox {
namespace {

std::string replace_all(const DecoderStep& step, const std::string& token) {
  return replace_matches(step.regex.get(), step.literal, step.content, token);
}

std::string replace_text(const std::string& token, const std::string& from, const char* to) {
  std::string out;
  std::size_t prev = 0;
  for (std::size_t pos = token.find(from); pos != std::string::npos; pos = token.find(from, prev)) {
    out.append(token, prev, pos - prev);
    out += to;
    prev = pos + from.size();
  }
  out.append(token, prev);
  return out;
}

// byte_fallback.rs: a run of byte tokens becomes its text when the bytes are valid UTF-8, else one
// U+FFFD per token (not per invalid sequence, as a lossy UTF-8 decode would give).
std::vector<std::string> byte_fallback(std::vector<std::string> tokens) {
  std::vector<std::string> out;
  std::string run;
  std::size_t run_tokens = 0;
  const auto flush = [&] {
    if (run_tokens == 0) return;
    if (unicode::valid_utf8_prefix(run) == run.size())
      out.push_back(run);
    else
      for (std::size_t i = 0; i < run_tokens; ++i) out.emplace_back("\uFFFD");
    run.clear();
    run_tokens = 0;
  };
  for (std::string& t : tokens) {
    if (const int b = fallback_byte(t); b >= 0) {
      run += static_cast<char>(b);
      ++run_tokens;
      continue;
    }
    flush();
    out.push_back(std::move(t));
  }
  flush();
  return out;
}

// strip.rs: counts characters, not bytes.
std::string strip(const DecoderStep& step, const std::string& token) {
  std::vector<std::pair<std::size_t, char32_t>> chars;   // (byte offset, code point)
  for (std::size_t pos = 0; pos < token.size();) {
    const auto [cp, length] = unicode::decode_utf8(token, pos);
    chars.emplace_back(pos, cp);
    pos += static_cast<std::size_t>(length > 0 ? length : 1);
  }
  std::size_t first = 0, last = chars.size();
  while (first < step.start && first < chars.size() && chars[first].second == step.strip) ++first;
  for (std::size_t i = 0; i < step.stop && last > first && chars[last - 1].second == step.strip; ++i) --last;
  const std::size_t begin = first < chars.size() ? chars[first].first : token.size();
  const std::size_t end = last < chars.size() ? chars[last].first : token.size();
  return token.substr(begin, end - begin);
}

std::string metaspace(const DecoderStep& step, const std::string& token, bool first) {
  std::string out;
  for (std::size_t pos = 0; pos < token.size();) {
    if (token.compare(pos, step.replacement.size(), step.replacement) == 0) {
      if (!first || step.prepend_never) out += ' ';
      pos += step.replacement.size();
    } else {
      out += token[pos++];
    }
  }
  return out;
}

std::string byte_level(const std::vector<std::string>& tokens) {
  std::string bytes;
  std::string token_bytes;
  for (const std::string& t : tokens) {
    token_bytes.clear();
    bytes += unicode_to_bytes(t, token_bytes) ? token_bytes : t;   // not byte-level characters: its own bytes
  }
  return unicode::replace_invalid_utf8(bytes);
}

}   // namespace

int fallback_byte(std::string_view token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token[5] != '>') return -1;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

std::string token_text(const std::vector<DecoderStep>& steps, const std::string& token) {
  std::string text = token;
  for (const DecoderStep& step : steps) {
    switch (step.kind) {
      case DecoderStep::Kind::ByteLevel:
        text = byte_level({text});
        break;
      case DecoderStep::Kind::Replace:
        text = replace_all(step, text);
        break;
      case DecoderStep::Kind::ByteFallback:
        if (const int b = fallback_byte(text); b >= 0) text = std::string(1, static_cast<char>(b));
        break;
      case DecoderStep::Kind::Fuse:
      case DecoderStep::Kind::Strip:   // acts on a whole text's ends (after Fuse), not inside it
        break;
      case DecoderStep::Kind::Metaspace:
        text = metaspace(step, text, false);
        break;
      case DecoderStep::Kind::BpeSuffix:
        text = replace_text(text, step.literal, " ");
        break;
    }
  }
  return text;
}

std::string decode_chain(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens) {
  for (const DecoderStep& step : steps) {
    switch (step.kind) {
      case DecoderStep::Kind::ByteLevel:
        tokens = {byte_level(tokens)};
        break;
      case DecoderStep::Kind::Replace:
        for (std::string& t : tokens) t = replace_all(step, t);
        break;
      case DecoderStep::Kind::ByteFallback:
        tokens = byte_fallback(std::move(tokens));
        break;
      case DecoderStep::Kind::Fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens = {std::move(all)};
        break;
      }
      case DecoderStep::Kind::Strip:
        for (std::string& t : tokens) t = strip(step, t);
        break;
      case DecoderStep::Kind::Metaspace:
        for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = metaspace(step, tokens[i], i == 0);
        break;
      case DecoderStep::Kind::BpeSuffix:   // decoders/bpe.rs
        for (std::size_t i = 0; i < tokens.size(); ++i)
          tokens[i] = replace_text(tokens[i], step.literal, i + 1 == tokens.size() ? "" : " ");
        break;
    }
  }
  std::string text;
  for (const std::string& t : tokens) text += t;
  return text;
}

}   // namespace glassbox
