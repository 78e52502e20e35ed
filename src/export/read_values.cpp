#include "export/read_values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "spec/error.h"

namespace trainplan::exporting {

long whole_number(const std::string& text, const std::string& file, const std::string& option, long min, long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0' || v < min || v > max)
    throw spec::SpecError(file, option,
                          "a whole number in " + std::to_string(min) + ".." + std::to_string(max) + ", found '" + text + "'");
  return long(v);
}

double real_number(const std::string& text, const std::string& file, const std::string& option) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v))
    throw spec::SpecError(file, option, "a number, found '" + text + "'");
  return v;
}

bool boolean(const std::string& text, const std::string& file, const std::string& option) {
  if (text == "true" || text == "True" || text == "1") return true;
  if (text == "false" || text == "False" || text == "0") return false;
  throw spec::SpecError(file, option, "true or false, found '" + text + "'");
}

}  // namespace trainplan::exporting
