// One function per subcommand, each in its own file, each adding itself to the
// app. The cli layer is thin: parse flags, call the library, render, exit code.
// add_all_commands adds every one: the list of commands the `trainplan` program
// and the Python module share.
#pragma once
#include <CLI/CLI.hpp>

namespace trainplan::cli {

void add_list_command(CLI::App& app);
void add_estimate_command(CLI::App& app);
void add_export_command(CLI::App& app);  // trainplan export: a plan as a launcher config
void add_calibrate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_fit_command(CLI::App& calibrate);  // adds `calibrate fit`
void add_search_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_compare_command(CLI::App& app);

void add_all_commands(CLI::App& app);
// Adds -q,--quiet to every leaf command that has none (no progress bar to hide).
void accept_quiet_everywhere(CLI::App& command);

// For CLI11's "The following arguments were not expected: ..." after a parse:
// the chosen (sub)command's long option nearest the first unknown flag
// ("--tpp" -> "--tp"); empty when there is none close.
std::string closest_option(const CLI::App& app, const std::string& extras_message);

}  // namespace trainplan::cli
