// Numbers on the command line are decimal: "--lens 010" is ten.
#pragma once

#include <CLI/CLI.hpp>

// CLI11 reads integers with strtoll's base 0 (010 is octal eight, 0x10 hex sixteen, and an
// unsigned option takes -1 as 2^64 - 1) and floats with strtold (hex floats, leading spaces).
// This gives every integer and float option of `app` and its subcommands a transform that accepts
// decimal numbers only (leading zeros and a "+" allowed; floats also nan and inf, which the
// settings' own checks refuse where they make no sense) and refuses the rest, the empty value and
// a negative number for an unsigned option with a message naming the option and the value.
// Call it once every option has been added.
void make_numbers_decimal(CLI::App& app);
