// Launcher configs on the command line: --emit FORMAT --emit-to PATH writes a
// plan in a stack's own format (src/export), and --from-config FILE / --like
// FILE fill a command's scenario and plan from one. A flag given beside a file
// that states the same thing differently is refused, naming both.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/scenario.h"
#include "export/launch_config.h"

namespace tp::cli {

struct EmitOptions {
  std::string format;  // megatron | nemo | nxd | deepspeed; empty: nothing emitted
  std::string to;      // the file to write; "-" or empty: standard output (one-file formats)
  std::string to_flag = "--emit-to";  // the flag that named `to`, for messages (export's is --out)
};
void add_emit_options(CLI::App* command, EmitOptions& options);
// Refuses an unusable --emit-to before any work (folder missing, deepspeed to standard output).
void check_emit_options(const EmitOptions& options);

// Writes `plan` of `scenario` in the --emit format; returns the files written
// (none when printed to standard output).
std::vector<std::string> emit_launch_config(const EmitOptions& options, const app::Scenario& scenario, const spec::Plan& plan);

// How a command takes the file's plan: as the job itself (estimate, export:
// a plan flag given beside the file must agree with it), or as the reference
// that search ranks alternatives against (search's plan flags narrow freely).
enum class LaunchUse { job, reference };

// Reads `file` and fills `scenario` and `plan` from it, checking the flags of
// `command` that were given against what the file states. Returns what was read.
exporting::ReadLaunch apply_launch_config(const std::string& file, const CLI::App& command, app::ScenarioOptions& scenario,
                                          app::PlanOptions& plan, LaunchUse use = LaunchUse::job);

}  // namespace tp::cli
