// Reading benchmark logs line by line: lines split into whitespace tokens,
// and fields read strictly. A field that does not parse throws
// SpecError("<file>:<line>", <field>, "<what was expected>, got '<token>'"),
// one line naming the file, the line, the column and the expectation.
#pragma once
#include "spec/utf8.h"
#include <string>
#include <string_view>
#include <vector>

namespace trainplan::calib {

struct LogLine {
  int number = 0;  // 1-based
  std::string text;
  std::vector<std::string> tokens;
};

std::vector<LogLine> log_lines(const std::string& text);  // \n or \r\n line ends
std::string log_where(const std::string& file, int line);  // "file:12"
// The line shortened for a message, quoted.
std::string log_excerpt(const std::string& text);
// Valid UTF-8 (spec/utf8.h): what text copied from a log into a calibration file
// must be, since nlohmann::json throws its own type_error writing anything else.
using spec::is_utf8;

bool is_whole_token(const std::string& token);  // plain decimal digits
// A finite number in C notation ("12.5", "1.0e-05"); throws SpecError otherwise.
double log_number(const std::string& token, const std::string& file, int line, const std::string& field);
// A whole number >= 0 in decimal digits; throws SpecError otherwise.
long long log_whole(const std::string& token, const std::string& file, int line, const std::string& field);
// A count of ranks or nodes: a whole number from 1 to 2^24 (the devices a
// plan may span, cost/plan_check.h); else SpecError naming the field.
int log_count(const std::string& token, const std::string& file, int line, const std::string& field);

}  // namespace trainplan::calib
