#include "report/escape.h"

namespace trainplan::report {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || c == '\\') out += '\\';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out;
}

std::string gnuplot_string(std::string_view text) {
  // Inside single quotes gnuplot interprets nothing but a doubled quote.
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += '\'';
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "'";
}

}  // namespace trainplan::report
