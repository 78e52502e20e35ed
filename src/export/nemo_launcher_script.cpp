#include "export/nemo_launcher_script.h"

#include <filesystem>

namespace trainplan::exporting {
namespace fs = std::filesystem;

namespace {

// A Hydra item of the launcher's command line: key=value, +key=value, ++key=value or ~key.
bool hydra_item(const std::string& word) {
  return !word.empty() && word[0] != '-' && (word.find('=') != std::string::npos || word[0] == '~');
}

}  // namespace

std::string training_group_item(const std::string& item) {
  const std::size_t marks = item.find_first_not_of("+~");
  if (marks == std::string::npos || item.compare(marks, 9, "training.") != 0) return "";
  return item.substr(0, marks) + item.substr(marks + 9);
}

std::optional<LauncherRun> nemo_launcher_run(const ShellArgs& script, const std::string& file) {
  const std::vector<std::string>& w = script.words;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] != "launcher_scripts/main.py" && !w[i].ends_with("/launcher_scripts/main.py")) continue;
    LauncherRun run;
    std::string training, scripts_path = fs::path(w[i]).parent_path().string();
    for (std::size_t k = i + 1; k < w.size() && hydra_item(w[k]); ++k) {
      const std::string& item = w[k];
      if (item.rfind("training=", 0) == 0) training = item.substr(9);
      else if (item.rfind("launcher_scripts_path=", 0) == 0) scripts_path = item.substr(22);
      else if (!training_group_item(item).empty()) run.overrides.push_back(item);
      else run.ignored.push_back(item);
    }
    if (training.empty()) continue;
    // Relative to where the script runs from, which trainplan takes to be the script's folder.
    fs::path folder = scripts_path.empty() ? fs::path(".") : fs::path(scripts_path);
    if (folder.is_relative()) folder = fs::path(file).parent_path() / folder;
    run.config_path = (folder / "conf" / "training" / (training + ".yaml")).lexically_normal().string();
    return run;
  }
  return std::nullopt;
}

}  // namespace trainplan::exporting
