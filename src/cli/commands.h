// One function per subcommand, each in its own file, each adding itself to the
// app. The cli layer is thin: parse flags, call the library, render, exit code.
// add_all_commands adds every one: the list of commands the `trainplan` program
// and the Python module share, the module's own with the run each parse feeds.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <string>

#include "cli/command_output.h"

namespace trainplan::cli {

// A command the Python module offers: its options on the app, no callback, and the
// run that turns what the app parsed into its output.
struct SharedCommand {
  CLI::App* command = nullptr;
  CommandRun run;
};

SharedCommand add_list_command(CLI::App& app);
SharedCommand add_estimate_command(CLI::App& app);
void add_export_command(CLI::App& app);  // trainplan export: a plan as a launcher config
void add_calibrate_command(CLI::App& app);
SharedCommand add_validate_command(CLI::App& app);
void add_fit_command(CLI::App& calibrate);  // adds `calibrate fit`
SharedCommand add_search_command(CLI::App& app);
SharedCommand add_sweep_command(CLI::App& app);
SharedCommand add_compare_command(CLI::App& app);

// Every command in the program's order, with the same options whoever calls; returns
// the shared ones' runs by name. With `print` (the program) each shared command prints
// its output when parsed (print_when_run); without (the module) the caller runs it.
std::map<std::string, CommandRun> add_all_commands(CLI::App& app, bool print = true);
// Adds -q,--quiet to every leaf command that has none (no progress bar to hide).
void accept_quiet_everywhere(CLI::App& command);
// Every option that takes a value refuses an empty one, in every subcommand.
void refuse_empty_values(CLI::App& command);

// For CLI11's "The following arguments were not expected: ..." after a parse:
// the chosen (sub)command's long option nearest the first unknown flag
// ("--tpp" -> "--tp"); empty when there is none close.
std::string closest_option(const CLI::App& app, const std::string& extras_message);

}  // namespace trainplan::cli
