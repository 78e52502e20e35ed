#include "export/header.h"

#include <sstream>

namespace trainplan::exporting {

std::string comment_word(const std::string& name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c == 0x7f || c == '%') out += {'%', kHex[c >> 4], kHex[c & 15]};
    else out += ch;
  }
  return out;
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string from_comment_word(const std::string& word) {
  std::string out;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const int high = word[i] == '%' && i + 2 < word.size() ? hex_digit(word[i + 1]) : -1;
    const int low = high >= 0 ? hex_digit(word[i + 2]) : -1;
    if (low >= 0) {
      out += static_cast<char>(high * 16 + low);
      i += 2;
    } else {
      out += word[i];
    }
  }
  return out;
}

}  // namespace

std::string header_comment(const LaunchJob& job, const FormatInfo& format) {
  const std::string model = comment_word(job.model_name), hardware = comment_word(job.hardware_name),
                    stack = comment_word(job.stack_name);
  std::ostringstream s;
  s << "# Written by trainplan for " << format.release << " (option names from " << format.source << ").\n"
    << "# " << model << " on " << job.instances << " x " << hardware << ", stack " << stack << ". " << format.to_add << "\n"
    << "# trainplan: model=" << model << " hardware=" << hardware << " stack=" << stack << "\n";
  return s.str();
}

void read_header(const std::string& text, LaunchJob& job) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t at = line.find("# trainplan:");
    if (at == std::string::npos || line.find_first_not_of(" \t") != at) continue;
    std::istringstream words(line.substr(at + 12));
    std::string word;
    while (words >> word) {
      const std::size_t eq = word.find('=');
      if (eq == std::string::npos) continue;
      const std::string key = word.substr(0, eq), value = from_comment_word(word.substr(eq + 1));
      if (key == "model") job.model_name = value;
      if (key == "hardware") job.hardware_name = value;
      if (key == "stack") job.stack_name = value;
    }
    return;
  }
}

}  // namespace trainplan::exporting
