#include "cli/validators.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace trainplan::cli {

CLI::Validator whole_in(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const long long v = std::stoll(text, &used);
          // Plain digits only: CLI11 then reads the same number (it takes 010 as octal 8 and refuses 08).
          if (used == text.size() && v >= lo && v <= hi && text == std::to_string(v)) return {};
        } catch (const std::exception&) {
        }
        return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
               " in plain digits, got '" + text + "'";
      },
      "INT in " + std::to_string(lo) + ".." + std::to_string(hi));
}

namespace {

// A finite number at or above zero, zero itself allowed or not.
CLI::Validator finite_from_zero(bool zero_allowed, const std::string& expected, const std::string& type) {
  return CLI::Validator(
      [zero_allowed, expected](std::string& text) -> std::string {
        try {
          std::size_t used = 0;
          const double v = std::stod(text, &used);
          if (used == text.size() && std::isfinite(v) && (v > 0 || (zero_allowed && v == 0))) return {};
        } catch (const std::exception&) {
        }
        return "expected " + expected + ", got '" + text + "'";
      },
      type);
}

}  // namespace

CLI::Validator non_negative() { return finite_from_zero(true, "a number of at least 0", "NUMBER >= 0"); }

CLI::Validator positive_number() { return finite_from_zero(false, "a number above 0", "NUMBER > 0"); }

CLI::Validator non_empty_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "expected a value, got an empty one" : ""; }, "");
}

CLI::Validator thread_count() {
  const unsigned hardware_threads = std::thread::hardware_concurrency();
  const long long most = std::max(64LL, 4LL * hardware_threads);
  return CLI::Validator(
      [whole = whole_in(0, most), most, hardware_threads](std::string& text) {
        const std::string why = whole(text);
        return why.empty() ? why
                           : why + " (this machine runs " + std::to_string(hardware_threads) +
                                 " hardware threads; up to " + std::to_string(most) + " workers are allowed)";
      },
      "");
}

}  // namespace trainplan::cli
