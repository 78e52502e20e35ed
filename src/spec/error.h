// SpecError: the one exception type that crosses layers. It names the file,
// the JSON path of the bad field and what was expected, so the CLI can print
// one line and exit 2 (what() escapes control characters and shortens each
// part: spec/one_line.h). Everything below cli throws this, never prints.
#pragma once
#include <stdexcept>
#include <string>

#include "spec/one_line.h"

namespace trainplan::spec {

class SpecError : public std::runtime_error {
 public:
  SpecError(std::string file, std::string json_path, std::string expected)
      : std::runtime_error(one_line(file) + ": " + (json_path.empty() ? std::string() : one_line(json_path) + ": ") +
                           one_line(expected)),
        file_(std::move(file)), json_path_(std::move(json_path)), expected_(std::move(expected)) {}
  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_, json_path_, expected_;
};

}  // namespace trainplan::spec
