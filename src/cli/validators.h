// Command-line value checks that say what was expected in our words (CLI11's
// own Range and PositiveNumber print ranges of 309 digits and let ints
// overflow). Each rejects with "expected ..., got '<text>'"; CLI11 prefixes the option.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace trainplan::cli {

// A whole number from lo to hi in plain decimal digits (no "+", space or leading zero).
CLI::Validator whole_in(long long lo, long long hi);
// A whole number from 1 to 2^31 - 1.
inline CLI::Validator positive_whole() { return whole_in(1, 2147483647); }
// A finite number >= 0.
CLI::Validator non_negative();
// A finite number > 0: for options whose unset value is 0 ("the default"), so
// that an explicit 0 is refused rather than silently read as the default.
CLI::Validator positive_number();
// Any text but the empty string.
CLI::Validator non_empty_value();
// A worker-thread count this machine can run: 0 (every core) up to four per
// hardware thread, and never fewer than 64 (results do not depend on it).
CLI::Validator thread_count();

}  // namespace trainplan::cli
