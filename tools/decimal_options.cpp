#include "decimal_options.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "glassbox/quoted.h"

namespace {

bool all_digits(const std::string& s, std::size_t from, std::size_t to) {
  return from < to && std::all_of(s.begin() + static_cast<long>(from), s.begin() + static_cast<long>(to),
                                  [](unsigned char c) { return std::isdigit(c) != 0; });
}

// [+-]digits, as sign and digits without leading zeros ("-007" -> "-7"), or "" if it is not one.
std::string decimal_integer(const std::string& s) {
  const bool sign = !s.empty() && (s[0] == '+' || s[0] == '-');
  if (!all_digits(s, sign ? 1 : 0, s.size())) return "";
  std::size_t first = s.find_first_not_of('0', sign ? 1 : 0);
  std::string digits = first == std::string::npos ? "0" : s.substr(first);
  return (s[0] == '-' && digits != "0" ? "-" : "") + digits;
}

// [+-](digits[.digits] | .digits)[(e|E)[+-]digits], or nan, inf, infinity in any case.
bool decimal_float(const std::string& s) {
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  std::string word = s.substr(i);
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  if (word == "nan" || word == "inf" || word == "infinity") return true;
  const std::size_t e = s.find_first_of("eE", i);
  const std::string mantissa = s.substr(i, e == std::string::npos ? std::string::npos : e - i);
  const std::size_t dot = std::min(mantissa.find('.'), mantissa.size());
  const std::size_t whole = dot, fraction = dot < mantissa.size() ? mantissa.size() - dot - 1 : 0;
  const bool mantissa_ok = (whole > 0 || fraction > 0) && (whole == 0 || all_digits(mantissa, 0, dot)) &&
                           (fraction == 0 || all_digits(mantissa, dot + 1, mantissa.size()));
  if (!mantissa_ok) return false;
  if (e == std::string::npos) return true;
  const std::size_t exp = e + 1 + ((e + 1 < s.size() && (s[e + 1] == '+' || s[e + 1] == '-')) ? 1 : 0);
  return all_digits(s, exp, s.size());
}

std::string check(std::string& value, const std::string& type) {
  if (value.empty()) return "needs a number, got an empty value";
  if (type == "FLOAT")
    return decimal_float(value) ? "" : "must be a decimal number like 0.5 or 1e-3, got " + glassbox::quote_text(value);
  const std::string integer = decimal_integer(value);
  if (integer.empty()) return "must be a whole number in decimal like 10, got " + glassbox::quote_text(value);
  if (type == "UINT" && integer[0] == '-')
    return "must be a whole number 0 or more, got " + (value.size() <= 40 ? value : glassbox::quote_text(value));
  // Beyond 64 bits strtoll and strtoull saturate, and CLI11 would take the largest value.
  const std::string limit = type == "UINT"      ? "18446744073709551615"
                            : integer[0] == '-' ? "-9223372036854775808"
                                                : "9223372036854775807";
  if (integer.size() > limit.size() || (integer.size() == limit.size() && integer > limit))
    return "is out of range, got " + glassbox::quote_text(value);
  value = integer;
  return "";
}

}   // namespace

void make_numbers_decimal(CLI::App& app) {
  std::vector<CLI::App*> apps = app.get_subcommands([](const CLI::App*) { return true; });
  apps.push_back(&app);
  for (CLI::App* a : apps)
    for (CLI::Option* option : a->get_options()) {
      const std::string type = option->get_type_name();
      if (type != "INT" && type != "UINT" && type != "FLOAT") continue;
      option->transform(CLI::Validator([type](std::string& value) { return check(value, type); }, ""));
    }
}
