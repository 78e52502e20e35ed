// Prose in text output (titles, notes, assumption lines) kept to a terminal's
// kTextWidth columns: each line longer than that breaks at spaces, continuation
// lines indented two spaces; shorter lines stay as written, and a single word
// longer than the width stays whole. The result ends with a newline.
#pragma once
#include <cstddef>
#include <string>

namespace trainplan::report {

inline constexpr std::size_t kTextWidth = 120;

std::string wrap_prose(const std::string& prose);

}  // namespace trainplan::report
