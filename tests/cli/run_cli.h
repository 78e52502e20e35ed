// run_cli: runs the built trainplan binary (TRAINPLAN_BINARY) with `args`,
// standard input closed, and returns its exit code (-1 when it did not exit
// normally) and its standard output and error together.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tp::cli::testing {

struct Outcome {
  int code;
  std::string out;  // stdout and stderr together
};

inline Outcome run_cli(const std::string& args) {
  const std::string command = std::string(TRAINPLAN_BINARY) + " " + args + " 2>&1 </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace tp::cli::testing
