#include "report/prose_wrap.h"

#include <sstream>

#include "report/number_format.h"

namespace trainplan::report {

std::string wrap_prose(const std::string& prose) {
  if (prose.empty()) return "\n";
  std::string out;
  std::istringstream lines(prose);
  for (std::string text; std::getline(lines, text);) {
    if (display_width(text) <= kTextWidth) {
      out += text + '\n';
      continue;
    }
    std::istringstream words(text);
    std::string line;
    for (std::string word; words >> word;) {
      if (!line.empty() && display_width(line) + 1 + display_width(word) > kTextWidth) {
        out += line + '\n';
        line = " ";
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out += line + '\n';
  }
  return out;
}

}  // namespace trainplan::report
