// Launcher configs on the command line: --emit FORMAT --emit-to PATH writes a
// plan in a stack's own format (src/export), and --from-config FILE / --like
// FILE fill a command's scenario and plan from one. A flag given beside a file
// that states the same thing differently is refused, naming both.
#pragma once
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "app/launch.h"
#include "cli/scenario.h"
#include "export/launch_config.h"

namespace trainplan::cli {

struct EmitOptions {
  std::string format;  // a launch_format_names() entry; empty: nothing emitted
  std::string to;      // the file to write; "-" or empty: standard output (one-file formats)
  std::string to_flag = "--emit-to";  // the flag that named `to`, for messages (export's is --out)
};
// The formats --emit and export's --to take (exporting::launch_formats()).
std::vector<std::string> launch_format_names();
void add_emit_options(CLI::App* command, EmitOptions& options);
// Refuses an unusable --emit-to before any work (folder missing, deepspeed to standard output).
void check_emit_options(const EmitOptions& options);

// Writes `plan` of `scenario` in the --emit format; returns the files written
// (none when no file is named: the config then goes to `standard_output`).
std::vector<std::string> emit_launch_config(const EmitOptions& options, const app::Scenario& scenario, const spec::Plan& plan,
                                            std::ostream& standard_output);

// `flag` FILE (--from-config, --like), described by `description`, into `file`, and beside it
// --set ITEM...: what the launch adds to that file on its own command line (Hydra overrides of a
// NeMo or NxD YAML, NAME=VALUE in a script's environment), into `overrides`.
void add_launch_config_option(CLI::App* command, const std::string& flag, std::string& file,
                              std::vector<std::string>& overrides, const std::string& description);

// app::apply_launch_config with the flags given on `command` and its --set items, where it has them.
exporting::ReadLaunch apply_launch_config(const std::string& file, const CLI::App& command, app::ScenarioOptions& scenario,
                                          app::PlanOptions& plan, app::LaunchUse use = app::LaunchUse::job);

}  // namespace trainplan::cli
