// Helpers shared by the fuzz targets: the input bytes as text, its lines, and
// FUZZ_EXPECT, which reports a broken property and aborts, so libFuzzer (or
// replay_main) records the input as a finding. No exception is caught here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace trainplan::fuzz {

inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// One string per line, each cut at its first NUL byte (a command-line argument cannot hold one).
inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start <= text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    lines.emplace_back(line.substr(0, line.find('\0')));
    start = end + 1;
  }
  return lines;
}

}  // namespace trainplan::fuzz

#define FUZZ_EXPECT(condition)                                                                 \
  do {                                                                                         \
    if (!(condition)) {                                                                        \
      std::fprintf(stderr, "fuzz property broken: %s (%s:%d)\n", #condition, __FILE__, __LINE__); \
      std::abort();                                                                            \
    }                                                                                          \
  } while (false)
