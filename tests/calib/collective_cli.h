// Helpers for the tests that run the trainplan binary on collectives: a shell
// command's exit code and output, a scratch folder, and the rows of a table
// from `--format csv` output keyed by column.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace trainplan::calib::testing {

struct Outcome {
  int code = -1;
  std::string out;  // stdout and stderr together
};

inline Outcome shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1 </dev/null").c_str(), "r");
  Outcome o;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) o.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainplan-" + name + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline std::string fixture(const std::string& name) {
  return std::string(TRAINPLAN_SOURCE_DIR) + "/tests/calib/fixtures/" + name;
}

// The rows of the csv block whose header starts with `first_key` (no quoted commas in its cells);
// lines of another width (stderr interleaved by mpirun) are skipped.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& out, const std::string& first_key) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(out);
  std::vector<std::string> keys;
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    return cells;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (!keys.empty()) break;
      continue;
    }
    if (keys.empty()) {
      if (line.rfind(first_key + ",", 0) == 0) keys = split(line);
      continue;
    }
    const auto cells = split(line);
    if (cells.size() != keys.size()) continue;  // a line from another stream
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < keys.size() && i < cells.size(); ++i) row[keys[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

}  // namespace trainplan::calib::testing
