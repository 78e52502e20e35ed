// Format: the four renderings every report offers. parse_format accepts
// exactly "text", "markdown", "csv" or "json" (lower case) and throws
// trainplan::spec::SpecError naming the accepted words for anything else.
#pragma once
#include <string_view>

namespace trainplan::report {

enum class Format { text, markdown, csv, json };

Format parse_format(std::string_view word);
const char* to_string(Format format);

}  // namespace trainplan::report
