#include "cli/commands.h"
namespace tp::cli {
void add_estimate_command(CLI::App& app) { app.add_subcommand("estimate", "(in progress)"); }
}  // namespace tp::cli
