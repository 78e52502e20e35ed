// one_line: a text made safe to print as part of one line of a message. Control
// characters (a newline inside a value, a terminal escape sequence) are written
// as \n, \r, \t or \xHH, and a text longer than `max_bytes` is cut there with
// the count of bytes left out, so no input can break or flood the error line.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace trainplan::spec {

inline constexpr std::size_t kMessageValueBytes = 4000;

std::string one_line(std::string_view text, std::size_t max_bytes = kMessageValueBytes);

}  // namespace trainplan::spec
