// Typed values out of a launcher config's text, each refused with the file,
// the option and what was expected (spec::SpecError), never a silent default.
#pragma once
#include <string>

namespace trainplan::exporting {

// A whole number in [min, max]: "8" -> 8.
long whole_number(const std::string& text, const std::string& file, const std::string& option, long min, long max);
// A real number: "0.1" -> 0.1.
double real_number(const std::string& text, const std::string& file, const std::string& option);
// true/false, True/False, 1/0.
bool boolean(const std::string& text, const std::string& file, const std::string& option);

}  // namespace trainplan::exporting
