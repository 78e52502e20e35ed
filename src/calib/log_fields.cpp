#include "calib/log_fields.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "spec/error.h"

namespace trainplan::calib {

std::vector<LogLine> log_lines(const std::string& text) {
  std::vector<LogLine> out;
  std::size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    LogLine line;
    line.number = ++number;
    line.text = text.substr(start, end - start);
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
    // Words as `>>` splits them (C-locale white space), without a stream per line:
    // a 100,000-row log is read in well under a second.
    const std::string& t = line.text;
    for (std::size_t at = 0; at < t.size();) {
      while (at < t.size() && std::isspace(static_cast<unsigned char>(t[at]))) ++at;
      std::size_t word_end = at;
      while (word_end < t.size() && !std::isspace(static_cast<unsigned char>(t[word_end]))) ++word_end;
      if (word_end > at) line.tokens.push_back(t.substr(at, word_end - at));
      at = word_end;
    }
    out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

std::string log_where(const std::string& file, int line) { return file + ":" + std::to_string(line); }

std::string log_excerpt(const std::string& text) {
  std::string t;
  for (char c : text) t += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  const std::size_t first = t.find_first_not_of(' ');
  t = first == std::string::npos ? std::string() : t.substr(first);
  if (t.size() > 72) t = t.substr(0, 69) + "...";
  return "'" + t + "'";
}


bool is_whole_token(const std::string& token) {
  if (token.empty() || token.size() > 18) return false;
  for (char c : token)
    if (c < '0' || c > '9') return false;
  return true;
}

double log_number(const std::string& token, const std::string& file, int line, const std::string& field) {
  errno = 0;
  char* end = nullptr;
  const double v = token.empty() ? 0 : std::strtod(token.c_str(), &end);
  const bool alpha = !token.empty() && (std::isalpha(static_cast<unsigned char>(token[0])) != 0);  // inf, nan
  const bool underflow = errno == ERANGE && std::isfinite(v) && std::fabs(v) < 1;  // 4.5e-323 is finite
  if (token.empty() || alpha || end != token.c_str() + token.size() || (errno == ERANGE && !underflow) ||
      !std::isfinite(v))
    throw spec::SpecError(log_where(file, line), field, "a finite number, got " + log_excerpt(token));
  if (underflow)
    throw spec::SpecError(log_where(file, line), field,
                          "a number zero or above 1e-300 in size (too small to compute with), got " + log_excerpt(token));
  return v;
}

long long log_whole(const std::string& token, const std::string& file, int line, const std::string& field) {
  if (!is_whole_token(token))
    throw spec::SpecError(log_where(file, line), field, "a whole number of at most 18 digits, got " + log_excerpt(token));
  return std::stoll(token);
}

int log_count(const std::string& token, const std::string& file, int line, const std::string& field) {
  constexpr long long kMaxCount = 1LL << 24;
  const long long n = log_whole(token, file, line, field);
  if (n < 1 || n > kMaxCount)
    throw spec::SpecError(log_where(file, line), field,
                          "a count from 1 to " + std::to_string(kMaxCount) + ", got " + log_excerpt(token));
  return int(n);
}

}  // namespace trainplan::calib
