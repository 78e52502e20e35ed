#include "cli/query.h"

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace trainplan::cli {
namespace {

std::string key_of(const CLI::Option& option) {
  std::string name = option.get_lnames().empty() ? option.get_name() : option.get_lnames().front();
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

// CLI11 names the type it parses into: "INT", "UINT", "FLOAT", "TEXT" (with any check text after a ':').
nlohmann::ordered_json typed(const std::string& text, const std::string& type_name) {
  const std::string type = type_name.substr(0, type_name.find(':'));
  if (type == "INT" || type == "UINT") {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == 0 && end != text.c_str() && *end == '\0') return v;
  }
  if (type == "FLOAT") {
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (errno == 0 && end != text.c_str() && *end == '\0') return v;
  }
  return text;
}

}  // namespace

nlohmann::ordered_json query_of(const CLI::App& command) {
  nlohmann::ordered_json query = nlohmann::ordered_json::object();
  for (const CLI::Option* option : command.get_options()) {
    const std::string key = key_of(*option);
    if (key == "help" || key == "help_all" || key == "format" || key.empty()) continue;
    if (option->get_expected_max() == 0) {  // a flag
      query[key] = option->count() > 0;
      continue;
    }
    std::string text;
    if (option->count() > 0) {
      const auto& results = option->results();
      for (std::size_t i = 0; i < results.size(); ++i) text += (i ? "," : "") + results[i];
    } else {
      text = option->get_default_str();
    }
    if (option->count() == 0 && text.empty()) {
      query[key] = nullptr;
      continue;
    }
    query[key] = typed(text, option->get_type_name());
  }
  return query;
}

report::JsonDocument json_document(const CLI::App& command, int version) {
  std::string name = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent && parent->get_parent(); parent = parent->get_parent())
    name = parent->get_name() + "_" + name;
  return {name, version, query_of(command).dump()};
}

}  // namespace trainplan::cli
