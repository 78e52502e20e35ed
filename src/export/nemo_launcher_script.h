// A NeMo-Framework-Launcher run script, as NVIDIA/NeMo-Framework-Launcher@26e42fa9
// examples/training/*/*/*.sh write them: `python3 .../launcher_scripts/main.py
// training=GROUP/NAME training.key=value ...`. The launcher composes the training config
// launcher_scripts/conf/training/GROUP/NAME.yaml with the script's `training.*` overrides
// and runs NeMo on it; this finds that config and those overrides in a parsed script.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "export/shell_args.h"

namespace trainplan::exporting {

struct LauncherRun {
  std::string config_path;             // the training config the script names
  std::vector<std::string> overrides;  // its training.* items, as written (read_nemo strips `training.`)
  std::vector<std::string> ignored;    // the launcher's own items (stages, data_dir, cluster ...)
};

// An override of the launcher's `training` group (`training.a.b=v`, `+training.a.b=v`,
// `~training.a.b`) as it applies to the training config itself (`a.b=v`, ...); "" for any other item.
std::string training_group_item(const std::string& item);

// The run `script` (from `file`) makes, or nothing where it runs no launcher main.py with a
// `training=` choice. The config's folder is launcher_scripts_path=, else main.py's own.
std::optional<LauncherRun> nemo_launcher_run(const ShellArgs& script, const std::string& file);

}  // namespace trainplan::exporting
