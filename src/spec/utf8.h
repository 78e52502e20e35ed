// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates, nothing past
// U+10FFFF. Every text file the tool reads is held to it (spec/text_file.h),
// and names it writes into its own files (a log's path, a host name).
#pragma once
#include <cstddef>
#include <string_view>

namespace trainplan::spec {

// The offset of the first byte that does not continue valid UTF-8; npos when all do.
std::size_t first_non_utf8_byte(std::string_view text);
inline bool is_utf8(std::string_view text) { return first_non_utf8_byte(text) == std::string_view::npos; }

}  // namespace trainplan::spec
