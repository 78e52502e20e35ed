#include "calib/cpu_name.h"

#include <fstream>

namespace trainplan::calib {

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown CPU";
}

}  // namespace trainplan::calib
