// Shared by the libFuzzer targets: the library's errors are the expected outcome of bad input; any
// other exception, a crash, a leak or undefined behaviour (the sanitizers) is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "glassbox/error.h"

namespace glassbox::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits the input at its first NUL byte: (before, after); no NUL: (all, "").
inline std::pair<std::string_view, std::string_view> split_at_nul(std::string_view s) {
  const auto nul = s.find('\0');
  if (nul == std::string_view::npos) return {s, {}};
  return {s.substr(0, nul), s.substr(nul + 1)};
}

}   // namespace glassbox::fuzz
