// Escaping for each output syntax, so a title or cell can hold any text.
// csv_field: RFC 4180 (quote when the field has , " CR or LF; double quotes).
// markdown_cell: escapes | and \ and turns line breaks into spaces.
// gnuplot_string: a single-quoted gnuplot literal (quote doubled, breaks -> space).
#pragma once
#include <string>
#include <string_view>

namespace trainplan::report {

std::string csv_field(std::string_view text);
std::string markdown_cell(std::string_view text);
std::string gnuplot_string(std::string_view text);

}  // namespace trainplan::report
