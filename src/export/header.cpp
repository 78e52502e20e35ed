#include "export/header.h"

#include <sstream>

namespace tp::exporting {

std::string header_comment(const LaunchJob& job, const FormatInfo& format) {
  std::ostringstream s;
  s << "# Written by trainplan for " << format.release << " (option names from " << format.source << ").\n"
    << "# " << job.model_name << " on " << job.instances << " x " << job.hardware_name << ", stack " << job.stack_name
    << ". Add your data, tokenizer, optimizer and checkpoint options.\n"
    << "# trainplan: model=" << job.model_name << " hardware=" << job.hardware_name << " stack=" << job.stack_name << "\n";
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
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      if (key == "model") job.model_name = value;
      if (key == "hardware") job.hardware_name = value;
      if (key == "stack") job.stack_name = value;
    }
    return;
  }
}

}  // namespace tp::exporting
