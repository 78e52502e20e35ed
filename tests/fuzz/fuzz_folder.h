// A temporary folder of the fuzz process's own, created on first use and
// removed at exit: parallel runs (ctest's replays in two build trees,
// libFuzzer's -jobs) never write each other's files. A relative
// TRAINPLAN_ROOT is made absolute first, so that a target that runs the
// loader inside the folder still finds the repository's data.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace trainplan::fuzz {

inline const std::filesystem::path*& own_folder_slot() {
  static const std::filesystem::path* folder = nullptr;
  return folder;
}

// `target` names the folder (trainplan-fuzz-<target>-pid<PID>), apart from
// setup/fuzz.sh's scratch folders (trainplan-fuzz-<target>.XXXXXX).
inline const std::filesystem::path& own_folder(const std::string& target) {
  if (!own_folder_slot()) {
    if (const char* root = std::getenv("TRAINPLAN_ROOT"); root && *root)
      setenv("TRAINPLAN_ROOT", std::filesystem::absolute(root).c_str(), 1);
    // Never destroyed: the handler removing it at exit runs after static destructors.
    own_folder_slot() = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                                  ("trainplan-fuzz-" + target + "-pid" + std::to_string(getpid())));
    std::filesystem::create_directories(*own_folder_slot());
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(*own_folder_slot(), ec);
    });
  }
  return *own_folder_slot();
}

}  // namespace trainplan::fuzz
