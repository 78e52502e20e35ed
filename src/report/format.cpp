#include "report/format.h"

#include <string>

#include "spec/error.h"

namespace trainplan::report {

Format parse_format(std::string_view word) {
  if (word == "text") return Format::text;
  if (word == "markdown") return Format::markdown;
  if (word == "csv") return Format::csv;
  if (word == "json") return Format::json;
  throw spec::SpecError("--format", "", "one of text|markdown|csv|json, not '" + std::string(word) + "'");
}

const char* to_string(Format format) {
  switch (format) {
    case Format::text: return "text";
    case Format::markdown: return "markdown";
    case Format::csv: return "csv";
    case Format::json: return "json";
  }
  return "?";
}

}  // namespace trainplan::report
