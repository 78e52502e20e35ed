#include "report/number_format.h"

#include <array>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <span>

namespace trainplan::report {
namespace {

struct Scale {
  double factor;
  const char* label;  // prefix, or the whole unit when replace_unit
};

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals < 0 ? 0 : decimals, value);
  return buffer;
}

std::string non_finite(double value) {
  if (std::isnan(value)) return "n/a";
  return value > 0 ? "inf" : "-inf";
}

// Three significant figures, as "1.23", "45.6", "789".
std::string three_figures(double magnitude) {
  if (magnitude >= 99.95) return fixed(magnitude, 0);
  if (magnitude >= 9.995) return fixed(magnitude, 1);
  return fixed(magnitude, 2);
}

// Picks the largest scale whose factor does not exceed the magnitude, after rounding
// to three figures so that 999.96 ms becomes "1.00 s", not "1000 ms".
std::string scaled(double value, std::span<const Scale> scales, bool replace_unit, std::string_view unit) {
  const double magnitude = std::fabs(value);
  if (magnitude == 0) return unit.empty() ? std::string("0") : "0 " + std::string(unit);
  const Scale* chosen = &scales.front();
  for (const Scale& scale : scales) {
    if (magnitude >= scale.factor * 0.9995) chosen = &scale;
    else break;
  }
  std::string text(value < 0 ? "-" : "");
  text += three_figures(magnitude / chosen->factor);
  const std::string suffix = replace_unit ? std::string(chosen->label) : chosen->label + std::string(unit);
  if (!suffix.empty()) text += " " + suffix;
  return text;
}

std::string with_thousands(double value) {
  const double rounded = std::round(value);
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(rounded));
  std::string body(digits), out;
  const std::size_t n = body.size();
  for (std::size_t i = 0; i < n; ++i) {
    out += body[i];
    if ((n - i - 1) % 3 == 0 && i + 1 < n) out += ',';
  }
  return (rounded < 0 ? "-" : "") + out;
}

constexpr std::array<Scale, 7> kSeconds{{{1e-9, "ns"}, {1e-6, "µs"}, {1e-3, "ms"}, {1, "s"},
                                          {60, "min"}, {3600, "h"}, {86400, "d"}}};
constexpr std::array<Scale, 6> kBinary{{{1, ""}, {1024.0, "Ki"}, {1048576.0, "Mi"}, {1073741824.0, "Gi"},
                                         {1099511627776.0, "Ti"}, {1125899906842624.0, "Pi"}}};
constexpr std::array<Scale, 7> kDecimal{{{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}, {1e12, "T"},
                                          {1e15, "P"}, {1e18, "E"}}};

}  // namespace

std::string format_human(double value, NumberStyle style, int decimals, std::string_view unit) {
  if (!std::isfinite(value)) return non_finite(value);
  switch (style) {
    case NumberStyle::fixed: return fixed(value, decimals);
    case NumberStyle::integer: return with_thousands(value);
    case NumberStyle::percent: return fixed(value * 100.0, decimals) + "%";
    case NumberStyle::engineering:
      if (unit == "s") return scaled(value, kSeconds, true, unit);
      if (unit == "B") return scaled(value, kBinary, false, unit);
      return scaled(value, kDecimal, false, unit);
  }
  return fixed(value, decimals);
}

std::string format_raw(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string snake_case(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::string unit_key(std::string_view unit) {
  std::string out;
  std::size_t start = 0;
  while (start <= unit.size()) {
    const std::size_t slash = unit.find('/', start);
    const std::string_view part = unit.substr(start, slash == std::string_view::npos ? unit.npos : slash - start);
    std::string key = part == "B" ? "bytes" : part == "FLOP" ? "flops" : snake_case(part);
    if (!out.empty() && !key.empty()) out += "_per_";
    out += key;
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (const char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++width;  // skip UTF-8 continuation bytes
  }
  return width;
}

}  // namespace trainplan::report
