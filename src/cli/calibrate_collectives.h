// `trainplan calibrate collectives` (MPI, calibrate_collectives.cpp) and
// `trainplan calibrate import --collectives` (vendor logs, calibrate_import.cpp):
// each adds itself under the `calibrate` command.
#pragma once
#include <CLI/CLI.hpp>

namespace trainplan::cli {

void add_collectives_command(CLI::App& calibrate);
void add_import_command(CLI::App& calibrate);

}  // namespace trainplan::cli
