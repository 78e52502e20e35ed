// run_cli: runs the built trainplan binary (TRAINPLAN_BINARY) with `args`,
// standard input closed, and returns its exit code (-1 when it did not exit
// normally, e.g. killed by a signal) and its standard output and error
// together. Optional limits (the shell's ulimit, i.e. setrlimit before exec)
// cap its address space (RLIMIT_AS) and CPU seconds (RLIMIT_CPU).
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <string>

namespace trainplan::cli::testing {

struct Outcome {
  int code;
  std::string out;  // stdout and stderr together
};

struct Limits {
  std::uint64_t address_space_bytes = 0;  // 0: unlimited
  int cpu_seconds = 0;                    // 0: unlimited
};

inline Outcome run_cli(const std::string& args, const Limits& limits = {}) {
  std::string command;
  if (limits.address_space_bytes > 0) command += "ulimit -v " + std::to_string(limits.address_space_bytes >> 10) + " && ";
  if (limits.cpu_seconds > 0) command += "ulimit -t " + std::to_string(limits.cpu_seconds) + " && ";
  command += std::string(TRAINPLAN_BINARY) + " " + args + " 2>&1 </dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer{};
  while (std::size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace trainplan::cli::testing
