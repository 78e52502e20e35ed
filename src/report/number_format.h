// Number formatting for humans (text, markdown) and for machines (csv, json).
// Numbers arrive raw in SI base units (s, B, FLOP/s, fractions for percent);
// human forms scale them ("1.23 ms", "45.6 GiB"), machine forms never do.
// Non-finite values render as "n/a" / "inf" for humans.
#pragma once
#include <string>
#include <string_view>

namespace trainplan::report {

// fixed:       value with `decimals` decimals ("3.14").
// integer:     rounded, thousands separated by commas ("10,102,387").
// percent:     a fraction shown as percent with `decimals` decimals ("98.81%").
// engineering: three significant-ish figures with a scaled unit: seconds take
//              ns/µs/ms/s, bytes ("B") take binary prefixes (KiB..PiB), any
//              other unit takes decimal prefixes (k, M, G, T, P): "45.6 TFLOP/s".
enum class NumberStyle { fixed, integer, percent, engineering };

std::string format_human(double value, NumberStyle style, int decimals, std::string_view unit);

// Shortest text that reads back to the same double; integers without ".0".
std::string format_raw(double value);

// A unit as a key suffix: "s" -> "s", "B" -> "bytes", "B/s" -> "bytes_per_s",
// "FLOP/s" -> "flops_per_s", "tokens/s" -> "tokens_per_s", "USD" -> "usd", "" -> "".
std::string unit_key(std::string_view unit);

// Lower-case snake_case of a header: "Step time" -> "step_time".
std::string snake_case(std::string_view text);

// Terminal columns a UTF-8 string occupies (code points; no wide glyphs expected).
std::size_t display_width(std::string_view text);

}  // namespace trainplan::report
